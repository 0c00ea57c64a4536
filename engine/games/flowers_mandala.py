"""Flowers: A Mandala Game (`flowers-mandala`), 2 to 4 players (docs/rules/flowers-mandala.md).

Players play cards of one colour onto one of three mandalas. A colour new to the mandala goes
face up, a present colour face down; the player with strictly the most cards there (and at
least one face up) holds its claim marker. When the two centre tiles and the cards on a
mandala show all six colours it is destroyed: the claim holder chooses one of its two
half-flower tiles, the second player (most cards among the other players with a face-up
card, ties to more face-up cards) gets the other one, or the holder takes both. Two tiles of
one colour pair at once into a flower. The game ends at the end of the turn in which someone
completes a third flower, when a tile stack runs out, or when every player passes in a row;
the remaining mandalas are then destroyed in a random order and the tiles are scored.

Players: 2 to 4; seat 0 starts; turns go by seat order.

Options (see the rules file; every number Arena chose is an option):
    draw_rule         `up-to-4` (default): playing exactly one card draws until 4 drawn or 8
                      held, nothing at 8+; `two`: playing exactly one card draws 2.
    hand_size         cards dealt to each seat (6); players x hand_size must fit the deck.
    cards_per_colour  cards of each of the six colours (18).
    tile_values       the six values of each colour's tiles, one string (`1 1 2 2 3 x3`):
                      canonical integers 0 to 99, or `x3`.

Colours: dark `grey purple red`, light `green orange yellow`. Tiles are written
`COLOUR:VALUE` (`grey:2`, `red:x3`).

Moves (docs/notation.md notation):
    play M COLOUR N   play N >= 1 cards of COLOUR onto mandala M (0, 1 or 2). N >= 2 may not
                      empty the hand; a single last card may always be played.
    pass              only when the seat to move holds no card.
    tile dark|light   the claim holder of the mandala being destroyed keeps that tile (the
                      other goes to the second player). It is that seat's decision even when
                      it is not its turn: `to_move()` returns the holder.
    deck C1 C2 ...    chance: the discard pile reshuffled into a new deck, top card first.
    order A B [C]     chance: the order of the end-of-game destructions.

Chance nodes (`to_move()` is CHANCE; `sample_chance(rng)` draws the outcome):
    `order`: `legal_moves()` lists every ordering of the mandalas still to destroy (sorted).
    `deck`: the orderings of the discard pile are too many to list, so `legal_moves()`
    returns [] there and `apply` accepts exactly `deck` followed by some ordering of the
    discard pile's cards as it is at that moment; anything else is an IllegalMoveError.

Readings of the rules file made here: when a third flower ends the game while the stacks
still hold tiles, step 6 has already put new tiles on the destroyed mandala; they stay there
unscored and only the other two mandalas are destroyed (`order A B`). A destruction at the
game's end puts no new tiles on its mandala. In two-player games the opponent of a holder
who completes a mandala can never hold half its cards (a face-up player with more cards
than the holder would have taken the claim), so that holder always takes both tiles.

Observation (proto `FlowersMandalaObservation`, proto/arena/v1/flowers_mandala.proto): the
seat's own hand; for every seat its hand size, the cards everyone knows it holds (cards
taken back from a mandala and not since played), its tiles, flowers and points; every
mandala with its tiles, claim holder and each seat's face-up and face-down cards; deck,
discard pile (contents), tile-stack sizes, tiles that left the game; whose turn it is and
which decision is pending. Never the deck order, the tile stacks' order or another hand.

Version: flowers-mandala/1 (rules file docs/rules/flowers-mandala.md, 2026-11).
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any, Mapping, NoReturn, Sequence

from engine.core import Game, InvalidOptionError, InvalidSetupError, Option
from engine.games.flowers_mandala_rules import (COLOURS, DARK_COLOURS, LIGHT_COLOURS, MANDALAS,
                                                all_tiles, flower_points, parse_tile_values,
                                                single_points, tile_colour, tile_value)
from engine.games.flowers_mandala_start import dealt_state, draw_deal, from_setup, from_view
from engine.games.flowers_mandala_state import FlowersMandalaState

# What strategies and tests import from here (the game's one public module).
__all__ = ["COLOURS", "DARK_COLOURS", "LIGHT_COLOURS", "FlowersMandala", "FlowersMandalaState",
           "flower_points", "parse_tile_values", "single_points", "tile_colour", "tile_value"]


class FlowersMandala(Game):
    id = "flowers-mandala"
    title = "Flowers: A Mandala Game"
    min_players = 2
    max_players = 4
    has_chance = True
    options = (
        Option("draw_rule", "str", "up-to-4",
               "after playing exactly one card: up-to-4 draws until 4 drawn or 8 held; "
               "two draws 2", ("up-to-4", "two")),
        Option("hand_size", "int", 6, "cards dealt to each player"),
        Option("cards_per_colour", "int", 18, "cards of each of the six colours"),
        Option("tile_values", "str", "1 1 2 2 3 x3",
               "the six values of each colour's tiles (integers or x3)"),
    )

    def max_plies(self, players: int, options: Mapping[str, Any]) -> int:
        # Tiles bound the destructions: each stack holds 3 colours x 6 tiles, 3 of them are
        # placed at the start and each destruction in play places one more, so the 16th ends
        # the game; 2 more come at the end. Between two destructions no card leaves a mandala
        # and every play puts at least one there: at most a deck's worth of plays per period.
        # Each play brings at most one reshuffle (chance) and players - 1 passes before it
        # (all pass: the game ends); each destruction one tile choice; the end one `order`.
        tiles_per_stack = len(DARK_COLOURS) * len(parse_tile_values(options["tile_values"]))
        in_play = tiles_per_stack - MANDALAS + 1
        per_colour: int = options["cards_per_colour"]
        plays = in_play * per_colour * len(COLOURS)
        return plays * (players + 1) + players + (in_play + MANDALAS - 1) + 1

    def check_options(self, options: dict[str, Any], players: int) -> None:
        parse_tile_values(options["tile_values"])
        per_colour = options["cards_per_colour"]
        if not 1 <= per_colour <= 999:
            raise InvalidOptionError(
                f"option cards_per_colour must be 1 to 999, got {per_colour}")
        hand_size = options["hand_size"]
        deck = per_colour * len(COLOURS)
        if hand_size < 1 or players * hand_size > deck:
            raise InvalidOptionError(
                f"option hand_size must be 1 to {deck // players} for {players} players with "
                f"{deck} cards (cards_per_colour {per_colour}), got {hand_size}")

    def deal(self, players: int, options: dict[str, Any],
             rng: random.Random) -> dict[str, Any]:
        return draw_deal(options, rng).as_setup(players)

    def start(self, players: int, options: dict[str, Any],
              setup: Mapping[str, Any]) -> "FlowersMandalaState":
        _check_setup(players, options, setup)
        return from_setup(self, players, options, setup)

    def start_dealt(self, players: int, options: dict[str, Any],
                    rng: random.Random) -> "FlowersMandalaState":
        # Every seeded match starts here: the deal just made is legal, so unlike start it
        # goes to the state unchecked (_check_setup counts every card and tile again), and
        # as it was drawn (flowers_mandala_start writes the setup only when asked for).
        return dealt_state(self, players, options, rng)

    def determinize(self, observation: Mapping[str, Any], seat: int, rng: random.Random, *,
                    options: Mapping[str, Any] | None = None,
                    history: Sequence[Mapping[str, Any]] | None = None
                    ) -> "FlowersMandalaState":
        """See Game.determinize. Unseen: the other hands (beyond the cards known to be in
        them), the deck order and the tile stacks' order; everything played stays in view
        (face-down cards included) until it goes to the discard pile, which is shown.

        Not used: after a reshuffle the seat could know the deck is the discard pile it saw,
        but telling that pile apart from the cards already drawn needs every turn's events,
        which observations between the seat's own decisions do not show; the deck is then
        drawn from all unseen cards alike."""
        players = observation["players"]
        resolved = self.resolve_options(options, players)
        seen = list(observation["hand"]) + list(observation["discard"])
        for other in range(players):
            if other != seat:
                seen += observation["known_hands"][other]["cards"]
        for mandala in observation["mandalas"]:
            for side in mandala["sides"]:
                seen += side["face_up"] + side["face_down"]
        unseen = Counter({colour: resolved["cards_per_colour"] for colour in COLOURS})
        unseen.subtract(seen)
        hidden = [0 if other == seat else observation["hand_sizes"][other]
                  - len(observation["known_hands"][other]["cards"]) for other in range(players)]
        pool = sorted(unseen.elements())
        if min(unseen.values()) < 0 or len(pool) != sum(hidden) + observation["deck_size"]:
            raise InvalidSetupError(
                f"not a flowers-mandala observation: {len(pool)} cards unseen, but hands and "
                f"deck hide {sum(hidden) + observation['deck_size']}")
        rng.shuffle(pool)
        hands = []
        for other in range(players):
            shown = observation["hand"] if other == seat else (
                observation["known_hands"][other]["cards"] + pool[:hidden[other]])
            pool = pool[hidden[other]:]
            hands.append(shown)
        values = parse_tile_values(resolved["tile_values"])
        in_view = [tile for m in observation["mandalas"]
                   for tile in (m["dark_tile"], m["light_tile"]) if tile]
        in_view += observation["left_game"]
        for tableau in observation["tableaus"]:
            in_view += tableau["singles"]
            in_view += [tile for flower in tableau["flowers"] for tile in flower["tiles"]]
        stacks = []
        for colours, size in ((DARK_COLOURS, observation["dark_stack_size"]),
                              (LIGHT_COLOURS, observation["light_stack_size"])):
            left = Counter(all_tiles(colours, values))
            left.subtract(tile for tile in in_view if tile_colour(tile) in colours)
            tiles = sorted(left.elements())
            if min(left.values()) < 0 or len(tiles) != size:
                raise InvalidSetupError("not a flowers-mandala observation: the tiles in view "
                                        "do not leave the tile stacks' sizes")
            rng.shuffle(tiles)
            stacks.append(tiles)                # top at the end, as the state keeps them
        return from_view(self, resolved, observation, hands, pool, stacks)


def _check_setup(players: int, options: dict[str, Any], setup: Mapping[str, Any]) -> None:
    """Raises InvalidSetupError unless `setup` is a legal deal under the options."""
    def fail(why: str) -> NoReturn:
        raise InvalidSetupError(f"flowers-mandala setup: {why}")

    def string_list(value: Any, what: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            fail(f"{what} must be a list of strings")
        return value

    if not isinstance(setup, Mapping):
        fail("must be a JSON object with keys centres, dark, deck, hands, light")
    keys = {"hands", "deck", "centres", "dark", "light"}
    if set(setup) != keys:
        missing, extra = sorted(keys - set(setup)), sorted(set(setup) - keys)
        fail(f"keys must be exactly centres, dark, deck, hands, light "
             f"(missing: {', '.join(missing) or 'none'}; unknown: {', '.join(extra) or 'none'})")
    hands = setup["hands"]
    if not isinstance(hands, list) or len(hands) != players:
        fail(f"hands must list one hand per seat ({players})")
    cards: list[str] = []
    for seat, hand in enumerate(hands):
        hand = string_list(hand, f"hand of seat {seat}")
        if len(hand) != options["hand_size"]:
            fail(f"hand of seat {seat} has {len(hand)} cards, hand_size is "
                 f"{options['hand_size']}")
        if hand != sorted(hand):
            fail(f"hand of seat {seat} is not sorted")
        cards += hand
    cards += string_list(setup["deck"], "deck")
    unknown = sorted(set(cards) - set(COLOURS))
    if unknown:
        fail(f"unknown card colour {unknown[0]!r} (colours: {' '.join(COLOURS)})")
    counts = Counter(cards)
    per_colour = options["cards_per_colour"]
    for colour in COLOURS:
        if counts[colour] != per_colour:
            fail(f"hands and deck hold {counts[colour]} {colour} cards, "
                 f"cards_per_colour is {per_colour}")
    centres = setup["centres"]
    if (not isinstance(centres, list) or len(centres) != MANDALAS
            or not all(isinstance(pair, list) and len(pair) == 2 for pair in centres)):
        fail("centres must list a [dark, light] pair of tiles for each of the 3 mandalas")
    values = parse_tile_values(options["tile_values"])
    for shade, colours, index in (("dark", DARK_COLOURS, 0), ("light", LIGHT_COLOURS, 1)):
        stack = string_list(setup[shade], f"{shade} stack")
        centre = string_list([pair[index] for pair in centres], f"{shade} centre tiles")
        wanted = Counter(all_tiles(colours, values))
        have = Counter(centre + stack)
        if have != wanted:
            extra = sorted((have - wanted).elements())
            missing = sorted((wanted - have).elements())
            fail(f"{shade} tiles (centres and stack) are not the {shade} tiles of the game "
                 f"(unexpected: {' '.join(extra) or 'none'}; "
                 f"missing: {' '.join(missing) or 'none'})")

