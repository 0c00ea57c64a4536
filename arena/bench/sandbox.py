"""What the sandbox costs: a bot's start-up, and freezing and thawing it between moves.

- start-up: from a fresh process to its handshake and stream, for the `random` sample bot,
  sandboxed (what a league pays at each fresh start). Run as a script
  (`python3 arena/bench/sandbox.py STARTS`, one JSON line) it measures whichever `arena` its
  PYTHONPATH finds, so another checkout (say main) is measured in the same run.
- thaw/hold per move: what the match runner pays on each move of a bot, its thaw when the
  move is asked and its hold once it is made (`cgroups.BotCgroups.hold`), timed in real
  mandala matches of the `random` sample bot, sandboxed, against the built-in random
  strategy; beside it, in turns on the same bot, the freezer's thaw/freeze (not waited for),
  and the CPU a move costs the arena and the bot each way. Target: TARGET_MOVE_US.
- freeze/thaw of a bot busy in four threads, waited for and not; and reading its CPU time.
"""
from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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
    """A sandboxed bot process whose thaw() and hold() calls are timed: each hold after a
    thaw closes one move's pair. `how` says how the bot is stopped between its moves: "hold"
    (what the arena does: `SandboxedProcess.hold`) or "freeze" (the freezer, without waiting:
    what it did before, for comparison)."""

    def __init__(self, process, pairs: dict[str, list[float]], how: list[str]):
        self._process = process
        self._pairs = pairs
        self._how = how           # one item, switched by `per_move_us` between matches
        self._thaw: float | None = None   # seconds the thaw of the move under way took

    def __getattr__(self, name: str):
        return getattr(self._process, name)

    def thaw(self, surely: bool = False) -> None:
        began = time.perf_counter()
        self._process.thaw(surely)
        self._thaw = time.perf_counter() - began

    def hold(self) -> None:
        began = time.perf_counter()
        if self._how[0] == "hold":
            self._process.hold()
        else:
            self._process.freeze(wait=False)
        took = time.perf_counter() - began
        if self._thaw is not None:
            self._pairs[self._how[0]].append(self._thaw + took)
        self._thaw = None


@dataclass(frozen=True)
class PerMove:
    """What stopping a bot between its moves costs, one way ("hold" or "freeze")."""
    how: str
    moves: int
    median_us: float        # the thaw and the hold (or freeze) together, in the match runner
    p99_us: float
    arena_cpu_us: float     # CPU a move of the arena process, all its threads
    bot_cpu_us: float       # CPU a move of the bot's processes


def per_move_us(matches: int) -> list[PerMove]:
    """Thaw + hold per move of the `random` sample bot, and thaw + freeze for comparison, in
    `matches` mandala matches each against the built-in random strategy (the two ways take
    turns, match by match, on one bot process), with the CPU each way costs a move on each
    side: the freezer wakes every thread of the bot to stop it and again to thaw it."""
    from arena import sandbox
    from arena.bots import BotHost, BotSpec
    from arena.match import StrategySeat, play_match

    ways = ("hold", "freeze")
    pairs: dict[str, list[float]] = {how: [] for how in ways}
    cpu = {how: [0.0, 0.0] for how in ways}
    how = [ways[0]]

    def spawn(*args, **options):
        return _TimedProcess(sandbox.spawn(*args, **options), pairs, how)

    spec = BotSpec.load(SAMPLE_RANDOM_BOT)
    with BotHost(spawn=spawn) as host, host.seat(spec) as bot:
        # A warm-up match, not counted: the bot's start-up is no move's cost.
        play_match("mandala", 2, {}, -1, [bot, StrategySeat("random", "mandala")])
        pairs[how[0]].clear()
        for seed in range(2 * matches):
            how[0] = ways[seed % 2]
            seats = [bot, StrategySeat("random", "mandala")]
            arena_before, bot_before = time.process_time(), bot.cpu_seconds() or 0.0
            play_match("mandala", 2, {}, seed // 2, seats if seed % 4 < 2 else seats[::-1])
            cpu[how[0]][0] += time.process_time() - arena_before
            cpu[how[0]][1] += (bot.cpu_seconds() or 0.0) - bot_before
            bot.process.process.thaw(surely=True)   # neither way outlasts its own matches
    if not all(pairs.values()):
        raise ArenaError("the sample bot made no move: see its log")
    return [PerMove(way, len(pairs[way]), 1e6 * statistics.median(pairs[way]),
                    1e6 * _p99(pairs[way]), 1e6 * cpu[way][0] / len(pairs[way]),
                    1e6 * cpu[way][1] / len(pairs[way])) for way in ways]


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
        shutil.rmtree(folder, ignore_errors=True)   # its log and the bot's folder
    return {name: (1e6 * statistics.median(values), 1e6 * _p99(values))
            for name, values in (("freeze + thaw", pair), ("freeze", freeze),
                                 ("thaw", thaw), ("freeze(wait=False)", no_wait),
                                 ("cpu_seconds", cpu))}


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


if __name__ == "__main__":
    print(json.dumps(startup_seconds(int(sys.argv[1]))))
