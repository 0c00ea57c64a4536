"""FLOWERS, the garden-laying card game (`docs/rules/flowers.md`), 1 to 4 players.

Components: 108 cards, 4 colours (`b g r y`) x (three 1s, six 2s, eight 3s, ten 4s); three
of each colour's 4s carry a butterfly of one other colour each. Card notation: `b3`, `y4+g`.

Setup (docs/notation.md): `{"gardens": [first card per seat], "piles": [[top first], x3]}`. Pile
sizes: 2 players 26, 3 players 30, 1 and 4 players every remaining card dealt round-robin
(36/36/35 and 35/35/34). Option `pile_size` (int, default 0 = "by player count") sets the
size of every pile instead; three piles of it must fit in what is left after the gardens.

A turn is two decisions of the same seat: `draw P` (P in 0 1 2; piles 0 and 1 show their
top card, pile 2 is face down), then `place X Y` for the drawn card: on an empty cell
orthogonally next to a card of the own garden, or on top of one (covering its stack). The
game ends right after the turn that drew the last card of any pile.

Scoring: `engine.games.flowers_scoring.score` (removed cards -1 each, covered ones included;
colour groups of 5+ score 1 per card; butterflies next to their colour 1). Ranks: points,
then fewer removed cards; still tied is a shared rank.

Observation (`proto/arena/v1/flowers.proto`, `FlowersObservation`): the seat, whose turn
and which phase, every garden with covered cards, the tops of piles 0 and 1, every pile's
size, and the card being placed (blank for others when it came from pile 2).

Version: flowers/1 (rules file of 2026-11; pile_size option).
"""
from __future__ import annotations

import bisect
import random
from collections import Counter
from typing import Any, Mapping, Sequence

from engine.core import (Game, GameNotOverError, IllegalMoveError, InvalidOptionError,
                         InvalidSetupError, Option, State, ranks_from_keys)
from engine.games.flowers_scoring import CARDS, INITIALS, Cell, GardenScore, score

PILES = 3
FACE_UP_PILES = (0, 1)
SECRET_PILE = 2
DEFAULT_PILE_SIZE = {2: 26, 3: 30}      # other player counts: all remaining cards
COPIES = {1: 3, 2: 6, 3: 8, 4: 7}       # per colour; 4s without butterfly (3 more have one)


def _deck() -> list[str]:
    """All 108 cards in a fixed order (the deal shuffles a copy)."""
    deck = []
    for colour in INITIALS:
        for value, copies in COPIES.items():
            deck += [f"{colour}{value}"] * copies
        deck += [f"{colour}4+{other}" for other in INITIALS if other != colour]
    return deck


DECK = tuple(_deck())
DECK_COUNTS = Counter(DECK)

DRAW_MOVES = tuple(f"draw {pile}" for pile in range(PILES))
_DRAW_PILE = {move: pile for pile, move in enumerate(DRAW_MOVES)}

_PLACE_MOVES: dict[Cell, str] = {}


def place_move(cell: Cell) -> str:
    """`place X Y` for a cell; strings are cached since the same cells recur every game."""
    move = _PLACE_MOVES.get(cell)
    if move is None:
        move = _PLACE_MOVES[cell] = f"place {cell[0]} {cell[1]}"
    return move


def pile_sizes(players: int, pile_size: int) -> list[int]:
    """Cards per pile: the option when set, else the rules' default by player count."""
    if pile_size:
        return [pile_size] * PILES
    if players in DEFAULT_PILE_SIZE:
        return [DEFAULT_PILE_SIZE[players]] * PILES
    remaining = len(DECK) - players
    return [len(range(pile, remaining, PILES)) for pile in range(PILES)]


class Flowers(Game):
    id = "flowers"
    title = "Flowers (garden laying)"
    min_players = 1
    max_players = 4
    options = (Option("pile_size", "int", 0,
                      "cards in each of the three piles; 0 = by player count "
                      "(2 players 26, 3 players 30, 1 and 4 players all remaining cards)"),)
    has_chance = False

    def max_plies(self, players: int, options: Mapping[str, Any]) -> int:
        # A turn is one draw and one place; the game ends when a pile runs out, so at most
        # every card of the three piles is drawn.
        return 2 * sum(pile_sizes(players, options["pile_size"]))

    def check_options(self, options: dict[str, Any], players: int) -> None:
        size = options["pile_size"]
        available = len(DECK) - players
        if size < 0 or PILES * size > available:
            raise InvalidOptionError(
                f"option pile_size must be 0 (by player count) or 1 to {available // PILES} "
                f"with {players} player{'s' * (players > 1)} ({available} cards remain for 3 "
                f"piles), got {size}")

    def deal(self, players: int, options: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        deck = list(DECK)
        rng.shuffle(deck)
        rest = deck[players:]
        piles = [rest[pile::PILES][:size]
                 for pile, size in enumerate(pile_sizes(players, options["pile_size"]))]
        return {"gardens": deck[:players], "piles": piles}

    def start(self, players: int, options: dict[str, Any],
              setup: Mapping[str, Any]) -> "FlowersState":
        _check_setup(players, options, setup)
        return FlowersState(self, players, options, setup)

    def determinize(self, observation: Mapping[str, Any], seat: int, rng: random.Random, *,
                    options: Mapping[str, Any] | None = None,
                    history: Sequence[Mapping[str, Any]] | None = None) -> "FlowersState":
        """See Game.determinize. The observation is enough: every card drawn is placed in a
        garden, face up or covered, and stays there. Unseen are the cards under the tops of
        piles 0 and 1, all of pile 2, a card held face down, and the cards never dealt (a
        fair deal mixes those alike)."""
        players = observation["players"]
        resolved = self.resolve_options(options, players)
        unseen = unseen_cards(observation)
        held = observation["drawn_card"]
        if min(unseen.values()) < 0:
            raise InvalidSetupError("not a flowers observation: it shows more copies of "
                                    "a card than the deck holds")
        pool = sorted(unseen.elements())
        rng.shuffle(pool)
        sizes = observation["pile_sizes"]
        piles = []
        for pile, size in enumerate(sizes):
            top = observation["pile_tops"][pile]
            hidden = size - 1 if top else size
            piles.append(pool[:hidden] + ([top] if top else []))   # top card last
            pool = pool[hidden:]
        placing = observation["phase"] == "place"
        if placing and not held:
            held = pool.pop(0)
        return FlowersState.from_view(self, resolved, observation, piles, held)


def unseen_cards(observation: Mapping[str, Any]) -> Counter[str]:
    """Per card kind, the copies a seat has not seen, from its observation: the deck less
    every garden's cards (covered ones included), the face-up tops and a card it holds. A
    count below 0 means the observation shows more copies than the deck holds."""
    unseen = Counter(DECK_COUNTS)
    unseen.subtract(card for garden in observation["gardens"] for cell in garden["cells"]
                    for card in cell["cards"])
    unseen.subtract(top for top in observation["pile_tops"] if top)
    if observation["drawn_card"]:
        unseen[observation["drawn_card"]] -= 1
    return unseen


def _check_setup(players: int, options: dict[str, Any], setup: Mapping[str, Any]) -> None:
    """InvalidSetupError unless setup is a legal deal of the deck under these options."""
    def fail(reason: str) -> None:
        raise InvalidSetupError(f"flowers setup: {reason}")

    if not isinstance(setup, Mapping) or set(setup) != {"gardens", "piles"}:
        fail('want exactly the keys "gardens" and "piles"')
    gardens, piles = setup["gardens"], setup["piles"]
    if not isinstance(gardens, list) or len(gardens) != players:
        fail(f"gardens must list one first card per seat ({players})")
    if not isinstance(piles, list) or len(piles) != PILES or not all(
            isinstance(pile, list) for pile in piles):
        fail("piles must be a list of three lists of cards")
    want = pile_sizes(players, options["pile_size"])
    have = [len(pile) for pile in piles]
    if have != want:
        fail(f"pile sizes {have}, but {players} players with pile_size "
             f"{options['pile_size']} deal {want}")
    cards = gardens + [card for pile in piles for card in pile]
    unknown = sorted({str(card) for card in cards
                      if not isinstance(card, str) or card not in CARDS})
    if unknown:
        fail(f"unknown cards {', '.join(unknown)} (cards look like b3 or y4+g)")
    extra = Counter(cards) - DECK_COUNTS
    if extra:
        fail("more copies than the deck holds of " + ", ".join(sorted(extra)))


class FlowersState(State):
    """A position: gardens, piles, whose turn and whether the drawn card awaits placing."""

    def __init__(self, game: Flowers, players: int, options: dict[str, Any],
                 setup: Mapping[str, Any]) -> None:
        self.game = game
        self.players = players
        self.options = options
        self.setup = {"gardens": list(setup["gardens"]),
                      "piles": [list(pile) for pile in setup["piles"]]}
        # Gardens: cell -> stack (bottom first). Piles: top card LAST, so drawing is pop().
        self.gardens: list[dict[Cell, list[str]]] = [
            {(0, 0): [card]} for card in setup["gardens"]]
        self.piles: list[list[str]] = [list(reversed(pile)) for pile in setup["piles"]]
        # Per seat, the cells a card may go to, as `place X Y` -> cell, and the same move
        # strings kept sorted, so the legal list never has to be rebuilt or re-sorted.
        self.targets: list[dict[str, Cell]] = []
        self.sorted_targets: list[list[str]] = []
        for _ in range(players):
            self.targets.append({})
            self.sorted_targets.append([])
            self._add_targets(len(self.targets) - 1, (0, 0))
        self.seat = 0
        self.held = ""            # the drawn card awaiting placement ("" in the draw phase)
        self.held_from = -1       # its pile
        self.over = False
        self.turns = 0            # completed turns

    @classmethod
    def from_view(cls, game: Flowers, options: dict[str, Any], view: Mapping[str, Any],
                  piles: list[list[str]], held: str) -> "FlowersState":
        """The state an observation shows, with piles (top last) and the held card given."""
        state = object.__new__(cls)
        state.game = game
        state.players = view["players"]
        state.options = options
        state.setup = {}                    # a determinised state has no starting deal
        state.gardens = [{(cell["x"], cell["y"]): list(cell["cards"]) for cell in g["cells"]}
                         for g in view["gardens"]]
        state.piles = piles
        state.targets, state.sorted_targets = [], []
        for seat, garden in enumerate(state.gardens):
            state.targets.append({})
            state.sorted_targets.append([])
            for cell in garden:
                state._add_targets(seat, cell)
        state.over = view["phase"] == "over"
        state.seat = max(view["to_move"], 0)
        state.held = held if view["phase"] == "place" else ""
        state.held_from = view["drawn_from"]
        state.turns = view["turns"]
        return state

    def _add_targets(self, seat: int, cell: Cell) -> None:
        """Registers a newly occupied cell and its orthogonal neighbours as targets."""
        targets, ordered = self.targets[seat], self.sorted_targets[seat]
        x, y = cell
        for near in (cell, (x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            move = place_move(near)
            if move not in targets:
                targets[move] = near
                bisect.insort(ordered, move)

    # -- whose turn, what is legal ------------------------------------------------------------
    def to_move(self) -> int | None:
        return None if self.over else self.seat

    def is_over(self) -> bool:
        return self.over

    def phase(self) -> str:
        return "over" if self.over else ("place" if self.held else "draw")

    def legal_moves(self) -> list[str]:
        if self.over:
            return []
        if self.held:
            return list(self.sorted_targets[self.seat])
        return [DRAW_MOVES[pile] for pile in range(PILES) if self.piles[pile]]

    def apply(self, move: str) -> None:
        if self.over:
            raise IllegalMoveError(move, "the game is over")
        if self.held:
            self._place(move)
        else:
            self._draw(move)

    def _draw(self, move: str) -> None:
        pile = _DRAW_PILE.get(move)
        if pile is None:
            raise IllegalMoveError(
                move, f"seat {self.seat} must draw first: `draw P` with P in 0 1 2")
        if not self.piles[pile]:
            raise IllegalMoveError(move, f"pile {pile} is empty")
        self.held = self.piles[pile].pop()
        self.held_from = pile

    def _place(self, move: str) -> None:
        cell = self.targets[self.seat].get(move)
        if cell is None:
            raise IllegalMoveError(move, self._place_refusal(move))
        garden = self.gardens[self.seat]
        stack = garden.get(cell)
        if stack is None:
            garden[cell] = [self.held]
            self._add_targets(self.seat, cell)
        else:
            stack.append(self.held)
        self.held = ""
        self.held_from = -1
        self.turns += 1
        if not all(self.piles):
            self.over = True          # the turn that emptied a pile was the last one
        else:
            self.seat = (self.seat + 1) % self.players

    def _place_refusal(self, move: str) -> str:
        """Why a move is not a legal placement (bad notation or a cell out of reach)."""
        tokens = move.split(" ")
        if (len(tokens) != 3 or tokens[0] != "place"
                or not all(_is_canonical_int(token) for token in tokens[1:])):
            return (f"seat {self.seat} must place the drawn {self.held}: "
                    f"`place X Y` with X and Y integers")
        return (f"cell {tokens[1]} {tokens[2]} is neither on nor orthogonally next to a card "
                f"of seat {self.seat}'s garden")

    # -- results ------------------------------------------------------------------------------
    def garden_scores(self) -> list[GardenScore]:
        return [score(garden) for garden in self.gardens]

    def scores(self) -> list[int]:
        self._require_over()
        return [result.points for result in self.garden_scores()]

    def ranks(self) -> list[int]:
        self._require_over()
        return ranks_from_keys([(result.points, -result.removed_count)
                                for result in self.garden_scores()])

    def _require_over(self) -> None:
        if not self.over:
            raise GameNotOverError("flowers: the game is not over yet")

    # -- views --------------------------------------------------------------------------------
    def observation(self, seat: int) -> dict[str, Any]:
        if seat not in range(self.players):
            raise ValueError(f"flowers: no seat {seat!r} in a {self.players}-player match")
        held_visible = self.held_from != SECRET_PILE or seat == self.seat
        return {
            "seat": seat,
            "players": self.players,
            "to_move": -1 if self.over else self.seat,
            "phase": self.phase(),
            "gardens": [
                {"seat": owner,
                 "cells": [{"x": x, "y": y, "cards": list(garden[(x, y)])}
                           for x, y in sorted(garden)]}
                for owner, garden in enumerate(self.gardens)],
            "pile_sizes": [len(pile) for pile in self.piles],
            "pile_tops": [self.piles[pile][-1] if pile in FACE_UP_PILES and self.piles[pile]
                          else "" for pile in range(PILES)],
            "drawn_card": self.held if held_visible else "",
            "drawn_from": self.held_from,
            "turns": self.turns,
        }

    def clone(self) -> "FlowersState":
        other = object.__new__(FlowersState)
        other.__dict__.update(self.__dict__)
        other.setup = self.setup            # never mutated
        other.gardens = [{cell: list(stack) for cell, stack in garden.items()}
                         for garden in self.gardens]
        other.piles = [list(pile) for pile in self.piles]
        other.targets = [dict(targets) for targets in self.targets]
        other.sorted_targets = [list(ordered) for ordered in self.sorted_targets]
        return other

    def render(self) -> str:
        sizes = [len(pile) for pile in self.piles]
        tops = [self.piles[pile][-1] if self.piles[pile] else "empty" for pile in FACE_UP_PILES]
        lines = [f"piles: 0: {tops[0]} ({sizes[0]} left) | 1: {tops[1]} ({sizes[1]} left) | "
                 f"2: face down ({sizes[2]} left)"]
        if self.held:
            shown = self.held if self.held_from != SECRET_PILE else "a face-down card"
            lines.append(f"seat {self.seat} places {shown} drawn from pile {self.held_from}")
        for seat, garden in enumerate(self.gardens):
            lines += render_garden(garden, f"seat {seat} garden")
        return "\n".join(lines)

    def render_result(self) -> str:
        lines = []
        for seat, result in enumerate(self.garden_scores()):
            lines.append(f"seat {seat}:")
            lines += ["  " + line for line in result.describe()]
        lines.append(f"scores {self.scores()} ranks {self.ranks()}")
        return "\n".join(lines)


def render_garden(garden: Mapping[Cell, list[str]], title: str) -> list[str]:
    """A garden as a text grid: the top card per cell, `/N` when N cards are stacked there.

    Rows run from the highest y down, columns from the lowest x; `.` is an empty cell.
    """
    xs = [x for x, _ in garden]
    ys = [y for _, y in garden]
    columns = range(min(xs), max(xs) + 1)
    width = max(len(_cell_text(stack)) for stack in garden.values())
    covered = sum(len(stack) - 1 for stack in garden.values())
    lines = [f"{title} ({len(garden)} cells, {covered} covered cards):",
             "    y\\x " + " ".join(str(x).rjust(width) for x in columns)]
    for y in range(max(ys), min(ys) - 1, -1):
        row = [_cell_text(garden[(x, y)]) if (x, y) in garden else "." for x in columns]
        lines.append(f"{y:>7} " + " ".join(text.rjust(width) for text in row))
    return lines


def _cell_text(stack: list[str]) -> str:
    return stack[-1] if len(stack) == 1 else f"{stack[-1]}/{len(stack)}"


def _is_canonical_int(token: str) -> bool:
    """Decimal as docs/notation.md writes it: no leading zeros, no `+`, never `-0`."""
    digits = token[1:] if token.startswith("-") else token
    return digits.isdigit() and digits.isascii() and (
        digits == "0" and token == "0" or not digits.startswith("0"))
