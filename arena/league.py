"""Running a league: config -> bots -> schedule -> matches on worker processes -> store.

`start_league` checks everything (game, player count, options, bot folders and the games they
play, the schedule) before it creates anything, then creates the league folder and database;
`resume_league` reopens one and checks that no bot changed since. Both end in `run`, which
skips the matches already stored and hands the rest to an executor, committing each finished
match as it comes back (one transaction each, this process the only writer).

The executor is the one seam for running matches elsewhere: `Executor.run(plan, specs)`
yields `FinishedMatch`es in any order. `ProcessPool` runs them on local worker processes,
each with its own bot host (a pool of bot processes reused across matches, or fresh per match
with `fresh_bots`); another executor (Ray actors, say) only needs to call `play_spec` where
the workers are.

A league stopped by Ctrl-C keeps every finished match; one killed with `kill -9` loses only
the matches in flight (workers die with the parent). `resume_league` plays what is missing.
"""
from __future__ import annotations

import ctypes
import fcntl
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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Mapping, Sequence

from arena.clock import TimeControl
from arena.errors import ArenaError
from arena.keys import LeagueKey
from arena.match import Seat, StrategySeat, play_match
from arena.ratings import Outcome
from arena.schedule import DEFAULT_MAX_TABLES, MatchSpec, expand
from arena.sdk import strategies
from arena.store import BotEntry, FinishedMatch, Store, StoreError
from engine import registry

BUILTIN = "builtin:"
"""Source prefix of a built-in bot (in-process strategy) in a league."""


class LeagueError(ArenaError):
    """A league that cannot be started or resumed as asked."""


# -- configuration ----------------------------------------------------------------------------

@dataclass(frozen=True)
class LeagueConfig:
    """Everything that fixes a league's matches; stored in its database as JSON."""

    game: str
    bots: tuple[str, ...]
    """Bot folders (absolute paths) or built-in bot names (`random`, `greedy`)."""
    players: int = 2
    deals: int = 10
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    """Rule options that differ from the game's defaults."""
    time_control: Mapping[str, Any] = field(default_factory=lambda: TimeControl().to_record())
    gauntlet: str | None = None
    max_tables: int = DEFAULT_MAX_TABLES
    sandbox: bool = True
    rules: str | None = None
    """The engine's rules version (`mandala/1`), set when the league starts; None in leagues
    made before versions were stored."""

    def to_json(self) -> dict:
        data = asdict(self)
        data["bots"] = list(self.bots)
        data["options"] = dict(self.options)
        data["time_control"] = dict(self.time_control)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "LeagueConfig":
        return cls(**{**data, "bots": tuple(data["bots"])})

    def timing(self) -> TimeControl:
        return TimeControl(**self.time_control)


@dataclass(frozen=True)
class RunPlan:
    """What a worker needs to play any match of the league (small and picklable)."""

    game: str
    players: int
    options: Mapping[str, Any]
    time_control: Mapping[str, Any]
    bots: tuple[BotEntry, ...]
    fresh_bots: bool = False
    sandbox: bool = True
    log_dir: str | None = None
    """Where bot processes' stderr logs go (one file per bot version)."""


def load_bot(source: str, game_id: str) -> BotEntry:
    """A league bot from a folder or a built-in name; refuses one that does not play the game."""
    builtin = source.removeprefix(BUILTIN)
    if builtin in strategies.NAMES and (source.startswith(BUILTIN) or not Path(source).is_dir()):
        return BotEntry(builtin, "builtin", BUILTIN + builtin, (game_id,))
    folder = Path(source)
    if not folder.is_dir():
        raise LeagueError(f"unknown bot folder {source!r}: give a bot folder with a bot.toml "
                          f"or a built-in bot ({', '.join(strategies.NAMES)})")
    from arena.bots import BotSpec   # imported late: it brings gRPC along
    spec = BotSpec.load(folder, game_id)
    return BotEntry(spec.name, spec.version, str(folder.resolve()), tuple(spec.games))


def check_config(config: LeagueConfig, key: LeagueKey
                 ) -> tuple[list[BotEntry], list[MatchSpec]]:
    """Checks a league config and returns its bots and schedule (deals from `key`), creating
    nothing."""
    game = registry.get(config.game)
    game.resolve_options(config.options, config.players)   # player count and options
    config.timing()
    bots = [load_bot(source, config.game) for source in config.bots]
    if config.sandbox and any(not bot.source.startswith(BUILTIN) for bot in bots):
        from arena import sandbox
        sandbox.require()   # refuse before any folder exists, not in every worker
    _check_names(bots)
    specs = expand([bot.name for bot in bots], config.players, config.deals, config.seed, key,
                   gauntlet=_gauntlet_name(config.gauntlet, bots),
                   max_tables=config.max_tables)
    return bots, specs


def _check_names(bots: Sequence[BotEntry]) -> None:
    seen: dict[str, BotEntry] = {}
    for bot in bots:
        if bot.name in seen and seen[bot.name].source == bot.source:
            raise LeagueError(f"bot {bot.source} is given twice: give each bot once")
        if bot.name in seen:
            raise LeagueError(
                f"bots {seen[bot.name].source} and {bot.source} are both named {bot.name!r}: "
                "a league needs distinct names (change `name` in one bot.toml)")
        seen[bot.name] = bot


def _gauntlet_name(gauntlet: str | None, bots: Sequence[BotEntry]) -> str | None:
    """The gauntlet bot's league name, given its name or its folder."""
    if gauntlet is None or gauntlet in {bot.name for bot in bots}:
        return gauntlet
    folder = str(Path(gauntlet).resolve())
    for bot in bots:
        if bot.source == folder:
            return bot.name
    return gauntlet   # expand() names the bots it could have been


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
        process = subprocess.Popen(
            [sys.executable, "-c", "from arena.league import worker_main; worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, "ARENA_LEAGUE_PARENT": str(os.getpid())},
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


# -- starting, resuming, running -------------------------------------------------------------

@dataclass
class League:
    """An open league: its folder, store, bots and full schedule."""

    folder: Path
    store: Store
    config: LeagueConfig
    bots: list[BotEntry]
    specs: list[MatchSpec]
    lock: int

    def close(self) -> None:
        self.store.close()
        os.close(self.lock)

    def __enter__(self) -> "League":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def missing(self) -> list[MatchSpec]:
        done = self.store.finished_ids()
        return [spec for spec in self.specs if spec.id not in done]


def _lock(folder: Path) -> int:
    """An exclusive lock on the league folder: two runs of one league would double matches.
    The kernel drops it when the process dies, so a killed league can be resumed at once."""
    fd = os.open(folder / "league.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LeagueError(f"league {folder} is being run by another process right now: wait "
                          "for it or stop it first") from None
    return fd


def start_league(folder: str | os.PathLike, name: str, config: LeagueConfig) -> League:
    """Checks the config, then creates the league folder and database (never over another)."""
    key = LeagueKey.for_league(config.seed)
    bots, specs = check_config(config, key)
    # Stored with absolute folders, so the league resumes from any working directory.
    config = replace(config, bots=tuple(bot.source for bot in bots),
                     rules=registry.get(config.game).rules())
    folder = Path(folder)
    store = Store.create(folder, name=name, config=config.to_json(), planned=len(specs),
                         bots=bots, key=key)
    try:
        lock = _lock(folder)
    except LeagueError:
        store.close()
        raise
    return League(folder, store, config, bots, specs, lock)


def resume_league(folder: str | os.PathLike) -> League:
    """Reopens a league; refuses it if a bot changed since it started."""
    folder = Path(folder)
    store = Store.open(folder)
    try:
        lock = _lock(folder)
    except LeagueError:
        store.close()
        raise
    try:
        config = LeagueConfig.from_json(store.config())
        rules = registry.get(config.game).rules()
        if config.rules not in (None, rules):
            raise LeagueError(
                f"league {folder} was played under rules {config.rules}, this Arena plays "
                f"{rules}: finish it with the Arena it started with, or start a new league")
        bots, specs = check_config(config, store.league_key())
        stored = {bot.name: bot for bot in store.bots()}
        for bot in bots:
            before = stored.get(bot.name)
            if before is None or before.version != bot.version:
                was = "was not in it" if before is None else f"was version {before.version[:8]}"
                raise LeagueError(
                    f"bot {bot.name} ({bot.source}) changed since the league started ({was}, "
                    f"now {bot.version[:8]}): restore it, or start a new league for the new "
                    "version")
    except (ArenaError, StoreError):
        store.close()
        os.close(lock)
        raise
    return League(folder, store, config, bots, specs, lock)


def run(league: League, executor: Executor, *, fresh_bots: bool = False,
        on_match: Callable[[Outcome], None] | None = None) -> int:
    """Plays every missing match of the league; returns how many were played now.

    Each finished match is committed before the next is taken; an exception (Ctrl-C
    included) leaves every finished match stored and loses only those in flight.
    """
    plan = RunPlan(league.config.game, league.config.players, dict(league.config.options),
                   dict(league.config.time_control), tuple(league.bots),
                   fresh_bots=fresh_bots, sandbox=league.config.sandbox,
                   log_dir=str(league.folder.resolve() / "logs"))
    played = 0
    finished = executor.run(plan, league.missing())
    try:
        for match in finished:
            outcome = league.store.add_match(match)
            played += 1
            if on_match is not None:
                on_match(outcome)
    finally:
        finished.close()   # stops the workers if we leave early
    return played
