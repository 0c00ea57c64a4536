"""How fast a service plays: at most `--matches-per-minute`, on average.

A service plays for as long as it runs, as fast as its workers can: on a machine it shares,
or with light bots (a random bot's match takes some 40 ms), that is a core or more, and a
database that grows by a million matches a day. An operator who wants less gives a pace.

The pace is a bucket of matches that fills at `per_minute` a minute and holds one minute's
worth; it starts full, so a service just started (or a new version's first matches) plays
its first minute's worth at once. A round is played while the bucket holds a match; the
round's matches are then taken out (it may go below empty: a round is a few tables, never
cut short), and the next round waits until the bucket holds a match again.
"""
from __future__ import annotations

import time
from typing import Callable


class Pace:
    """The bucket; `per_minute` None: no pace, every round at once."""

    def __init__(self, per_minute: int | None, clock: Callable[[], float] = time.monotonic):
        if per_minute is not None and per_minute < 1:
            raise ValueError(f"a pace is at least 1 match a minute, not {per_minute}")
        self.per_minute = per_minute
        self.clock = clock
        self.matches = float(per_minute or 0)   # in the bucket now
        self.filled_at = clock()

    def wait(self) -> float:
        """Seconds until the next round may start (0: now)."""
        if self.per_minute is None:
            return 0.0
        self._fill()
        return max(0.0, (1.0 - self.matches) * 60.0 / self.per_minute)

    def played(self, matches: int) -> None:
        """A round of `matches` was played."""
        if self.per_minute is not None:
            self._fill()
            self.matches -= matches

    def _fill(self) -> None:
        now = self.clock()
        self.matches = min(float(self.per_minute),
                           self.matches + (now - self.filled_at) * self.per_minute / 60.0)
        self.filled_at = now
