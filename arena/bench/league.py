"""League throughput: matches per second of a 4-bot mandala league, 1 worker against 2.

The bots are the sample bots, sandboxed, two copies each of `random` and `greedy` under
other names (the league needs distinct names). Each run is a whole fresh league (worker
start-up, bot start-up, every database commit), timed from the first worker's start to the
last commit; the same league seed on all, so all play the same matches. The runs alternate,
1 worker, 1 worker pinned to a core, 2 workers, three times: the best of each is compared
(other work on the machine only ever slows a run).

2 workers on 2 cores are pinned, one core each (`arena.league.workers.pinned_cpus`); a lone
worker is not, by default: it keeps its own threads on one core and its bots on the others
(`arena.hostload.keep_apart`), so it uses both cores and a second worker cannot double it.
The target compares 2 workers with the default lone worker; the speed-up over a lone worker
pinned as each of the two is shows what the second worker adds by itself, without what
placement alone buys on this machine.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from arena import hostload
from arena.errors import ArenaError
from arena.league.lifecycle import open_league, run
from arena.league.config import LeagueConfig
from arena.stats.ratings import Outcome
from arena.league.workers import ProcessPool, pinned_cpus
from sample_bots import sample_bot

TARGET_SPEEDUP = 1.8   # matches per second with 2 workers over those with 1
TARGET_RATE = 10.0   # matches per second with 2 workers


@dataclass(frozen=True)
class Figure:
    workers: int
    pinned: bool
    """Each worker and its bots kept on a core of its own."""
    matches: int
    seconds: float
    first_match: float
    """Seconds until the first match was stored: worker and bot start-up."""
    forfeits: int
    """Matches that ended by a forfeit (should be 0: a forfeit cuts a match short)."""
    busy_core_seconds: float | None = None
    """CPU time the whole machine used over the run (every process: workers, bots, the
    league's own), from the kernel's counter: how many cores the run kept busy."""

    @property
    def rate(self) -> float:
        return self.matches / self.seconds

    @property
    def busy_cores(self) -> float | None:
        return None if self.busy_core_seconds is None else self.busy_core_seconds / self.seconds

    @property
    def cpu_per_match(self) -> float | None:
        """CPU seconds the machine spent per match."""
        return None if self.busy_core_seconds is None else self.busy_core_seconds / self.matches

    @property
    def steady_rate(self) -> float:
        """Matches per second after the first one: without the start-up."""
        return (self.matches - 1) / (self.seconds - self.first_match)


def _bot_copies(where: Path) -> tuple[list[Path], str]:
    """Four bot folders with distinct names, and a note of what they are."""
    kinds = ["random", "random", "greedy", "greedy"]
    folders = []
    for index, kind in enumerate(kinds):
        folder = where / f"{kind}-{index}"
        shutil.copytree(sample_bot(kind), folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
        manifest = folder / "bot.toml"
        manifest.write_text("\n".join(f'name = "{kind}-{index}"' if line.startswith("name =")
                                      else line for line in manifest.read_text().splitlines())
                            + "\n")
        folders.append(folder)
    return folders, " + ".join(f"{kinds.count(kind)} x {kind}" for kind in dict.fromkeys(kinds))


CONFIGURATIONS = ((1, False), (1, True), (2, False))
"""(workers, pinned even when they leave a core free) of each run, in turn."""


def _play_once(folder: Path, config: LeagueConfig, workers: int, pin: bool) -> Figure:
    finished: list[tuple[float, Outcome]] = []
    pinned = pinned_cpus(workers, config.sandbox, always=pin) is not None
    with open_league(folder, config, name="bench") as league:
        started, busy = time.monotonic(), hostload.machine_cpu_seconds()
        played = run(league, ProcessPool(workers, pin=pin),
                     on_match=lambda outcome: finished.append((time.monotonic(), outcome)))
        seconds, busy = time.monotonic() - started, hostload.machine_cpu_seconds() - busy
    forfeits = sum(outcome.forfeit_seat is not None for _, outcome in finished)
    return Figure(workers, pinned, played, seconds, finished[0][0] - started, forfeits, busy)


def measure(deals: int = 20, move_time: float = 1.0, repeats: int = 3,
            seed: int = 1) -> tuple[list[list[Figure]], str]:
    """Plays the league `repeats` times in each of CONFIGURATIONS, alternating (so load from
    other work falls on all alike); returns the figures per configuration and the bots."""
    if repeats < 1:
        raise ArenaError(f"--repeats must be at least 1, not {repeats}")
    runs: list[list[Figure]] = [[] for _ in CONFIGURATIONS]
    with tempfile.TemporaryDirectory(prefix="arena-bench-league-") as temp:
        folders, bots = _bot_copies(Path(temp))
        config = LeagueConfig(game="mandala", bots=tuple(map(str, folders)), deals=deals,
                              seed=seed, time_control={"move_time": move_time})
        for repeat in range(repeats):
            for index, (workers, pin) in enumerate(CONFIGURATIONS):
                runs[index].append(_play_once(Path(temp) / f"league-{index}-{repeat}",
                                              config, workers, pin))
    return runs, bots


def render(measured: tuple[list[list[Figure]], str]) -> str:
    """A table of every run and a verdict on the best run of each (as timeit does: the
    fastest run is the one least disturbed by other work on the machine)."""
    runs, bots = measured
    def shown(value: float | None, form: str) -> str:
        return "" if value is None else format(value, form)
    rows = [[f.workers, "yes" if f.pinned else "no", f.matches, f"{f.seconds:.2f}",
             f"{f.first_match:.2f}", f"{f.rate:.1f}", f"{f.rate * 60:.0f}",
             f"{f.steady_rate:.1f}", f.forfeits, shown(f.busy_cores, ".2f"),
             shown(None if f.cpu_per_match is None else f.cpu_per_match * 1000, ".1f")]
            for figures in runs for f in figures]
    table = tabulate(rows, headers=["workers", "pinned", "matches", "seconds", "first match s",
                                    "matches/s", "matches/min", "after start-up/s",
                                    "forfeits", "cores busy", "CPU ms a match"])
    one, one_pinned, two = (max(figures, key=lambda f: f.rate) for figures in runs)
    speedup = two.rate / one.rate

    def median(figures: list[Figure]) -> float:
        return sorted(f.rate for f in figures)[len(figures) // 2]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    pinning = (f"; over 1 worker pinned to a core ({one_pinned.rate:.1f} matches/s), as each "
               f"of the 2 is: {two.rate / one_pinned.rate:.2f}x best to best"
               if one_pinned.pinned else "")
    return (f"mandala league, 4 sandboxed sample bots ({bots}), 2 players; "
            f"{os.cpu_count()} cores, load average {load} (other work slows the runs)\n"
            f"{table}\n"
            f"best runs: {one.rate:.1f} matches/s with 1 worker, {two.rate:.1f} with 2 "
            f"(target >= {TARGET_RATE:g}: {'met' if two.rate >= TARGET_RATE else 'NOT met'})\n"
            f"speed-up with 2 workers: {speedup:.2f}x best to best, "
            f"{median(runs[-1]) / median(runs[0]):.2f}x median to median (target >= "
            f"{TARGET_SPEEDUP}x: {'met' if speedup >= TARGET_SPEEDUP else 'NOT met'})"
            f"{pinning}{_bound(one, two)}")


def _bound(one: Figure, two: Figure) -> str:
    """What the cores allow: a lone worker that keeps c of the n cores busy leaves room for
    at most n / c times its rate, and only as long as each match costs no more CPU."""
    if one.busy_cores is None or two.cpu_per_match is None or not one.busy_cores:
        return ""
    cores = os.cpu_count() or 1
    extra = two.cpu_per_match / one.cpu_per_match - 1
    return (f"\nthe lone worker kept {one.busy_cores:.2f} of the {cores} cores busy: at its "
            f"CPU per match, more workers can make at most {cores / one.busy_cores:.2f}x; "
            f"with 2, each match cost {extra:+.0%} CPU")
