"""`flowers` scoring, one hand-built garden per rule, each scored by hand from the rules.

Gardens are drawn as text: one row per line, top row first (y = 0, then -1, ...), columns
from x = 0; `.` is an empty cell; a stack is written bottom card first: `b3/g2/r4` is a red 4
covering a green 2 covering a blue 3.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.flowers_scoring import CARDS, score


def garden(picture: str) -> dict:
    cells = {}
    for row, line in enumerate(picture.strip("\n").splitlines()):
        for column, token in enumerate(line.split()):
            if token != ".":
                cells[(column, -row)] = token.split("/")
    return cells


# (rule, picture, points, removed cards, colour group sizes, scoring butterflies)
HAND_SCORED = [
    ("exactly four 4s form a valid group",
     "b4 r4 g4 y4", 0, 0, [], 0),
    ("five 4s in one connected set are all removed, never split into a valid four",
     "b4 r4 g4 y4 b4", -5, 5, [], 0),
    ("five 4s bent into an L are still one invalid set",
     """
     b4 r4 g4
     .  .  y4
     .  .  b4
     """, -5, 5, [], 0),
    ("a fifth 4 touching only diagonally is its own group and is removed alone",
     """
     b4 r4 g4 y4
     .  .  .  .  b4
     """, -1, 1, [], 0),
    ("a group of four 4s split in two by a 1 leaves two invalid pairs",
     "r4 g4 b1 y4 r4", -4, 4, [], 0),
    ("exactly three 3s form a valid group",
     """
     r3 g3
     .  b3
     """, 0, 0, [], 0),
    ("four 3s are all removed",
     "r3 g3 b3 y3", -4, 4, [], 0),
    ("three 3s split two and one by a 1 are both removed",
     "r3 g3 b1 y3", -3, 3, [], 0),
    ("exactly two 2s form a valid group",
     "r2 g2", 0, 0, [], 0),
    ("three 2s are all removed, a lone 2 too",
     "r2 g2 b2 y1 y2", -4, 4, [], 0),
    ("two 2s split by a 1 are both removed",
     "r2 b1 g2", -2, 2, [], 0),
    ("a 1 orthogonally next to another 1 removes both",
     "r1 g1", -2, 2, [], 0),
    ("a 1 diagonal to another 1 is alone: both kept",
     """
     b1 g2 y2
     .  r1 .
     """, 0, 0, [], 0),
    ("covered cards go with their removed top card and each costs a point",
     "b3/g2/r4 y1", -3, 3, [], 0),
    ("covered cards under a valid top card stay and cost nothing",
     "b3/g2/r2 y2", 0, 0, [], 0),
    ("a colour group of four scores nothing",
     "b3 b3 b3 b1", 0, 0, [], 0),
    ("a colour group of five scores one per card",
     "b3 b3 b3 b2 b2", 5, 0, [5], 0),
    ("removal comes before colour groups: a removed card can break a group of five",
     "b2 b2 b4 b3 b3 b3", -1, 1, [], 0),
    ("removal comes before colour groups: what remains can still be five",
     "b3 b3 b3 b2 b2 b4", 4, 1, [5], 0),
    ("covered cards of a colour group's colour do not count for it",
     "b3 b3 b3 b2/r2 b2/r2", 0, 0, [], 0),
    ("a butterfly next to a card of its colour scores one",
     "y4+g g4 r4 b4", 1, 0, [], 1),
    ("a butterfly touching its colour only diagonally scores nothing",
     """
     .    g1
     y4+g r4
     b4   r4
     """, 0, 0, [], 0),
    ("a covered butterfly scores nothing",
     "y4+g/r4 g4 b4 y4", 0, 0, [], 0),
    ("a butterfly whose only neighbour of its colour is removed scores nothing",
     """
     y4+g r4 b4 y4
     g3   .  .  .
     """, -1, 1, [], 0),
    ("a removed butterfly card scores nothing",
     "y4+g g3 g3 g3", -1, 1, [], 0),
    ("two butterflies of each other's colours both score",
     "y4+r r4+y b4 g4", 2, 0, [], 2),
    ("colour groups and butterflies add up after the removals",
     """
     g4+b b4 b4 b4
     b3   b3 b3 g1/g1
     """, 7, 0, [6], 1),
]


@pytest.mark.parametrize("rule, picture, points, removed, colour_groups, butterflies",
                         HAND_SCORED, ids=[case[0] for case in HAND_SCORED])
def test_hand_scored_garden(rule, picture, points, removed, colour_groups, butterflies):
    result = score(garden(picture))
    assert result.points == points
    assert result.removed_count == removed
    assert sorted(len(cells) for _, cells in result.colour_groups) == colour_groups
    assert len(result.butterflies) == butterflies
    assert result.points == (-result.removed_count + result.colour_points
                             + len(result.butterflies))


def test_there_are_at_least_twenty_hand_scored_gardens():
    assert len(HAND_SCORED) >= 20


def test_breakdown_names_removed_stacks_groups_and_butterflies():
    result = score(garden("""
        g4+b b4 b4 b4
        b3   b3 b3 r1/b3/r2
        """))
    assert result.removed == (((3, -1), ("r1", "b3", "r2")),)
    assert result.removed_count == 3
    assert result.colour_groups == (("b", ((0, -1), (1, -1), (1, 0), (2, -1), (2, 0),
                                           (3, 0))),)
    assert result.butterflies == (((0, 0), "g4+b"),)
    assert result.points == -3 + 6 + 1
    assert result.describe() == [
        "removed 3 (-3): r1/b3/r2 at 3 -1",
        "colour groups (+6): blue 6",
        "butterflies (+1): g4+b at 0 0",
        "points 4",
    ]


# -- properties of the scoring function itself --------------------------------------------
cells = st.tuples(st.integers(-3, 3), st.integers(-3, 3))
stacks = st.lists(st.sampled_from(sorted(CARDS)), min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(cells, stacks, max_size=25), st.integers(-5, 5), st.integers(-5, 5))
def test_score_does_not_depend_on_where_the_garden_lies(layout, dx, dy):
    moved = {(x + dx, y + dy): stack for (x, y), stack in layout.items()}
    assert score(moved).points == score(layout).points
    assert score(moved).removed_count == score(layout).removed_count


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(cells, stacks, max_size=25))
def test_score_is_unchanged_by_turning_or_mirroring_the_garden(layout):
    turned = {(-y, x): stack for (x, y), stack in layout.items()}
    mirrored = {(-x, y): stack for (x, y), stack in layout.items()}
    for other in (turned, mirrored):
        assert score(other).points == score(layout).points


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(cells, stacks, max_size=25))
def test_points_are_the_sum_of_the_three_steps(layout):
    result = score(layout)
    assert result.removed_count == sum(len(cards) for _, cards in result.removed)
    assert result.points == (-result.removed_count + result.colour_points
                             + len(result.butterflies))
    assert all(len(cells) >= 5 for _, cells in result.colour_groups)
