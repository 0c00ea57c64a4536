"""`greedy` for `flowers`: one ply of look-ahead from the observation alone.

Each placement is valued by how it changes an estimate of the garden's final score, using
only the groups it touches:

- number groups: a complete group (size = value) is safe; an over-full one (or two touching
  1s) will be removed with everything under it; an incomplete one may still be completed,
  so it costs a share of its cards that grows as the game nears its end;
- colour groups: 1 per card from five cards on, a smaller share below five (room to grow);
- butterflies: 1 per butterfly next to its colour.

The draw picks the face-up card whose best placement is worth most, or the face-down pile
when neither is worth the `FACE_DOWN_HOPE` of an unknown card. Emptying a pile ends the
game: greedy does it when it is ahead of every other seat, and avoids it otherwise
(alone: avoids it while number groups are unfinished).
"""
from __future__ import annotations

import random
import time
from collections import Counter
from operator import add

from engine.games import flowers as flowers_engine
from engine.games.flowers_scoring import CARDS, garden_from_cells, groups, score

FACE_DOWN_HOPE = 0.6       # what an unknown pile-2 card is expected to add
SMALL_COLOUR_SHARE = 0.4   # value per card of a colour group still under five cards
END_BONUS = 4.0            # for ending the game while ahead (or cost of ending it behind)
LOOKAHEAD_CANDIDATES = 6   # placements (greedy's best) that the look-ahead compares
LOOKAHEAD_WEIGHT = 0.3     # weight of the next card's expected best gain in a placement
_NONE = float("-inf")


def greedy(observation: dict, legal_moves: list[str], rng: random.Random) -> str:
    seat = observation["seat"]
    view = _GardenView(observation["gardens"][seat]["cells"], _turns_left(observation))
    if observation["phase"] == "place":
        return _best_place(view, observation["drawn_card"], legal_moves, rng)
    return _best_draw(observation, view, legal_moves)


def _turns_left(observation: dict) -> float:
    """A rough count of this seat's remaining turns: the game stops at the first empty pile."""
    draws_left = min(observation["pile_sizes"]) * 2.5
    return max(1.0, draws_left / observation["players"])


def _best_draw(observation: dict, view: "_GardenView", legal_moves: list[str],
               face_down: float = FACE_DOWN_HOPE) -> str:
    """The pile whose top is worth most where it fits best (the face-down pile: `face_down`),
    with the worth of ending the game when it empties a pile."""
    targets = view.targets()
    sizes = observation["pile_sizes"]
    best_move, best_value = legal_moves[0], float("-inf")
    for move in legal_moves:
        pile = int(move.split(" ")[1])
        card = observation["pile_tops"][pile]
        value = (max(view.gain(CARDS[card], cell) for cell in targets) if card
                 else face_down)
        if sizes[pile] == 1:
            value += _end_value(observation, view)
        if value > best_value:
            best_move, best_value = move, value
    return best_move


def _end_value(observation: dict, view: "_GardenView") -> float:
    """Worth of ending the game now: good when ahead of every other seat, bad otherwise."""
    if observation["players"] == 1:
        return -END_BONUS * view.unfinished_share()
    seat = observation["seat"]
    points = [score(garden_from_cells(garden["cells"])).points
              for garden in observation["gardens"]]
    ahead = all(points[seat] > mine for other, mine in enumerate(points) if other != seat)
    return END_BONUS if ahead else -END_BONUS


_CELLS: dict[str, tuple[int, int]] = {}     # `place X Y` -> (X, Y), parsed once per string


def _cell(move: str) -> tuple[int, int]:
    cell = _CELLS.get(move)
    if cell is None:
        _, x, y = move.split(" ")
        cell = _CELLS[move] = (int(x), int(y))
    return cell


def _best_place(view: "_GardenView", card: str, legal_moves: list[str],
                rng: random.Random) -> str:
    """The placement worth most; ties (common: many cells are alike) drawn with rng."""
    facts = CARDS[card]
    best: list[str] = []
    best_value = float("-inf")
    for move in legal_moves:
        cell = _cell(move)
        value = view.gain(facts, cell)
        if value > best_value + 1e-9:
            best, best_value = [move], value
        elif value > best_value - 1e-9:
            best.append(move)
    return rng.choice(best)


class _Groups:
    """One kind of group (numbers or colours) of a garden's visible cards, labelled once.

    Per group id: its label (value or colour), size, cards including covered ones, and its
    worth in the estimate, so a placement is valued from its neighbours' groups alone.
    """

    def __init__(self, view: "_GardenView", key, worth) -> None:
        self.worth_of = worth          # (label, size, cards) -> estimated points
        self.group_of: dict = {}
        self.label: list = []
        self.size: list[int] = []
        self.cards: list[int] = []
        for group in groups({cell: key(card) for cell, card in view.top.items()}):
            for cell in group:
                self.group_of[cell] = len(self.label)
            self.label.append(key(view.top[group[0]]))
            self.size.append(len(group))
            self.cards.append(sum(view.depth[cell] for cell in group))
        self.worth = [worth(*facts) for facts in zip(self.label, self.size, self.cards)]

    def change(self, label, cell, near: list, covered: bool, old_depth: int,
               new_cards: int) -> float:
        """Worth after minus worth before of the groups the new card joins or leaves.

        The group of a covered card is taken as shrinking by one card (a split it may cause
        is ignored: a cheap estimate).
        """
        group_of, labels, worth = self.group_of, self.label, self.worth
        joined = [group_of[other] for other in near if labels[group_of[other]] == label]
        if not joined and not covered:
            return self.worth_of(label, 1, new_cards)      # a new group of one
        joined = set(joined)
        old = group_of[cell] if covered else -1
        before = sum(worth[group] for group in joined)
        size, cards = 1, new_cards
        for group in joined:
            size += self.size[group]
            cards += self.cards[group]
            if group == old:
                size -= 1
                cards -= old_depth
        after = self.worth_of(label, size, cards)
        if covered and old not in joined:
            before += worth[old]
            if self.size[old] > 1:
                after += self.worth_of(labels[old], self.size[old] - 1,
                                       self.cards[old] - old_depth)
        return after - before


def estimate(garden: dict, turns_left: float, held: str = "") -> float:
    """The estimated final points of a garden (cell -> stack, bottom first) with about
    `turns_left` turns to go, by the same measures greedy uses; with `held`, after that card
    is laid where greedy would lay it. (ISMCTS values its search leaves with it.)"""
    view = _GardenView.from_garden(garden, turns_left)
    value = (sum(view.numbers.worth) + sum(view.colours.worth)
             + sum(view._butterfly_happy(cell, view.top[cell], None, None)
                   for cell in view.butterfly_cells))
    if held:
        card = CARDS[held]
        value += max(view.gain(card, cell) for cell in view.targets())
    return value


class _GardenView:
    """One garden's visible cards, with number and colour groups labelled once."""

    def __init__(self, cells: list[dict], turns_left: float) -> None:
        self._label({(cell["x"], cell["y"]): cell["cards"] for cell in cells}, turns_left)

    @classmethod
    def from_garden(cls, garden: dict, turns_left: float) -> "_GardenView":
        view = cls.__new__(cls)
        view._label(garden, turns_left)
        return view

    def _label(self, garden: dict, turns_left: float) -> None:
        self.depth = {cell: len(stack) for cell, stack in garden.items()}
        self.top = {cell: CARDS[stack[-1]] for cell, stack in garden.items()}
        self.turns_left = turns_left
        self.butterfly_cells = {cell for cell, card in self.top.items() if card.butterfly}
        self.numbers = _Groups(self, lambda card: card.value, self._number_worth)
        self.colours = _Groups(self, lambda card: card.colour, self._colour_worth)
        self._near: dict = {}
        # A card's gain on a cell is its number's part plus its colour's (plus butterflies'):
        # each part is kept per (value or colour, cell), as the look-ahead asks for every
        # unseen card on every cell, and cards share values and colours.
        self._number_change: dict = {}
        self._colour_change: dict = {}
        self._butterfly_change: dict = {}   # per (butterfly, colour, cell)
        self._happy_before: dict = {}       # per cell: its butterfly satisfied now (0 or 1)

    def targets(self) -> list[tuple[int, int]]:
        cells = set(self.top)
        for cell in self.top:
            cells.update(_around(cell))
        return sorted(cells)

    def unfinished_share(self) -> float:
        """Share of number groups not yet exactly complete."""
        numbers = self.numbers
        bad = sum(1 for value, size in zip(numbers.label, numbers.size) if size != value)
        return bad / max(1, len(numbers.label))

    # -- the estimate ---------------------------------------------------------------------
    def _number_worth(self, value: int, size: int, cards: int) -> float:
        if size == value:
            return 0.0
        if size > value:
            return -float(cards)
        missing = value - size
        risk = min(1.0, 0.25 + missing / (self.turns_left + 1.0))
        return -cards * risk

    @staticmethod
    def _colour_worth(colour: str, size: int, cards: int) -> float:
        return float(size) if size >= 5 else size * SMALL_COLOUR_SHARE

    def gain(self, card, cell: tuple[int, int]) -> float:
        """Estimated change of the final score from laying `card` on `cell`."""
        near = self._near.get(cell)
        if near is None:
            near = self._near[cell] = [other for other in _around(cell) if other in self.top]
        number = self._number_change.get((card.value, cell))
        colour = self._colour_change.get((card.colour, cell))
        if number is None or colour is None:
            old_depth = self.depth.get(cell, 0)
            covered = old_depth > 0
            if number is None:
                number = self._number_change[card.value, cell] = self.numbers.change(
                    card.value, cell, near, covered, old_depth, old_depth + 1)
            if colour is None:
                colour = self._colour_change[card.colour, cell] = self.colours.change(
                    card.colour, cell, near, covered, old_depth, 0)
        total = number + colour
        if card.butterfly or cell in self.butterfly_cells or any(
                other in self.butterfly_cells for other in near):
            total += self.butterfly_part(card, cell)
        return total

    def butterfly_part(self, card, cell: tuple[int, int]) -> float:
        """The butterflies' part of `gain` (`_butterfly_gain`, kept per butterfly, colour and
        cell)."""
        key = (card.butterfly, card.colour, cell)
        butterflies = self._butterfly_change.get(key)
        if butterflies is None:
            butterflies = self._butterfly_change[key] = self._butterfly_gain(card, cell)
        return butterflies

    def part_rows(self, cells: list[tuple[int, int]]):
        """Two functions, of a value and of a colour, giving the number's and the colour's
        part of the gain (`gain`) of a card of that value or colour on each of `cells`."""
        near_of, depth = [], self.depth
        for cell in cells:
            near = self._near.get(cell)
            if near is None:
                near = self._near[cell] = [other for other in _around(cell) if other in self.top]
            near_of.append((cell, near, depth.get(cell, 0)))

        def rows(part: dict, groups: "_Groups", deepens: bool):
            made: dict = {}

            def row(label) -> list[float]:
                values = made.get(label)
                if values is None:
                    values = made[label] = []
                    for cell, near, old_depth in near_of:
                        value = part.get((label, cell))
                        if value is None:
                            value = part[label, cell] = groups.change(
                                label, cell, near, old_depth > 0, old_depth,
                                old_depth + 1 if deepens else 0)
                        values.append(value)
                return values
            return row
        return (rows(self._number_change, self.numbers, True),
                rows(self._colour_change, self.colours, False))

    def _butterfly_gain(self, card, cell: tuple[int, int]) -> float:
        """Satisfied butterflies around `cell` after minus before the card is laid (which
        depends on the card's butterfly and colour alone). Only the card's own butterfly
        and those next to it can change; each spot's count before is kept."""
        before = self._happy_before
        top = self.top
        gain = self._butterfly_happy(cell, card, cell, card)
        for spot in (cell, *_around(cell)):
            if spot != cell:
                spot_card = top.get(spot)
                if spot_card is None or not spot_card.butterfly:
                    continue   # no butterfly there, before or after
                gain += self._butterfly_happy(spot, spot_card, cell, card)
            was = before.get(spot)
            if was is None:
                was = before[spot] = self._butterfly_happy(spot, top.get(spot), None, None)
            gain -= was
        return float(gain)

    def _butterfly_happy(self, spot, spot_card, changed, changed_card) -> int:
        if spot_card is None or not spot_card.butterfly:
            return 0
        for near in _around(spot):
            near_card = changed_card if near == changed else self.top.get(near)
            if near_card is not None and near_card.colour == spot_card.butterfly:
                return 1
        return 0


def _around(cell: tuple[int, int]) -> tuple:
    x, y = cell
    return (x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)


# -- a look-ahead for stronger bots (the `ismcts` sample bot places and draws with these) ------
def unseen_cards(observation: dict) -> Counter:
    """Per card kind, the copies this seat has not seen (engine.games.flowers.unseen_cards,
    kinds with none left out)."""
    return +flowers_engine.unseen_cards(observation)


def _expected_best_gain(view: "_GardenView", unseen: Counter) -> float:
    """What an unseen card is worth here on average: its best placement's gain, weighted by
    how many copies of each kind are unseen."""
    total = sum(unseen.values())
    if not total:
        return 0.0
    targets = view.targets()
    # A card's gain on a cell is its number's part plus its colour's, plus the butterflies'
    # where the card has one or one is near (`_GardenView.gain`). Each part is kept as a row
    # over the cells, per value, per colour and per (butterfly, colour), and a card's best is
    # the largest sum of its rows: the look-ahead asks this for every unseen kind after every
    # candidate placement, and C's loops add them (the same sums as `gain`, 2x faster).
    butterflies = view.butterfly_cells
    plain, near = [], []
    for cell in targets:
        touched = cell in butterflies or any(other in butterflies for other in _around(cell))
        (near if touched else plain).append(cell)
    (numbers_plain, colours_plain), (numbers_near, colours_near) = (view.part_rows(plain),
                                                                    view.part_rows(near))
    butterfly_rows: dict = {}

    def with_butterflies(row, facts, cells: list, where: str):
        key = (facts.butterfly, facts.colour, where)
        parts = butterfly_rows.get(key)
        if parts is None:
            parts = butterfly_rows[key] = [view.butterfly_part(facts, cell) for cell in cells]
        return map(add, row, parts)

    worth = 0.0
    for card, copies in unseen.items():
        facts = CARDS[card]
        row = map(add, numbers_plain(facts.value), colours_plain(facts.colour))
        if facts.butterfly:
            row = with_butterflies(row, facts, plain, "plain")
        best = max(row, default=_NONE)
        row = with_butterflies(map(add, numbers_near(facts.value), colours_near(facts.colour)),
                               facts, near, "near")
        worth += copies * max(best, max(row, default=_NONE))
    return worth / total


def lookahead_place(observation: dict, legal_moves: list[str], rng: random.Random,
                    deadline: float | None = None) -> str:
    """Greedy's best few placements compared by their gain plus LOOKAHEAD_WEIGHT times the
    expected best gain of the next card: of two cells worth alike now, the one that leaves
    more room for the cards still to come. (Against greedy over 900 games, both seats,
    in process: 58% placing with it and drawing like greedy, 60% with `expectation_draw`.)
    With a `deadline` (a `time.perf_counter()` value) it compares the candidates, best first,
    only while there is time: each costs a few milliseconds."""
    garden = garden_from_cells(observation["gardens"][observation["seat"]]["cells"])
    turns_left = _turns_left(observation)
    view = _GardenView.from_garden(garden, turns_left)
    card = observation["drawn_card"]
    facts = CARDS[card]
    ranked = []
    for move in legal_moves:
        cell = _cell(move)
        ranked.append((-view.gain(facts, cell), move, cell))
    ranked.sort()      # best gain first; equal gains in the legal list's order
    if turns_left <= 1.0:
        return ranked[0][1]
    unseen = unseen_cards(observation)
    best_move, best_value = ranked[0][1], float("-inf")
    for loss, move, cell in ranked[:LOOKAHEAD_CANDIDATES]:
        if deadline is not None and best_value > float("-inf") and time.perf_counter() > deadline:
            break
        after = {spot: stack[:] for spot, stack in garden.items()}
        after.setdefault(cell, []).append(card)
        later = _GardenView.from_garden(after, max(1.0, turns_left - 1))
        value = -loss + LOOKAHEAD_WEIGHT * _expected_best_gain(later, unseen)
        if value > best_value:
            best_move, best_value = move, value
    return best_move


def expectation_draw(observation: dict, legal_moves: list[str], rng: random.Random) -> str:
    """Greedy's draw, with the face-down pile valued at the expected best gain of an unseen
    card here instead of a fixed hope."""
    seat = observation["seat"]
    view = _GardenView(observation["gardens"][seat]["cells"], _turns_left(observation))
    face_down = (_expected_best_gain(view, unseen_cards(observation))
                 if "draw 2" in legal_moves else FACE_DOWN_HOPE)
    return _best_draw(observation, view, legal_moves, face_down)
