"""Which tables a ladder plays next: where a match tells the most. Pure, no I/O.

1. A version whose rating is not yet narrow (interval unknown or wider than +/- `NARROW`
   Elo, or fewer than `MIN_GAMES` games) plays first, the one with the fewest games before
   the others, against opponents near its rating (a match between close bots carries the
   most information about their difference: p(1 - p) is largest at p = 1/2).
2. Once every listed version is narrow, tables go to neighbouring ranks whose order is least
   certain: a pair of neighbours is drawn with weight 1 - |2 LOS - 1| (LOS 50%: weight 1;
   a settled order: next to none), so uncertain places get most matches without any pair
   being starved forever.

Each table plays every seating, each on a new deal (`arena.serve.player`): bots on a ladder
are not trusted, so none ever plays a deal twice (arena.league.schedule, independent seating).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

NARROW = 50.0
"""A rating is narrow once its 95% interval is at most +/- this many Elo."""
MIN_GAMES = 40
"""Games (20 deals of two seatings) before an interval is believed: with few deals the
deal-clustered interval is unreliable, often far too narrow (arena.stats.ratings)."""
FLOOR = 0.02
"""Least weight of a neighbouring pair, so a settled order is still checked now and then."""


@dataclass(frozen=True)
class Rated:
    """A listed version as the scheduler sees it (ladder order, best first)."""

    key: Hashable
    elo: float
    interval: float
    """95% half-width; NaN when unknown (too few results)."""
    games: int


def is_narrow(bot: Rated) -> bool:
    return bot.games >= MIN_GAMES and not math.isnan(bot.interval) and bot.interval <= NARROW


def pick_tables(ladder: Sequence[Rated], players: int, count: int, rng: random.Random,
                los: Callable[[Rated, Rated], float]) -> list[tuple[Hashable, ...]]:
    """Up to `count` tables of `players` versions each (none when there are too few)."""
    if players < 2 or len(ladder) < players:
        return []
    planned = {bot.key: 0 for bot in ladder}   # games given in this batch, to spread them
    tables = []
    for _ in range(count):
        fresh = [bot for bot in ladder if not is_narrow(bot)]
        if fresh:
            focus = min(fresh, key=lambda bot: (bot.games + planned[bot.key],
                                                -_width(bot), str(bot.key)))
            table = [focus] + _nearest(focus, ladder, players - 1, rng, exclude=[focus])
        else:
            a, b = _uncertain_neighbours(ladder, rng, los)
            table = [a, b] + _nearest(a, ladder, players - 2, rng, exclude=[a, b])
        for bot in table:
            planned[bot.key] += players
        tables.append(tuple(bot.key for bot in table))
    return tables


def _width(bot: Rated) -> float:
    return math.inf if math.isnan(bot.interval) else bot.interval


def _nearest(focus: Rated, ladder: Sequence[Rated], count: int, rng: random.Random,
             exclude: Sequence[Rated]) -> list[Rated]:
    """`count` opponents drawn from the `count + 1` nearest in rating: close, not always the
    same ones."""
    if count <= 0:
        return []
    others = sorted((bot for bot in ladder if bot not in exclude),
                    key=lambda bot: (abs(bot.elo - focus.elo), str(bot.key)))
    return rng.sample(others[:count + 1], min(count, len(others)))


def _uncertain_neighbours(ladder: Sequence[Rated], rng: random.Random,
                          los: Callable[[Rated, Rated], float]) -> tuple[Rated, Rated]:
    pairs = list(zip(ladder, ladder[1:]))
    weights = []
    for better, worse in pairs:
        chance = los(better, worse)
        weights.append(FLOOR if math.isnan(chance) else max(FLOOR, 1 - abs(2 * chance - 1)))
    return rng.choices(pairs, weights=weights)[0]
