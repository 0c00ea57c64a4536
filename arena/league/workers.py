"""Where matches are played: a worker's bots (`SeatSource`), one match (`play_spec`), and the
local executor (`ProcessPool`: worker processes fed over a pickle-framed pipe).

The executor is the one seam for running matches elsewhere: `Executor.run(plan, specs)`
yields `FinishedMatch`es in any order (`run_jobs`: matches of several plans at once, the
service's ladders). `ProcessPool` runs them on local worker processes,
each with its own bot host (a pool of bot processes reused across matches, or fresh per match
with `fresh_bots`); another executor (Ray actors, arena.league.ray_pool) only needs to call
`play_spec` where the workers are. Workers die with the league process (`kill -9` included).
A kept executor (`keep=True`, the service's) keeps its workers and their bots across runs.
"""
from __future__ import annotations

import logging
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Sequence

from arena import hostload, lifeline
from arena.bots.manifest import is_builtin
from arena.clock import TimeControl
from arena.errors import ArenaError, HostError, HostOverloaded
from arena.league.config import LeagueError, RunPlan, lanes
from arena.match import Seat, StrategySeat, play_match
from arena.league.schedule import MatchSpec
from arena.league.store import FinishedMatch

log = logging.getLogger(__name__)

PARENT_VARIABLE = "ARENA_LEAGUE_PARENT"   # the league's pid, for its workers to die with it
_ARENA_ROOT = str(Path(__file__).resolve().parent.parent)
"""The folder holding the `arena` package this process imported: the workers import it too."""


# -- playing one match (what every executor's workers do) -------------------------------------

class SeatSource:
    """A worker's bots: hands out seats, keeps bot processes between matches (or starts them
    fresh for each match with `fresh_bots`), for one league or, with `adopt`, for every
    batch a service worker plays."""

    def __init__(self, plan: RunPlan):
        self.plan = plan
        self.stack = ExitStack()
        self.specs: dict[str, Any] = {}
        self.host = None
        self._load(plan)

    def adopt(self, plan: RunPlan) -> None:
        """Plays `plan`'s matches from now on, keeping the bot processes of the last plans:
        a bot still in it reuses its idle processes (no start-up on its first move), the
        others wait in the pool until its cap (`RunPlan.pool_bots`) ends the oldest."""
        if plan == self.plan:
            return
        if (plan.sandbox, plan.log_dir, plan.fresh_bots, plan.pool_bots) != (
                self.plan.sandbox, self.plan.log_dir, self.plan.fresh_bots, self.plan.pool_bots):
            raise LeagueError("a worker's bots are kept only for plans of the same sandbox, "
                              "log folder and pool: start a new executor for this run")
        self._load(plan)
        self.plan = plan

    def _load(self, plan: RunPlan) -> None:
        folders = [bot for bot in plan.bots if not is_builtin(bot.source)]
        if not folders:
            self.specs = {}
            return
        from arena.bots import BotHost, BotSpec   # gRPC is only loaded where bots run
        specs = {}
        for bot in folders:
            known = self.specs.get(bot.name)
            if known is not None and known.version == bot.version \
                    and str(known.folder) == str(Path(bot.source).resolve()):
                specs[bot.name] = known
                continue
            if not Path(bot.source).is_dir():   # it was there when the plan was made
                raise HostError(f"the host could not start bot {bot.name}: its folder "
                                f"{bot.source} is gone (not the bot's fault: its matches are "
                                "not played; restore the folder and play them again)")
            spec = BotSpec.load(bot.source)
            if spec.version != bot.version:
                raise LeagueError(
                    f"bot {bot.name} ({bot.source}) changed while the league ran (version "
                    f"{bot.version[:8]}, now {spec.version[:8]}): restore it and resume")
            specs[bot.name] = spec
        self.specs = specs
        if self.host is None:
            options = {} if plan.pool_bots is None else {"max_bots": plan.pool_bots}
            self.host = self.stack.enter_context(BotHost(
                unsafe_no_sandbox=not plan.sandbox, log_dir=plan.log_dir,
                fresh_per_match=plan.fresh_bots, **options))
        for name, log_name in plan.log_names:   # every plan's: a kept worker meets new bots
            self.host.log_names[self.specs[name]] = log_name

    def seats(self, names: Sequence[str]) -> list[Seat]:
        """One seat per name, each played by the bot's process of its lane (`lanes`); close
        them after the match (that returns bots to the pool)."""
        return [self.host.seat(self.specs[name], lane=lane) if name in self.specs
                else StrategySeat(name, self.plan.game)
                for name, lane in zip(names, lanes(names, self.plan.seat_lanes))]

    def close(self) -> None:
        self.stack.close()


VOID_ATTEMPTS = 3
"""Times a match may be voided because the machine kept a bot off the CPU before the host is
called too busy to time it fairly (HostError: a league stops, the service waits)."""
VOID_PAUSE = 2.0
"""Seconds to wait after a voided match, times the voids so far, before playing it again."""


def play_spec(source: SeatSource, plan: RunPlan, spec: MatchSpec, worker: int) -> FinishedMatch:
    """Plays one scheduled match with the worker's seats and returns it for the store.

    A match voided for the host's load (HostOverloaded) is played again, from the start and
    with fresh bot processes, after a pause; its record keeps what was measured each time
    (`voided`). HostError when it is voided VOID_ATTEMPTS times."""
    voided: list[dict] = []
    while True:
        seats = source.seats(spec.seats)
        try:
            started, clock = time.time(), time.monotonic()
            record = play_match(plan.game, plan.players, plan.options, spec.seed, seats,
                                TimeControl(**plan.time_control), bot_seeds=spec.bot_seeds,
                                label=spec.id)
            break
        except HostOverloaded as error:
            voided.append(error.measure)
            if len(voided) >= VOID_ATTEMPTS:
                raise HostError(f"the machine is too busy to time bots fairly: {error} "
                                f"({len(voided)} times); stored matches are kept, play it "
                                "again when the machine is quieter") from None
            log.warning("match %s voided (%d of %d): %s", spec.id, len(voided), VOID_ATTEMPTS,
                        error)
        finally:
            for seat in seats:
                seat.close()
        time.sleep(VOID_PAUSE * len(voided))
    if voided:
        record["voided"] = voided
    return FinishedMatch(spec, record, started=started, seconds=time.monotonic() - clock,
                         worker=worker)


# -- executors: one dispatcher, thin transports ---------------------------------------------

class Executor(ABC):
    """Runs match specs somewhere and yields them finished, in any order."""

    @abstractmethod
    def run(self, plan: RunPlan, specs: Sequence[MatchSpec]) -> Iterator[FinishedMatch]:
        """Yields one FinishedMatch per spec; raises ArenaError when matches cannot be played.

        Closing the iterator early (Ctrl-C) stops the matches in flight and loses them.
        """

    def run_jobs(self, jobs: Sequence[tuple[RunPlan, MatchSpec]]) -> Iterator[FinishedMatch]:
        """`run` for matches of several plans (the service's ladders) in one go: a Dispatcher
        deals them all at once, so no worker waits for one plan's last match while another
        plan has matches to play; this default plays them plan after plan."""
        plans: list[tuple[RunPlan, list[MatchSpec]]] = []
        for plan, spec in jobs:
            if not plans or plans[-1][0] != plan:
                plans.append((plan, []))
            plans[-1][1].append(spec)
        for plan, specs in plans:
            yield from self.run(plan, specs)


@dataclass(frozen=True)
class Done:
    """A worker finished a match."""

    worker: int
    match: FinishedMatch


@dataclass(frozen=True)
class Died:
    """A worker is gone (killed, out of memory, its node lost); `why` says how if known."""

    worker: int
    why: str


@dataclass(frozen=True)
class Ready:
    """A started worker runs and can take matches (of transports that `wait_to_start`)."""

    worker: int


class Transport(ABC):
    """How a Dispatcher reaches its workers: start one, hand it a spec, hear what happened.

    A transport knows nothing of look-ahead, restarts or the schedule; the Dispatcher does.
    """

    noun = "league worker"
    """What a worker is called in messages."""
    wait_to_start = False
    """True when a started worker may wait to run, perhaps for ever (a Ray actor waits for a
    free CPU, which a lost node never gives back): it is handed matches only once
    next_event says it is Ready, so that none wait on it while other workers are free."""

    @abstractmethod
    def start(self, index: int) -> None:
        """Starts worker `index` (again, after it died)."""

    @abstractmethod
    def use(self, plan: RunPlan) -> None:
        """The plan workers started from now on begin with (a kept executor's next run)."""

    @abstractmethod
    def hand(self, index: int, spec: MatchSpec, plan: RunPlan) -> None:
        """Queues one match of `plan` on worker `index` (which adopts `plan` first if it
        played another); a dead worker is reported by next_event."""

    @abstractmethod
    def next_event(self) -> Done | Died | Ready:
        """Waits for the next thing a worker did; LeagueError when a worker reports one,
        HostError when it reports a fault of the host."""

    @abstractmethod
    def close(self, at_once: bool) -> None:
        """Ends every worker: after their matches, or `at_once` (dropping matches in flight).
        Either way each worker ends its bots (thawed first, so the kill lands)."""


class Dispatcher(Executor):
    """Deals a league's matches to workers over a Transport, the same for local and Ray.

    Each worker holds at most AHEAD specs (one playing, one waiting), so a fast worker takes
    more matches than a slow one and a stopped league loses at most AHEAD per worker. A worker
    that dies is started again, at most MAX_RESTARTS times per run, and the matches it held
    go to whichever worker frees up first: a worker that waits to start (`wait_to_start`)
    is handed none until it runs.

    With `keep` (the service), the workers and their bot pools stay up between runs, each
    run handing them its plan; `close()` ends them. A run that ends early (an error, a
    stop) ends them at once, so no match of it can finish into the next run.
    """

    AHEAD = 2
    MAX_RESTARTS = 5

    def __init__(self, workers: int | None, *, keep: bool = False):
        if workers is not None and workers < 1:
            raise LeagueError(f"--workers must be at least 1, not {workers}")
        self.workers = workers
        self.keep = keep
        self.restarts = 0
        self._transport: Transport | None = None
        self._count = 0
        self._started: set[int] = set()
        self._starting: set[int] = set()   # started, not yet Ready (`wait_to_start`)
        self._handed: dict[int, list[tuple[RunPlan, MatchSpec]]] = {}

    @abstractmethod
    def open(self, plan: RunPlan) -> tuple[Transport, int]:
        """A transport for this run and how many workers it can run at once."""

    @property
    def size(self) -> int:
        """Workers of the open transport (0 before the first run)."""
        return self._count if self._transport is not None else 0

    def run(self, plan: RunPlan, specs: Sequence[MatchSpec]) -> Iterator[FinishedMatch]:
        return self.run_jobs([(plan, spec) for spec in specs])

    def run_jobs(self, jobs: Sequence[tuple[RunPlan, MatchSpec]]) -> Iterator[FinishedMatch]:
        """Deals every job to the workers as they free up, whatever its plan: a worker that
        plays matches of several plans adopts each one as its match comes (keeping its bots)."""
        if not jobs:
            return
        # Per run: a service's executor lives for days, and old deaths say nothing of now.
        self.restarts = 0
        if self._transport is None:
            self._transport, self._count = self.open(jobs[0][0])
            self._started, self._starting = set(), set()
        transport = self._transport
        transport.use(jobs[0][0])
        todo = list(reversed(jobs))   # pop() from the end keeps schedule order
        handed: dict[int, list[tuple[RunPlan, MatchSpec]]] = {
            index: [] for index in range(min(self._count, len(jobs)))}
        self._handed = handed
        try:
            for index in handed:
                if index not in self._started:
                    self._start(transport, index)
                if index not in self._starting:
                    self._fill(transport, index, handed[index], todo)
            while any(handed.values()) or (todo and self._starting):
                event = transport.next_event()
                held = handed.get(event.worker)
                if isinstance(event, Ready):
                    self._starting.discard(event.worker)
                    if held is not None:
                        self._fill(transport, event.worker, held, todo)
                    continue
                if isinstance(event, Died):
                    if held or event.worker in self._starting:
                        self._restart(transport, event, held or [], todo)
                        for index, other in handed.items():   # idle ones take its matches
                            if index not in self._starting:
                                self._fill(transport, index, other, todo)
                    elif self.keep:
                        self._started.discard(event.worker)   # started again when needed
                    continue
                held.remove(next(job for job in held if job[1] == event.match.spec))
                self._fill(transport, event.worker, held, todo)
                yield event.match
        finally:
            unfinished = any(handed.values()) or bool(todo)
            if unfinished or not self.keep:
                self._transport = None
                transport.close(at_once=unfinished)

    def in_play(self) -> list[str]:
        """The ids of the matches the workers are playing now (each one's first held: the
        next waits behind it), as another thread may ask while a run goes on."""
        return [job[1].id for held in list(self._handed.values()) for job in held[:1]]

    def watch(self) -> bool:
        """Looks after what a kept executor holds between runs (the service calls it while
        idle); True when a fault of the host that held its runs back is over. Nothing here:
        RayPool leaves a cluster whose head is lost, and joins it again once it is back."""
        return False

    def close(self) -> None:
        """Ends the workers a kept executor holds between runs, and their bots."""
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close(at_once=False)

    def _fill(self, transport: Transport, index: int, held: list[tuple[RunPlan, MatchSpec]],
              todo: list[tuple[RunPlan, MatchSpec]]) -> None:
        while todo and len(held) < self.AHEAD:
            held.append(todo.pop())
            plan, spec = held[-1]
            transport.hand(index, spec, plan)

    def _start(self, transport: Transport, index: int) -> None:
        transport.start(index)
        self._started.add(index)
        if transport.wait_to_start:
            self._starting.add(index)   # handed matches once Ready

    def _restart(self, transport: Transport, died: Died, held: list[tuple[RunPlan, MatchSpec]],
                 todo: list[tuple[RunPlan, MatchSpec]]) -> None:
        """Starts a dead worker again; the matches it held go first back into `todo`, for
        whichever worker frees up first (this one, once it runs)."""
        self.restarts += 1
        if self.restarts > self.MAX_RESTARTS:
            raise LeagueError(
                f"{transport.noun}s died {self.restarts} times (the last: {died.why}): "
                "finished matches are stored; see the messages above, then resume the league")
        log.warning("%s %d died (%s); playing its %d unfinished matches again",
                    transport.noun, died.worker, died.why, len(held))
        todo.extend(sorted(held, key=lambda job: job[1].order, reverse=True))
        held.clear()
        self._starting.discard(died.worker)
        self._start(transport, died.worker)


# -- the local transport: worker processes over pipes -------------------------------------------

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


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)   # unwinds through `finally`: the bot host closes


def worker_main() -> None:
    """A worker process (`ProcessPool` starts it): plays the specs it reads until None."""
    if not lifeline.die_with_parent(PARENT_VARIABLE):
        return   # the league died before that took hold
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    # Results go to a private copy of stdout; fd 1 goes to stderr, so that nothing printed
    # by a library can corrupt the frames.
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    tasks = sys.stdin.buffer
    try:
        worker, plan, cpu, alone = _receive(tasks)
    except EOFError:
        return   # stopped before it began
    if cpu is not None:
        hostload.pin(cpu)   # before any bot starts: they run on it too
    elif alone:
        hostload.keep_apart()   # the machine's only worker: its bots on cores of their own
    try:
        source = SeatSource(plan)
    except HostError as error:
        _send(results, ("host", str(error)))
        return
    except ArenaError as error:
        _send(results, ("error", str(error)))
        return
    except Exception:
        _send(results, ("crash", traceback.format_exc()))
        return
    try:
        while (spec := _receive(tasks)) is not None:
            try:
                if isinstance(spec, RunPlan):   # a kept worker's next run
                    source.adopt(spec)
                    plan = spec
                    continue
                _send(results, ("done", play_spec(source, plan, spec, worker)))
            except HostError as error:
                _send(results, ("host", f"match {spec.id}: {error}"
                                if isinstance(spec, MatchSpec) else str(error)))
                return
            except ArenaError as error:
                _send(results, ("error", f"match {spec.id}: {error}"
                                if isinstance(spec, MatchSpec) else str(error)))
                return
            except Exception:
                _send(results, ("crash", f"match {spec.id}:\n{traceback.format_exc()}"))
                return
    except EOFError:
        pass   # the parent is gone or stopped us
    finally:
        # Ending already: a SIGTERM now (the league stopping) would only break the clean-up
        # (a traceback from an atexit handler); its bots end with it whatever happens.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        source.close()


class ProcessPool(Dispatcher):
    """Local worker processes, each with its own bot host; matches go to whichever is free."""

    def __init__(self, workers: int, *, keep: bool = False, pin: bool = False):
        """`pin`: pin the workers of a sandboxed league even when they leave a core free
        (`pinned_cpus`; `arena bench league` measures a lone worker pinned so)."""
        super().__init__(workers, keep=keep)
        self.pin = pin

    def open(self, plan: RunPlan) -> tuple[Transport, int]:
        cpus = pinned_cpus(self.workers, plan.sandbox, always=self.pin)
        alone = cpus is None and self.workers == 1 and plan.sandbox
        return LocalTransport(plan, cpus, alone=alone), self.workers

    def pids(self) -> list[int]:
        """The worker processes running now (a kept pool's, between runs too)."""
        transport = self._transport
        if not isinstance(transport, LocalTransport):
            return []
        return [process.pid for process in transport.processes.values()
                if process.poll() is None]


def pinned_cpus(workers: int, sandbox: bool, always: bool = False) -> list[int] | None:
    """The CPUs local workers are pinned to, one each in turn, or None to let them run anywhere.

    A decision wakes several threads in turn (the match's, gRPC's, the bot's); on one core
    each wakes where the last one slept, across cores each wakes an idle core, which a
    virtual machine pays dearly for: pinned, a decision took 205 µs instead of 303 and a
    league of 2 workers on 2 cores played 15% more matches a second (`arena bench league`).
    Only when the workers fill every core the arena may use: then none is left for the
    scheduler to move a match to, while a lone worker may meet other work on its core. Only
    with the sandbox: its bots (one core's quota each) cannot move off the core (seccomp),
    and the host's load is then measured on that core alone (`hostload.pin`). With `always`,
    also when they leave cores free (worker i on the i-th core). A lone worker that is not
    pinned keeps its bots on cores apart from its own instead (`hostload.keep_apart`)."""
    cpus = sorted(hostload.cpus())
    if not sandbox or len(cpus) < 2:
        return None
    return cpus if always or workers >= len(cpus) else None


class LocalTransport(Transport):
    """Worker processes (`worker_main`) on this machine, fed over their stdin."""

    def __init__(self, plan: RunPlan, cpus: list[int] | None = None, alone: bool = False):
        self.plan = plan
        self.cpus = cpus   # worker i runs on cpus[i % len(cpus)]; None: wherever
        self.alone = alone   # one worker, unpinned: it keeps its bots apart (hostload)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()   # (index, message or None)
        self.processes: dict[int, subprocess.Popen] = {}
        self.plans: dict[int, RunPlan] = {}   # worker -> the plan it was sent last

    def start(self, index: int) -> None:
        # -P: the current folder stays off sys.path (a folder named `arena` there would be
        # imported instead); the worker imports the arena this process imported.
        process = subprocess.Popen(
            [sys.executable, "-P", "-c",
             "from arena.league.workers import worker_main; worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, PARENT_VARIABLE: str(os.getpid()),
                 "PYTHONPATH": os.pathsep.join(filter(None, (
                     _ARENA_ROOT, os.environ.get("PYTHONPATH", ""))))},
            start_new_session=True)   # Ctrl-C reaches the parent only, which stops them
        self.processes[index] = process
        log.info("league worker %d started (pid %d)", index, process.pid)
        cpu = None if self.cpus is None else self.cpus[index % len(self.cpus)]
        self._send(process, (index, self.plan, cpu, self.alone))
        self.plans[index] = self.plan
        threading.Thread(target=_read_results, args=(index, process.stdout, self.inbox),
                         name=f"arena-league-worker-{index}", daemon=True).start()

    def use(self, plan: RunPlan) -> None:
        self.plan = plan

    def hand(self, index: int, spec: MatchSpec, plan: RunPlan) -> None:
        if plan != self.plans[index]:   # a kept worker's next run, or another ladder's
            self._send(self.processes[index], plan)
            self.plans[index] = plan
        self._send(self.processes[index], spec)

    def next_event(self) -> Done | Died:
        index, message = self.inbox.get()
        if message is None:
            code = self.processes[index].wait()
            return Died(index, f"killed by signal {-code}" if code < 0 else f"exit status {code}")
        kind, payload = message
        if kind == "host":
            raise HostError(payload)
        if kind == "error":
            raise LeagueError(payload)
        if kind != "done":
            raise RuntimeError(f"league worker {index} failed:\n{payload}")
        return Done(index, payload)

    def close(self, at_once: bool) -> None:
        _stop(list(self.processes.values()), at_once)

    @staticmethod
    def _send(process: subprocess.Popen, message: Any) -> None:
        try:
            _send(process.stdin, message)
        except OSError:   # BrokenPipeError included
            pass   # the worker is gone; its reader reports it


def _read_results(index: int, stream: BinaryIO, inbox: queue.SimpleQueue) -> None:
    """Thread: forwards a worker's results to the parent's inbox; None when it ends."""
    try:
        while True:
            inbox.put((index, _receive(stream)))
    except (EOFError, OSError, pickle.UnpicklingError):
        inbox.put((index, None))


def _stop(processes: list[subprocess.Popen], at_once: bool) -> None:
    """Ends workers: after their last match, or `at_once` (each drops its match and stops its
    bots on SIGTERM; SIGKILL if that takes long, and its bots die with it anyway). All are
    told first, then waited for: they end their bots at the same time, not in turn."""
    for process in processes:
        try:
            process.stdin.close()
        except OSError:
            pass
        if at_once and process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + 5
    for process in processes:
        try:
            lifeline.wait(process, deadline - time.monotonic())
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
