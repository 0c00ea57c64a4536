"""League throughput: matches per second of a 4-bot mandala league, 1 worker against 2.

The bots are the sample bots, sandboxed, two copies each of `random` and `greedy` under
other names (the league needs distinct names); when greedy cannot play mandala yet, four
copies of `random`. Each run is a whole fresh league (worker start-up, bot start-up, every
database commit), timed from the first worker's start to the last commit; the same league
seed on both, so both play the same matches.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from arena.league import LeagueConfig, ProcessPool, run, start_league
from arena.ratings import Outcome
from arena.sdk import strategies

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
TARGET_SPEEDUP = 1.7
TARGET_RATE = 10.0   # matches per second with 2 workers


@dataclass(frozen=True)
class Figure:
    workers: int
    matches: int
    seconds: float
    first_match: float
    """Seconds until the first match was stored: worker and bot start-up."""
    forfeits: int
    """Matches that ended by a forfeit (should be 0: a forfeit cuts a match short)."""

    @property
    def rate(self) -> float:
        return self.matches / self.seconds

    @property
    def steady_rate(self) -> float:
        """Matches per second after the first one: without the start-up."""
        return (self.matches - 1) / (self.seconds - self.first_match)


def _bot_copies(where: Path) -> tuple[list[Path], str]:
    """Four bot folders with distinct names, and a note of what they are."""
    try:
        strategies.get("greedy", "mandala")
        kinds = ["random", "random", "greedy", "greedy"]
    except (LookupError, ImportError):
        kinds = ["random"] * 4
    folders = []
    for index, kind in enumerate(kinds):
        folder = where / f"{kind}-{index}"
        shutil.copytree(SAMPLE_BOTS / kind, folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
        manifest = folder / "bot.toml"
        manifest.write_text("\n".join(f'name = "{kind}-{index}"' if line.startswith("name =")
                                      else line for line in manifest.read_text().splitlines())
                            + "\n")
        folders.append(folder)
    return folders, " + ".join(f"{kinds.count(kind)} x {kind}" for kind in dict.fromkeys(kinds))


def measure(deals: int = 40, move_time: float = 1.0, seed: int = 1) -> tuple[list[Figure], str]:
    """Plays the league with 1 and then 2 workers; returns the figures and the bots used."""
    figures = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-league-") as temp:
        folders, bots = _bot_copies(Path(temp))
        config = LeagueConfig(game="mandala", bots=tuple(map(str, folders)), deals=deals,
                              seed=seed, time_control={"move_time": move_time})
        for workers in (1, 2):
            finished: list[tuple[float, Outcome]] = []
            with start_league(Path(temp) / f"league-{workers}", "bench", config) as league:
                started = time.monotonic()
                played = run(league, ProcessPool(workers),
                             on_match=lambda outcome: finished.append((time.monotonic(),
                                                                       outcome)))
                seconds = time.monotonic() - started
            forfeits = sum(outcome.forfeit_seat is not None for _, outcome in finished)
            figures.append(Figure(workers, played, seconds, finished[0][0] - started, forfeits))
    return figures, bots


def render(measured: tuple[list[Figure], str]) -> str:
    figures, bots = measured
    rows = [[f.workers, f.matches, f"{f.seconds:.2f}", f"{f.first_match:.2f}",
             f"{f.rate:.1f}", f"{f.rate * 60:.0f}", f"{f.steady_rate:.1f}", f.forfeits]
            for f in figures]
    table = tabulate(rows, headers=["workers", "matches", "seconds", "first match s",
                                    "matches/s", "matches/min", "after start-up/s",
                                    "forfeits"])
    one, two = figures[0], figures[-1]
    speedup = two.rate / one.rate
    return (f"mandala league, 4 sandboxed sample bots ({bots}), 2 players\n{table}\n"
            f"speed-up with 2 workers: {speedup:.2f}x (target >= {TARGET_SPEEDUP}x: "
            f"{'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}); "
            f"{two.rate:.1f} matches/s with 2 workers (target >= {TARGET_RATE:g}: "
            f"{'met' if two.rate >= TARGET_RATE else 'NOT met'})")
