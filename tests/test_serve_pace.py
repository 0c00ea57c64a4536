"""A service's pace (`arena serve --matches-per-minute`): a bucket of a minute's worth of
matches, full at start, filled at the pace; a round plays while it holds a match."""
from __future__ import annotations

import pytest

from arena.serve.pace import Pace


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_without_a_pace_every_round_starts_at_once():
    pace = Pace(None)
    pace.played(10_000)
    assert pace.wait() == 0.0


def test_a_minutes_worth_is_played_at_once_then_the_pace_holds():
    clock = Clock()
    pace = Pace(60, clock)   # a match a second
    for _ in range(15):      # rounds of 4 matches: 60 in the bucket
        assert pace.wait() == 0.0
        pace.played(4)
    assert pace.wait() == pytest.approx(1.0)   # empty: one match's worth of waiting
    clock.now += 1.0
    assert pace.wait() == 0.0
    pace.played(4)   # a round is never cut short: the bucket goes below empty
    assert pace.wait() == pytest.approx(4.0)


def test_an_idle_service_saves_at_most_a_minutes_worth():
    clock = Clock()
    pace = Pace(30, clock)
    pace.played(30)
    clock.now += 3600.0   # an hour without a round (too few bots)
    pace.played(30)
    assert pace.wait() == pytest.approx(2.0)   # the bucket held 30, not 30 an hour


def test_over_a_long_run_it_plays_the_pace_and_no_more():
    clock = Clock()
    pace = Pace(120, clock)
    played = 0
    while clock.now < 100.0 + 600:   # ten minutes of rounds of 12
        wait = pace.wait()
        if wait:
            clock.now += wait
            continue
        pace.played(12)
        played += 12
    assert 120 * 10 <= played <= 120 * 11 + 12   # the pace, plus the first minute's worth


def test_a_pace_below_one_match_a_minute_is_refused():
    with pytest.raises(ValueError):
        Pace(0)
