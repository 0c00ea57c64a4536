"""Scoring of one `flowers` garden, usable on its own (engine, reports, bots).

A garden maps a cell `(x, y)` to its stack of cards, bottom card first, top (visible) card
last, cards in the notation of `docs/rules/flowers.md` (`b3`, `y4+g`). `score(garden)`
applies the three scoring steps of the rules:

1. Discards: every maximal orthogonally connected group of visible cards of one value whose
   size is not that value is removed with everything under it, all at once; -1 per card.
2. Colours: among what is left visible, each orthogonally connected one-colour group of at
   least 5 cards scores 1 per card.
3. Butterflies: each butterfly card left visible scores 1 when a card of the butterfly's
   colour left visible is orthogonally next to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Sequence

Cell = tuple[int, int]

COLOURS = ("blue", "green", "red", "yellow")
INITIALS = tuple(name[0] for name in COLOURS)          # "b", "g", "r", "y"
COLOUR_NAME = dict(zip(INITIALS, COLOURS))
MIN_COLOUR_GROUP = 5


class Card(NamedTuple):
    """A card's printed facts: colour and butterfly as initials (butterfly "" when none)."""

    colour: str
    value: int
    butterfly: str


def _all_cards() -> dict[str, Card]:
    cards = {}
    for colour in INITIALS:
        for value in (1, 2, 3, 4):
            cards[f"{colour}{value}"] = Card(colour, value, "")
        for other in INITIALS:
            if other != colour:
                cards[f"{colour}4+{other}"] = Card(colour, 4, other)
    return cards


CARDS: dict[str, Card] = _all_cards()
"""Every card kind by its notation (28 kinds: 4 colours x (1, 2, 3, 4, 4+each other colour))."""


def _neighbours(cell: Cell) -> tuple[Cell, Cell, Cell, Cell]:
    x, y = cell
    return (x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)


def groups(cells: Mapping[Cell, object]) -> list[list[Cell]]:
    """Maximal orthogonally connected groups of cells with equal labels, each sorted."""
    seen: set[Cell] = set()
    found = []
    for start in sorted(cells):
        if start in seen:
            continue
        label = cells[start]
        seen.add(start)
        group, todo = [], [start]
        while todo:
            cell = todo.pop()
            group.append(cell)
            for near in _neighbours(cell):
                if near not in seen and cells.get(near, None) == label:
                    seen.add(near)
                    todo.append(near)
        found.append(sorted(group))
    return found


@dataclass(frozen=True)
class GardenScore:
    """The result of scoring one garden, step by step.

    `removed`: per removed cell, its whole stack (bottom first); `removed_count` counts every
    one of those cards, covered ones included (the penalty and the tie-break).
    `colour_groups`: the scoring groups (colour initial, cells). `butterflies`: the scoring
    butterfly cards (cell, card).
    """

    points: int
    removed: tuple[tuple[Cell, tuple[str, ...]], ...]
    removed_count: int
    colour_groups: tuple[tuple[str, tuple[Cell, ...]], ...]
    butterflies: tuple[tuple[Cell, str], ...]

    @property
    def colour_points(self) -> int:
        return sum(len(cells) for _, cells in self.colour_groups)

    def describe(self) -> list[str]:
        """Readable lines of the breakdown (for logs and reports)."""
        removed = ", ".join(f"{'/'.join(cards)} at {x} {y}" for (x, y), cards in self.removed)
        colours = ", ".join(f"{COLOUR_NAME[colour]} {len(cells)}"
                            for colour, cells in self.colour_groups)
        butterflies = ", ".join(f"{card} at {x} {y}" for (x, y), card in self.butterflies)
        return [
            f"removed {self.removed_count} (-{self.removed_count}): {removed or 'none'}",
            f"colour groups (+{self.colour_points}): {colours or 'none'}",
            f"butterflies (+{len(self.butterflies)}): {butterflies or 'none'}",
            f"points {self.points}",
        ]


def score(garden: Mapping[Cell, Sequence[str]]) -> GardenScore:
    """Scores one garden (cell -> stack, bottom first) by the three steps of the rules."""
    top = {cell: CARDS[stack[-1]] for cell, stack in garden.items()}

    # Step 1: a number group is valid only when its size equals its value; all invalid
    # groups go at once, so removing one never changes whether another is valid.
    values = {cell: card.value for cell, card in top.items()}
    removed_cells = {cell for group in groups(values)
                     if len(group) != values[group[0]] for cell in group}
    removed = tuple((cell, tuple(garden[cell])) for cell in sorted(removed_cells))
    removed_count = sum(len(cards) for _, cards in removed)

    left = {cell: card for cell, card in top.items() if cell not in removed_cells}

    # Step 2: colour groups of at least five among what step 1 left.
    colours = {cell: card.colour for cell, card in left.items()}
    colour_groups = tuple((colours[group[0]], tuple(group)) for group in groups(colours)
                          if len(group) >= MIN_COLOUR_GROUP)

    # Step 3: butterflies next to a card of their colour, both left by step 1.
    butterflies = tuple(
        (cell, garden[cell][-1]) for cell, card in sorted(left.items())
        if card.butterfly and any(near in left and left[near].colour == card.butterfly
                                  for near in _neighbours(cell)))

    points = (-removed_count + sum(len(cells) for _, cells in colour_groups)
              + len(butterflies))
    return GardenScore(points, removed, removed_count, colour_groups, butterflies)


def garden_from_cells(cells: Sequence[Mapping[str, Any]]) -> dict[Cell, list[str]]:
    """A garden from the observation form: `[{"x": X, "y": Y, "cards": [...]}, ...]`."""
    return {(cell["x"], cell["y"]): list(cell["cards"]) for cell in cells}
