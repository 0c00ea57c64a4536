"""What the sandbox costs: a bot's start-up, and freezing and thawing it between moves.

- start-up: from a fresh process to its handshake and stream, for the `random` sample bot,
  sandboxed (what a league pays at each fresh start). Run as a script
  (`python3 arena/bench/sandbox.py STARTS`, one JSON line) it measures whichever `arena` its
  PYTHONPATH finds, so another checkout (say main) is measured in the same run.
- freeze/thaw per move: what the match runner pays on each move of a bot, its thaw when
  the move is asked and its freeze (not waited for) once it is made, timed in real mandala
  matches of the `random` sample bot, sandboxed, against the built-in random strategy (no
  other bot of the match is frozen meanwhile: the case that paid most, see
  `cgroups.BotCgroups._keep_freezer_active`). Target: TARGET_MOVE_US.
- freeze/thaw of a bot busy in four threads, waited for and not; and reading its CPU time.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.errors import ArenaError

SAMPLE_RANDOM_BOT = Path(__file__).resolve().parents[2] / "sample_bots" / "random"
STARTUP_BUDGET = 30.0
TARGET_STARTUP_RATIO = 1.3
TARGET_MOVE_US = 50.0
"""Microseconds a bot's thaw and freeze may cost the match runner per move, together."""
BUSY_BOT = """
import threading
def spin():
    while True:
        pass
for _ in range(4):
    threading.Thread(target=spin, daemon=True).start()
print("busy", flush=True)
threading.Event().wait()
"""


def startup_seconds(starts: int, unsafe: bool = False) -> list[float]:
    """Seconds from spawning the random sample bot to its open stream, `starts` times."""
    from arena.bots import BotHost, BotSpec
    spec = BotSpec.load(SAMPLE_RANDOM_BOT)
    times = []
    with BotHost(unsafe_no_sandbox=unsafe, fresh_per_match=True) as host:
        for _ in range(starts + 1):   # the first start warms caches: not counted
            began = time.perf_counter()
            process = host._start(spec, STARTUP_BUDGET)   # spawn, handshake, stream
            times.append(time.perf_counter() - began)
            process.kill()
    return times[1:]


def startup_elsewhere(checkout: Path, starts: int) -> list[float]:
    """`startup_seconds` of the arena in another checkout (its PYTHONPATH), in a subprocess."""
    # -P: this folder (arena/bench, with its engine.py) stays off sys.path.
    done = subprocess.run([sys.executable, "-P", __file__, str(starts)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"},
                          cwd=checkout, timeout=STARTUP_BUDGET * (starts + 2))
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise ArenaError(f"the start-up benchmark of {checkout} failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class _TimedProcess:
    """A sandboxed bot process whose thaw() and freeze() calls are timed: each freeze after
    a thaw closes one move's pair."""

    def __init__(self, process, pairs: list[float]):
        self._process = process
        self._pairs = pairs
        self._thaw: float | None = None   # seconds the thaw of the move under way took

    def __getattr__(self, name: str):
        return getattr(self._process, name)

    def thaw(self) -> None:
        began = time.perf_counter()
        self._process.thaw()
        self._thaw = time.perf_counter() - began

    def freeze(self, wait: bool = True) -> None:
        began = time.perf_counter()
        self._process.freeze(wait)
        took = time.perf_counter() - began
        if self._thaw is not None:
            self._pairs.append(self._thaw + took)
        self._thaw = None


def per_move_us(matches: int) -> tuple[float, float, int]:
    """Median and p99 microseconds of thaw + freeze per move of the `random` sample bot in
    `matches` mandala matches against the built-in random strategy, and how many moves."""
    from arena import sandbox
    from arena.bots import BotHost, BotSpec
    from arena.match import StrategySeat, play_match

    pairs: list[float] = []

    def spawn(*args, **options):
        return _TimedProcess(sandbox.spawn(*args, **options), pairs)

    spec = BotSpec.load(SAMPLE_RANDOM_BOT)
    with BotHost(spawn=spawn) as host, host.seat(spec) as bot:
        for seed in range(matches):
            seats = [bot, StrategySeat("random", "mandala")]
            play_match("mandala", 2, {}, seed, seats if seed % 2 else seats[::-1])
    if not pairs:
        raise ArenaError("the sample bot made no move: see its log")
    return 1e6 * statistics.median(pairs), 1e6 * _p99(pairs), len(pairs)


def freeze_thaw_us(pairs: int) -> dict[str, float]:
    """Median and p99 microseconds of freeze() then thaw() on a busy bot, of each alone,
    and of cpu_seconds()."""
    from arena import sandbox
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    log = folder / "bot.log"
    bot = sandbox.spawn([sys.executable, "-c", BUSY_BOT], folder, env={}, log_path=log)
    try:
        deadline = time.monotonic() + STARTUP_BUDGET
        while "busy" not in (log.read_text() if log.exists() else ""):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the busy bot did not start: {log.read_text()}")
            time.sleep(0.01)
        freeze, thaw, cpu, no_wait = [], [], [], []
        for _ in range(pairs):
            began = time.perf_counter()
            bot.freeze(wait=False)
            no_wait.append(time.perf_counter() - began)
            time.sleep(0.001)
            bot.thaw()
            time.sleep(0.001)
        for _ in range(pairs):
            began = time.perf_counter()
            bot.freeze()
            frozen = time.perf_counter()
            bot.thaw()
            thawed = time.perf_counter()
            bot.cpu_seconds()
            cpu.append(time.perf_counter() - thawed)
            freeze.append(frozen - began)
            thaw.append(thawed - frozen)
            time.sleep(0.001)   # let it run between pairs, as between moves
        pair = [a + b for a, b in zip(freeze, thaw)]
    finally:
        bot.kill()
    return {name: (1e6 * statistics.median(values), 1e6 * _p99(values))
            for name, values in (("freeze + thaw", pair), ("freeze", freeze),
                                 ("thaw", thaw), ("freeze(wait=False)", no_wait),
                                 ("cpu_seconds", cpu))}


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


if __name__ == "__main__":
    print(json.dumps(startup_seconds(int(sys.argv[1]))))
