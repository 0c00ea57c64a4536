"""The start of a `flowers-mandala` match: the deal drawn, and the starting state made from a
deal, from a setup or from a seat's observation (see engine/games/flowers_mandala.py).

A seeded match deals colour codes and goes to the state without writing the deal out as
names: a random playout never asks for its setup, and names cost a tenth of a short game.
"""
from __future__ import annotations

import random
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from engine.games.flowers_mandala_rules import (ALL_COLOURS, COLOUR_INDEX, COLOURS,
                                                DARK_COLOURS, LIGHT_COLOURS, MANDALAS, NO_SEAT,
                                                TILE, all_tiles, colour_bits,
                                                parse_tile_values)
from engine.games.flowers_mandala_state import FlowersMandalaState
from engine.shuffle import shuffle

if TYPE_CHECKING:
    from engine.games.flowers_mandala import FlowersMandala


class Deal(NamedTuple):
    """A deal as it was drawn, before it is written out as a setup (`setup`)."""

    cards: list[int]        # colour codes: hand_size per seat, seat by seat, then the deck
    dark: list[str]         # the dark tiles: a centre tile per mandala, then the stack
    light: list[str]        # ...and the light ones
    hand_size: int

    def as_setup(self, players: int) -> dict[str, Any]:
        """The setup form of docs/notation.md (hands sorted: codes sort like the names)."""
        cards, dark, light, size = self
        return {"hands": [[COLOURS[c] for c in sorted(cards[seat * size:(seat + 1) * size])]
                          for seat in range(players)],
                "deck": [COLOURS[c] for c in cards[players * size:]],
                "centres": [[dark[m], light[m]] for m in range(MANDALAS)],
                "dark": dark[MANDALAS:], "light": light[MANDALAS:]}


@lru_cache(maxsize=32)
def _sorted_cards(per_colour: int) -> tuple[int, ...]:
    """The deck before the shuffle: colour codes in order, per_colour of each."""
    return tuple(colour for colour in range(len(COLOURS)) for _ in range(per_colour))


@lru_cache(maxsize=32)
def _sorted_tiles(tile_values: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The dark and the light tiles before the shuffle, for the option `tile_values`."""
    values = parse_tile_values(tile_values)
    return tuple(all_tiles(DARK_COLOURS, values)), tuple(all_tiles(LIGHT_COLOURS, values))


def draw_deal(options: Mapping[str, Any], rng: random.Random) -> Deal:
    """The deck shuffled, then the dark and the light tiles (the draws of the rules file)."""
    cards = list(_sorted_cards(options["cards_per_colour"]))
    shuffle(cards, rng)             # rng.shuffle's order and draws, faster
    dark, light = (list(tiles) for tiles in _sorted_tiles(options["tile_values"]))
    shuffle(dark, rng)
    shuffle(light, rng)
    return Deal(cards, dark, light, options["hand_size"])


def dealt_state(game: FlowersMandala, players: int, options: dict[str, Any],
                rng: random.Random) -> FlowersMandalaState:
    """A match from a deal drawn with rng: the state `from_setup(deal.as_setup(players))` makes."""
    deal = draw_deal(options, rng)
    cards, dark, light, size = deal
    state = FlowersMandalaState.blank(game, players, options)
    state.deal = deal
    hands = state.hands = []
    for seat in range(players):
        counts = [0] * len(COLOURS)
        for colour in cards[seat * size:(seat + 1) * size]:
            counts[colour] += 1
        hands.append(counts)
    state.hand_totals = [size] * players
    state.deck = cards[:players * size - 1:-1]   # top at the end
    _lay_tiles(state, [[dark[m], light[m]] for m in range(MANDALAS)], dark[:MANDALAS - 1:-1],
               light[:MANDALAS - 1:-1])
    return state


def from_setup(game: FlowersMandala, players: int, options: dict[str, Any],
               setup: Mapping[str, Any]) -> FlowersMandalaState:
    """The start of a match from a setup that has been checked (it is copied)."""
    state = FlowersMandalaState.blank(game, players, options)
    state.setup = {key: [list(item) if isinstance(item, list) else item for item in setup[key]]
                   for key in setup}
    state.hands = []
    for hand in setup["hands"]:
        counts = [0] * len(COLOURS)
        for card in hand:
            counts[COLOUR_INDEX[card]] += 1
        state.hands.append(counts)
    state.hand_totals = [len(hand) for hand in setup["hands"]]
    state.deck = [COLOUR_INDEX[card] for card in reversed(setup["deck"])]  # top at the end
    _lay_tiles(state, [list(pair) for pair in setup["centres"]], list(reversed(setup["dark"])),
               list(reversed(setup["light"])))
    return state


def _lay_tiles(state: FlowersMandalaState, centres: list[list[str]], dark: list[str],
               light: list[str]) -> None:
    """The centre tiles of each mandala and the two stacks (top at the end)."""
    state.dark = dark
    state.light = light
    state.centres = list(centres)
    state.present = [colour_bits(pair) for pair in centres]


def from_view(game: FlowersMandala, options: dict[str, Any], view: Mapping[str, Any],
              hands: list[list[str]], deck: list[str],
              stacks: list[list[str]]) -> FlowersMandalaState:
    """The state an observation shows, with every hand, the deck (top last) and the tile
    stacks (top last) given. Only decisions of a seat are views: no chance is pending."""
    def counts(cards: list[str]) -> list[int]:
        result = [0] * len(COLOURS)
        for card in cards:
            result[COLOUR_INDEX[card]] += 1
        return result

    players = view["players"]
    state = FlowersMandalaState.__new__(FlowersMandalaState)
    state.game = game
    state.players = players
    state.options = dict(options)
    state.deal = None
    state.setup = {}                    # a determinised state has no starting deal
    state.up_to_4 = options["draw_rule"] == "up-to-4"
    state.hands = [counts(hand) for hand in hands]
    state.hand_totals = [len(hand) for hand in hands]
    state.known = [counts(known["cards"]) for known in view["known_hands"]]
    state.deck = [COLOUR_INDEX[card] for card in deck]
    state.discard = counts(view["discard"])
    state.discard_total = len(view["discard"])
    state.dark, state.light = (list(stack) for stack in stacks)
    mandalas = view["mandalas"]
    state.centres = [[m["dark_tile"], m["light_tile"]] if m["dark_tile"] else None
                     for m in mandalas]
    state.present = [sum(1 << COLOUR_INDEX[c] for c in m["present"]) for m in mandalas]
    state.up = [[counts(side["face_up"]) for side in m["sides"]] for m in mandalas]
    state.down = [[counts(side["face_down"]) for side in m["sides"]] for m in mandalas]
    state.cards_on = [[len(side["face_up"]) + len(side["face_down"]) for side in m["sides"]]
                      for m in mandalas]
    state.up_on = [[len(side["face_up"]) for side in m["sides"]] for m in mandalas]
    state.claims = [m["claim"] for m in mandalas]
    state.singles = [list(t["singles"]) for t in view["tableaus"]]
    state.flowers = [[tuple(f["tiles"]) for f in t["flowers"]] for t in view["tableaus"]]
    state.left_game = list(view["left_game"])
    state.turn = view["turn"]
    state.passes = view["passes"]
    state.draw_left = 0
    # A decision never falls in a turn whose end is already due: a stack running out or a
    # third flower ends the game at the end of the turn that caused it.
    state.stack_out = state.third_flower = False
    state.end_candidates = []
    state.end_queue = list(view["end_order"])
    phase = view["decision"]
    destroying = view["destroying"]
    if phase == TILE:
        # A tile choice in play follows a completed mandala; at the end, mandalas are
        # destroyed as they stand, never complete (completing one destroys it at once).
        state.ending = bool(state.end_queue) or state.present[destroying] != ALL_COLOURS
        state.active = destroying
        state.pending = (destroying, view["to_move"], view["second"])
    else:
        state.ending = False
        state.active = NO_SEAT
        state.pending = (NO_SEAT, NO_SEAT, NO_SEAT)
    state.phase = phase
    state.set_phase(phase)
    return state
