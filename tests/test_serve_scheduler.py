"""The service's scheduler: new versions play first, near their rating, until their interval is
narrow; then tables go where neighbouring ranks are least certain."""
from __future__ import annotations

import collections
import math
import random

from arena.serve.scheduler import MIN_GAMES, NARROW, Rated, is_narrow, pick_tables


def ladder(*bots: tuple[str, float, float, int]) -> list[Rated]:
    return [Rated(key, elo, interval, games) for key, elo, interval, games in bots]


def no_los(better: Rated, worse: Rated) -> float:
    raise AssertionError("LOS is asked only when every bot is narrow")


def test_too_few_bots_for_a_table_give_no_tables():
    assert pick_tables(ladder(("a", 0, math.nan, 0)), 2, 4, random.Random(1), no_los) == []
    assert pick_tables(ladder(("a", 0, 10, 99), ("b", 0, 10, 99)), 3, 4, random.Random(1),
                       no_los) == []


def test_a_narrow_interval_needs_enough_games():
    assert is_narrow(Rated("a", 0, NARROW, MIN_GAMES))
    assert not is_narrow(Rated("a", 0, NARROW + 1, MIN_GAMES))
    assert not is_narrow(Rated("a", 0, 0.0, MIN_GAMES - 1))   # few deals: not believed
    assert not is_narrow(Rated("a", 0, math.nan, 500))


def test_a_new_version_plays_every_table_against_opponents_near_its_rating():
    field = ladder(("top", 400, 30, 900), ("high", 200, 30, 900), ("mid", 90, 30, 900),
                   ("low", -200, 30, 900), ("bottom", -400, 30, 900),
                   ("new", 120, 180, 6))
    tables = pick_tables(field, 2, 50, random.Random(3), no_los)
    assert len(tables) == 50 and all(table[0] == "new" for table in tables)
    opponents = collections.Counter(table[1] for table in tables)
    assert set(opponents) == {"mid", "high"}   # the two nearest in rating


def test_the_unsettled_version_with_fewest_games_goes_first():
    field = ladder(("a", 0, 30, 900), ("b", 50, 30, 900), ("c", 10, math.nan, 0),
                   ("d", 20, 90, 30))
    first = pick_tables(field, 2, 1, random.Random(1), no_los)[0]
    assert first[0] == "c"
    # Within one batch the games it is given count: the other new one gets tables too.
    batch = pick_tables(field, 2, 40, random.Random(1), no_los)
    assert {table[0] for table in batch} == {"c", "d"}


def test_settled_ladders_play_most_where_neighbouring_order_is_uncertain():
    field = ladder(("a", 300, 40, 900), ("b", 100, 40, 900), ("c", 95, 40, 900),
                   ("d", -300, 40, 900))
    los = {("a", "b"): 0.999, ("b", "c"): 0.55, ("c", "d"): 0.9999}
    tables = pick_tables(field, 2, 2000, random.Random(5),
                         lambda better, worse: los[(better.key, worse.key)])
    counts = collections.Counter(tables)
    assert counts[("b", "c")] > 0.9 * len(tables)
    assert counts[("a", "b")] > 0 and counts[("c", "d")] > 0   # never starved for good


def test_multiplayer_tables_hold_distinct_bots():
    field = ladder(*[(f"b{i}", 100 * i, 40, 900) for i in range(6)], ("new", 250, 200, 4))
    for table in pick_tables(field, 4, 30, random.Random(2), no_los):
        assert len(table) == 4 == len(set(table)) and table[0] == "new"
