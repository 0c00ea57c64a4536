"""Where matches are played: a worker's bots (`SeatSource`), one match (`play_spec`), and the
local executor (`ProcessPool`: worker processes fed over a pickle-framed pipe).

The executor is the one seam for running matches elsewhere: `Executor.run(plan, specs)`
yields `FinishedMatch`es in any order. `ProcessPool` runs them on local worker processes,
each with its own bot host (a pool of bot processes reused across matches, or fresh per match
with `fresh_bots`); another executor (Ray actors, arena.ray_pool) only needs to call
`play_spec` where the workers are. Workers die with the league process (`kill -9` included).
"""
from __future__ import annotations

import ctypes
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
from abc import ABC, abstractmethod
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Sequence

from arena.bots.manifest import BUILTIN
from arena.clock import TimeControl
from arena.errors import ArenaError
from arena.league_config import LeagueError, RunPlan
from arena.match import Seat, StrategySeat, play_match
from arena.schedule import MatchSpec
from arena.store import FinishedMatch

_ARENA_ROOT = str(Path(__file__).resolve().parent.parent)
"""The folder holding the `arena` package this process imported: the workers import it too."""


# -- playing one match (what every executor's workers do) -------------------------------------

class SeatSource:
    """A worker's bots for the whole league: hands out seats, keeps bot processes between
    matches (or starts them fresh for each match with `fresh_bots`)."""

    def __init__(self, plan: RunPlan):
        self.plan = plan
        self.stack = ExitStack()
        self.specs: dict[str, Any] = {}
        folders = [bot for bot in plan.bots if not bot.source.startswith(BUILTIN)]
        self.host = None
        if folders:
            from arena.bots import BotHost, BotSpec   # gRPC is only loaded where bots run
            for bot in folders:
                spec = BotSpec.load(bot.source)
                if spec.version != bot.version:
                    raise LeagueError(
                        f"bot {bot.name} ({bot.source}) changed while the league ran (version "
                        f"{bot.version[:8]}, now {spec.version[:8]}): restore it and resume")
                self.specs[bot.name] = spec
            self.host = self.stack.enter_context(BotHost(
                unsafe_no_sandbox=not plan.sandbox, log_dir=plan.log_dir,
                fresh_per_match=plan.fresh_bots))

    def seats(self, names: Sequence[str]) -> list[Seat]:
        """One seat per name; close them after the match (that returns bots to the pool).

        A bot's seat `i` is played by its pooled process for seat `i` (its lane): with deals
        of their own per table, a process then meets every deal at most once.
        """
        return [self.host.seat(self.specs[name], lane=index) if name in self.specs
                else StrategySeat(name, self.plan.game) for index, name in enumerate(names)]

    def close(self) -> None:
        self.stack.close()


def play_spec(source: SeatSource, plan: RunPlan, spec: MatchSpec, worker: int) -> FinishedMatch:
    """Plays one scheduled match with the worker's seats and returns it for the store."""
    seats = source.seats(spec.seats)
    try:
        started, clock = time.time(), time.monotonic()
        record = play_match(plan.game, plan.players, plan.options, spec.seed, seats,
                            TimeControl(**plan.time_control), bot_seeds=spec.bot_seeds)
    finally:
        for seat in seats:
            seat.close()
    return FinishedMatch(spec, record, started=started, seconds=time.monotonic() - clock,
                         worker=worker)


# -- executors ----------------------------------------------------------------------------------

class Executor(ABC):
    """Runs match specs somewhere and yields them finished, in any order."""

    @abstractmethod
    def run(self, plan: RunPlan, specs: Sequence[MatchSpec]) -> Iterator[FinishedMatch]:
        """Yields one FinishedMatch per spec; raises ArenaError when matches cannot be played.

        Closing the iterator early (Ctrl-C) stops the matches in flight and loses them.
        """


# Worker <-> parent messages are pickled frames behind a 4-byte length, over the worker's
# stdin (plan, then specs, then None) and a private copy of its stdout (results).
_FRAME = struct.Struct(">I")


def _send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    """The next message, or EOFError when the other side is gone."""
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        raise EOFError
    size, = _FRAME.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def _die_with_parent() -> None:
    """Asks Linux to SIGKILL this process when its parent dies (kill -9 of the league)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):   # not Linux: the worker still stops at end of input
        pass


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)   # unwinds through `finally`: the bot host closes


def worker_main() -> None:
    """A worker process (`ProcessPool` starts it): plays the specs it reads until None."""
    _die_with_parent()
    if os.getppid() != int(os.environ.get("ARENA_LEAGUE_PARENT", os.getppid())):
        return   # the parent died before the line above took effect
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    # Results go to a private copy of stdout; fd 1 goes to stderr, so that nothing printed
    # by a library can corrupt the frames.
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    tasks = sys.stdin.buffer
    try:
        worker, plan = _receive(tasks)
    except EOFError:
        return   # stopped before it began
    try:
        source = SeatSource(plan)
    except ArenaError as error:
        _send(results, ("error", str(error)))
        return
    except Exception:
        _send(results, ("crash", traceback.format_exc()))
        return
    try:
        while (spec := _receive(tasks)) is not None:
            try:
                _send(results, ("done", play_spec(source, plan, spec, worker)))
            except ArenaError as error:
                _send(results, ("error", f"match {spec.id}: {error}"))
                return
            except Exception:
                _send(results, ("crash", f"match {spec.id}:\n{traceback.format_exc()}"))
                return
    except EOFError:
        pass   # the parent is gone or stopped us
    finally:
        source.close()


@dataclass
class _Worker:
    """The parent's handle on one worker process and the specs it was handed."""

    index: int
    process: subprocess.Popen
    handed: list[MatchSpec] = field(default_factory=list)


class ProcessPool(Executor):
    """Local worker processes, each with its own bot host; matches go to whichever is free.

    Each worker holds at most two specs (one playing, one waiting), so a fast worker takes
    more matches than a slow one and a killed league loses at most two per worker. A worker
    that dies is replaced and its specs are played again by the new one.
    """

    AHEAD = 2
    MAX_RESTARTS = 5
    """Workers that die (killed, out of memory) are replaced this many times per run."""

    def __init__(self, workers: int):
        if workers < 1:
            raise LeagueError(f"--workers must be at least 1, not {workers}")
        self.workers = workers
        self.restarts = 0

    def run(self, plan: RunPlan, specs: Sequence[MatchSpec]) -> Iterator[FinishedMatch]:
        if not specs:
            return
        todo = list(reversed(specs))   # pop() from the end keeps schedule order
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        workers = [self._start(index, plan, inbox) for index in range(min(self.workers,
                                                                          len(specs)))]
        pending = len(specs)
        try:
            for worker in workers:
                for _ in range(self.AHEAD):
                    self._hand(worker, todo)
            while pending:
                index, message = inbox.get()
                worker = workers[index]
                if message is None:
                    if worker.handed:   # it died mid-match: a new one plays its matches
                        workers[index] = self._replace(worker, plan, inbox, todo)
                    continue
                kind, payload = message
                if kind == "error":
                    raise LeagueError(payload)
                if kind != "done":
                    raise RuntimeError(f"league worker {index} failed:\n{payload}")
                worker.handed.remove(payload.spec)
                pending -= 1
                self._hand(worker, todo)
                yield payload
        finally:
            for worker in workers:
                _stop(worker.process, at_once=pending > 0)

    def _replace(self, dead: _Worker, plan: RunPlan, inbox: queue.SimpleQueue,
                 todo: list[MatchSpec]) -> _Worker:
        """A new worker in place of one that died, handed the matches the dead one held."""
        code = dead.process.wait()
        status = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        self.restarts += 1
        if self.restarts > self.MAX_RESTARTS:
            raise LeagueError(
                f"league workers died {self.restarts} times (the last: {status}): "
                "finished matches are stored; see the messages above, then "
                "resume the league")
        print(f"arena: league worker {dead.index} died ({status}); "
              f"playing its {len(dead.handed)} unfinished matches again", file=sys.stderr)
        todo.extend(reversed(dead.handed))   # next out of `todo`, in schedule order
        worker = self._start(dead.index, plan, inbox)
        for _ in range(self.AHEAD):
            self._hand(worker, todo)
        return worker

    @staticmethod
    def _start(index: int, plan: RunPlan, inbox: queue.SimpleQueue) -> _Worker:
        # -P: the current folder stays off sys.path (a folder named `arena` there would be
        # imported instead); the worker imports the arena this process imported.
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", "from arena.workers import worker_main; worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, "ARENA_LEAGUE_PARENT": str(os.getpid()),
                 "PYTHONPATH": os.pathsep.join(filter(None, (
                     _ARENA_ROOT, os.environ.get("PYTHONPATH", ""))))},
            start_new_session=True)   # Ctrl-C reaches the parent only, which stops them
        try:
            _send(process.stdin, (index, plan))
        except OSError:
            pass   # it died at once; its reader reports it
        threading.Thread(target=_read_results, args=(index, process.stdout, inbox),
                         name=f"arena-league-worker-{index}", daemon=True).start()
        return _Worker(index, process)

    @staticmethod
    def _hand(worker: _Worker, todo: list[MatchSpec]) -> None:
        spec = todo.pop() if todo else None
        if spec is not None:
            worker.handed.append(spec)
        try:
            _send(worker.process.stdin, spec)
        except (BrokenPipeError, OSError):
            pass   # the worker is gone; its reader reports it


def _read_results(index: int, stream: BinaryIO, inbox: queue.SimpleQueue) -> None:
    """Thread: forwards a worker's results to the parent's inbox; None when it ends."""
    try:
        while True:
            inbox.put((index, _receive(stream)))
    except (EOFError, OSError, pickle.UnpicklingError):
        inbox.put((index, None))


def _stop(process: subprocess.Popen, at_once: bool) -> None:
    """Ends a worker: after its last match, or `at_once` (it drops its match and stops its
    bots on SIGTERM; SIGKILL if that takes long, and its bots die with it anyway)."""
    try:
        process.stdin.close()
    except OSError:
        pass
    if at_once and process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # pragma: no cover - not Linux
        return os.cpu_count() or 1
