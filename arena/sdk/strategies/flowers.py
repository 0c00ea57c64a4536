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
game: greedy does it when that leaves it ahead, and avoids it otherwise.
"""
from __future__ import annotations

import random

from engine.games.flowers_scoring import CARDS, garden_from_cells, groups, score

FACE_DOWN_HOPE = 0.6       # what an unknown pile-2 card is expected to add
SMALL_COLOUR_SHARE = 0.4   # value per card of a colour group still under five cards
END_BONUS = 4.0            # for ending the game while ahead (or cost of ending it behind)


def greedy(observation: dict, legal_moves: list[str], rng: random.Random) -> str:
    seat = observation["seat"]
    view = _GardenView(observation["gardens"][seat]["cells"], _turns_left(observation))
    if observation["phase"] == "place":
        return _best_place(view, observation["drawn_card"], legal_moves, rng)[0]
    return _best_draw(observation, view, legal_moves)


def _turns_left(observation: dict) -> float:
    """A rough count of this seat's remaining turns: the game stops at the first empty pile."""
    draws_left = min(observation["pile_sizes"]) * 2.5
    return max(1.0, draws_left / observation["players"])


def _best_draw(observation: dict, view: "_GardenView", legal_moves: list[str]) -> str:
    targets = view.targets()
    sizes = observation["pile_sizes"]
    best_move, best_value = legal_moves[0], float("-inf")
    for move in legal_moves:
        pile = int(move.split(" ")[1])
        card = observation["pile_tops"][pile]
        value = (max(view.gain(CARDS[card], cell) for cell in targets) if card
                 else FACE_DOWN_HOPE)
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


def _best_place(view: "_GardenView", card: str, legal_moves: list[str],
                rng: random.Random) -> tuple[str, float]:
    facts = CARDS[card]
    best: list[str] = []
    best_value = float("-inf")
    for move in legal_moves:
        _, x, y = move.split(" ")
        value = view.gain(facts, (int(x), int(y)))
        if value > best_value + 1e-9:
            best, best_value = [move], value
        elif value > best_value - 1e-9:
            best.append(move)
    return rng.choice(best), best_value


class _GardenView:
    """One garden's visible cards with their number and colour groups labelled once."""

    def __init__(self, cells: list[dict], turns_left: float) -> None:
        self.depth = {(cell["x"], cell["y"]): len(cell["cards"]) for cell in cells}
        self.top = {(cell["x"], cell["y"]): CARDS[cell["cards"][-1]] for cell in cells}
        self.turns_left = turns_left
        self.butterfly_cells = {cell for cell, card in self.top.items() if card.butterfly}
        self.number_group, self.number_facts = self._label(lambda card: card.value)
        self.colour_group, self.colour_facts = self._label(lambda card: card.colour)

    def _label(self, key) -> tuple[dict, list[list[int]]]:
        """Cell -> group id, and per group [size, cards including covered ones]."""
        group_of: dict = {}
        facts: list[list[int]] = []
        for group in groups({cell: key(card) for cell, card in self.top.items()}):
            for cell in group:
                group_of[cell] = len(facts)
            facts.append([len(group), sum(self.depth[cell] for cell in group)])
        return group_of, facts

    def targets(self) -> list[tuple[int, int]]:
        cells = set(self.top)
        for cell in self.top:
            cells.update(_around(cell))
        return sorted(cells)

    def unfinished_share(self) -> float:
        """Share of number groups not yet exactly complete."""
        values = {group: self.top[cell].value for cell, group in self.number_group.items()}
        bad = sum(1 for group, (size, _) in enumerate(self.number_facts) if size != values[group])
        return bad / max(1, len(self.number_facts))

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
    def _colour_worth(size: int) -> float:
        return float(size) if size >= 5 else size * SMALL_COLOUR_SHARE

    def gain(self, card, cell: tuple[int, int]) -> float:
        """Estimated change of the final score from laying `card` on `cell`."""
        covered = self.top.get(cell)
        new_depth = self.depth.get(cell, 0) + 1
        return (self._group_gain(card.value, cell, covered, new_depth, self.number_group,
                                 self.number_facts, covered.value if covered else None, True)
                + self._group_gain(card.colour, cell, covered, 0, self.colour_group,
                                   self.colour_facts, covered.colour if covered else None,
                                   False)
                + self._butterfly_gain(card, cell))

    def _group_gain(self, label, cell, covered, new_depth, group_of, facts, covered_label,
                    numbers: bool) -> float:
        """Worth after minus worth before of the groups the new card joins or leaves.

        The group the covered card belonged to is taken as shrinking by one card (a split
        it may cause is ignored: a cheap estimate).
        """
        old_group = group_of.get(cell) if covered else None
        old_depth = self.depth.get(cell, 0)
        key = CARD_KEY[numbers]
        joined = {group_of[near] for near in _around(cell)
                  if near in self.top and key(self.top[near]) == label}
        touched = set(joined)
        if old_group is not None:
            touched.add(old_group)
        before = sum(self._worth(numbers, group, facts, group_of) for group in touched)
        size, cards = 1, new_depth
        for group in joined:
            group_size, group_cards = facts[group]
            if group == old_group:
                group_size, group_cards = group_size - 1, group_cards - old_depth
            size += group_size
            cards += group_cards
        after = (self._number_worth(label, size, cards) if numbers
                 else self._colour_worth(size))
        if old_group is not None and old_group not in joined and facts[old_group][0] > 1:
            group_size, group_cards = facts[old_group]
            after += (self._number_worth(covered_label, group_size - 1, group_cards - old_depth)
                      if numbers else self._colour_worth(group_size - 1))
        return after - before

    def _worth(self, numbers: bool, group: int, facts, group_of) -> float:
        size, cards = facts[group]
        if not numbers:
            return self._colour_worth(size)
        return self._number_worth(self._value_of_group(group), size, cards)

    def _value_of_group(self, group: int) -> int:
        cache = self.__dict__.setdefault("_group_values", {})
        if not cache:
            for cell, number_group in self.number_group.items():
                cache[number_group] = self.top[cell].value
        return cache[group]

    def _butterfly_gain(self, card, cell: tuple[int, int]) -> float:
        """Satisfied butterflies around `cell` after minus before the card is laid."""
        spots = (cell, *_around(cell))
        if not card.butterfly and not any(spot in self.butterfly_cells for spot in spots):
            return 0.0            # the common case: no butterfly within reach
        gain = 0.0
        for spot in spots:
            before_card = self.top.get(spot)
            after_card = card if spot == cell else before_card
            gain += (self._butterfly_happy(spot, after_card, cell, card)
                     - self._butterfly_happy(spot, before_card, None, None))
        return gain

    def _butterfly_happy(self, spot, spot_card, changed, changed_card) -> int:
        if spot_card is None or not spot_card.butterfly:
            return 0
        for near in _around(spot):
            near_card = changed_card if near == changed else self.top.get(near)
            if near_card is not None and near_card.colour == spot_card.butterfly:
                return 1
        return 0


CARD_KEY = {True: lambda card: card.value, False: lambda card: card.colour}


def _around(cell: tuple[int, int]) -> tuple:
    x, y = cell
    return (x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)
