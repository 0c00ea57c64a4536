"""How many matches the service plays at once: never more than the cores (or the Ray
cluster's CPUs) it has, and a warning when the machine's load keeps it from even that.

A match's bots are timed by the wall clock; two matches sharing a core each get half of it,
and their bots time out for the host's sake (voided and replayed: arena.hostload) instead of
playing. So the service's workers are clamped to the cores. Other processes can still take
the cores: `LoadWatch` reads the machine's run queue (the 1-minute load average, which counts
every runnable task, ours included) and logs one warning when it has stayed above the cores
for `WINDOW` seconds, again every `REPEAT` seconds while it lasts, and one line when it ends.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from arena import hostload

log = logging.getLogger(__name__)

WINDOW = 60.0
"""Seconds the load must stay above the cores before the service warns."""
REPEAT = 600.0
"""Seconds between warnings while the load stays high."""
SAMPLE = 5.0
"""Seconds between readings of the load."""


def clamp_workers(wanted: int | None, cores: int, where: str) -> int:
    """The matches to play at once: `wanted` (default: all the cores) but never more than the
    `cores` there are `where` ("on this machine"), saying so in a log line when it cuts."""
    cores = max(1, cores)
    if wanted is None:
        return cores
    if wanted > cores:
        log.warning("--workers %d, but there are %d cores %s: playing %d matches at once (more "
                    "would share cores, and their bots would time out for the host's sake)",
                    wanted, cores, where, cores)
        return cores
    return wanted


def load_average() -> float:
    """The machine's 1-minute load average: runnable (and uninterruptible) tasks, smoothed."""
    with open("/proc/loadavg") as file:
        return float(file.read().split()[0])


class LoadWatch(threading.Thread):
    """A thread that warns (log) while the machine's load stays above its cores."""

    def __init__(self, workers: int, *, cores: int | None = None,
                 read: Callable[[], float] = load_average, window: float = WINDOW,
                 repeat: float = REPEAT, sample: float = SAMPLE):
        super().__init__(name="arena-serve-load", daemon=True)
        self.workers = workers
        self.cores = cores or hostload.cores()
        self.read = read
        self.window, self.repeat, self.sample = window, repeat, sample
        self.stopping = threading.Event()
        self.high_since: float | None = None
        self.warned_at: float | None = None
        self.warnings = 0

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        while not self.stopping.wait(self.sample):
            try:
                self.check(self.read(), time.monotonic())
            except OSError:   # no /proc/loadavg: nothing to watch
                return

    def check(self, load: float, now: float) -> None:
        """Takes one reading of the load at `now` (monotonic seconds)."""
        if load <= self.cores:
            if self.warned_at is not None:
                log.warning("the machine's load (%.1f) is back within its %d cores",
                            load, self.cores)
            self.high_since = self.warned_at = None
            return
        if self.high_since is None:
            self.high_since = now
        if now - self.high_since < self.window:
            return
        if self.warned_at is None or now - self.warned_at >= self.repeat:
            self.warned_at = now
            self.warnings += 1
            log.warning("the machine's load (1-minute average %.1f) has stayed above its %d "
                        "cores for %.0f s: the %d matches played at once get less CPU than "
                        "they are due, so timeouts are voided and replayed and the ladders "
                        "slow down; other processes use the cores (see `top`)", load,
                        self.cores, now - self.high_since, self.workers)
