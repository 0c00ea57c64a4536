"""The host of bot processes: the pool of processes it runs and the Seat that drives one
(one process, its gRPC server and its stream: arena.bots.process; manifests:
arena.bots.manifest).

`BotHost` owns the bot processes, each started in the sandbox with ARENA_SOCKET and a
one-time ARENA_TOKEN, and each with a gRPC server of its own on its own Unix socket (in a
fresh 0700 folder) that serves that process alone. `host.seat(spec)` gives a `BotSeat` for
play_match; processes live across matches (a released seat's process goes back to a pool,
reused by the next seat of the same spec and lane; at `max_bots` live processes the least
recently used idle one is ended), a crashed or forfeited bot is killed and a fresh process
is started before its next match, so is one that has used half its CPU-time limit
(`RETIRE_CPU_SHARE`), and `fresh_per_match=True` starts one per match.

    with BotHost() as host:
        with host.seat(spec_a) as a, host.seat(spec_b) as b:
            record = play_match("mandala", 2, {}, seed, [a, b], TimeControl(move_time=1.0))

Logs: one file per bot version in the host's `log_dir` (a temporary folder, removed by
`close`, when none is given), capped in size, named after the version unless `log_names`
names it otherwise. Every match a process plays starts with a header line the arena writes,
`== arena: match ID: GAME, seat S of N, TIME; process TAG ==`, and every line the bot prints
comes as `TAG| ...`: its header can be found, and none faked.

Bots are started by the thread that calls `new_match` (i.e. `play_match`): it must outlive
them, as the sandbox ends a bot when the thread that spawned it exits (--die-with-parent).
"""
from __future__ import annotations

import itertools
import logging
import os
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from arena import sandbox, wire
from arena.sandbox import scratch
from arena.actlogs import act_text
from arena.bots.manifest import BotSpec
# The limits are re-exported: `arena.bots` and the docs' tests name them through the host.
from arena.bots.process import (  # noqa: F401
    CLOSE_GRACE, DEFAULT_LOG_CAP, EXIT_GRACE, IDLE_CONNECTION_MS, MAX_BOT_MESSAGE_BYTES,
    MAX_CALLS, MAX_CONNECTIONS, MAX_MOVE_CHARS, PROTOCOL_VERSION, RETIRE_CPU_SHARE,
    SESSION_METADATA, STARTUP_WARN_SHARE, BotProcess)
from arena.clock import MoveClock
from arena.errors import ArenaError
from arena.match import MatchInfo, Seat

log = logging.getLogger(__name__)


class BotSeat(Seat):
    """A seat played by a bot process of `spec`; gets a (re)started process at each match."""

    def __init__(self, host: "BotHost", spec: BotSpec, lane: int | None = None):
        self.host = host
        self.spec = spec
        self.lane = lane
        self.name = spec.name
        self.version = spec.version
        self.cores = host.limits.cpus
        self.frozen_between_moves = host.freeze_between_turns
        self.process: BotProcess | None = None
        self.info: MatchInfo | None = None
        self.match_id = ""

    def new_match(self, info: MatchInfo) -> None:
        if info.game_id not in self.spec.games:
            raise ArenaError(f"bot {self.name} does not play {info.game_id} "
                             f"(its games: {', '.join(self.spec.games)})")
        self.info = info
        self.match_id = self.host._next_match_id()
        if self.process is not None and not self.process.alive():
            self.process.kill()   # crashed or hung up since: end what may be left of it
            self.process = None
        header = (f"match {info.label or self.match_id}: {info.game_id}, seat {info.seat} of "
                  f"{info.players}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC")
        if self.process is None:
            self.process = self.host._start(self.spec, info.time_control.startup, self.lane,
                                            header)
        else:
            self.process.log_header(header)
        self.process.send(wire.new_match_message(
            self.match_id, info.game_id, info.options, info.seat, info.players,
            info.time_control, info.bot_seed))

    def act(self, observation: dict, legal_moves: list[str], clock: MoveClock,
            ply: int = 0) -> str:
        message = wire.act_message(next(self.process.act_ids), self.match_id, ply,
                                   self.info.game_id, observation, legal_moves, clock)
        # Still frozen: all it prints from now on is this act's (arena.actlogs).
        self.process.log_header(act_text(self.info.label or self.match_id, ply), True)
        return self.process.act(message, clock)

    def rest(self) -> None:
        if self.process is not None:
            self.process.rest()

    def cpu_seconds(self) -> float | None:
        return None if self.process is None else self.process.cpu_seconds()

    def run_queue_wait(self) -> float | None:
        return None if self.process is None else self.process.run_queue_wait()

    def arena_wait(self) -> float | None:
        return None if self.process is None else self.process.arena_wait()

    def mark_run_queue(self) -> None:
        if self.process is not None and self.process.alive():
            self.process.mark_run_queue()

    def match_over(self, result: dict) -> None:
        info, self.info = self.info, None
        if self.process is None or info is None:
            return
        if self.process.alive():
            self.process.send(wire.match_over_message(self.match_id, result))
        if self.host.fresh_per_match or result.get("forfeit", {}).get("seat") == info.seat:
            self.process.kill()   # a forfeiter's whole tree goes; the next match restarts it

    def discard(self) -> None:
        info, self.info = self.info, None
        if self.process is not None and info is not None:
            self.process.kill()

    def close(self) -> None:
        """Gives the process back to the host's pool (or ends it)."""
        process, self.process = self.process, None
        if process is not None:
            self.host._release(process)

    def __enter__(self) -> "BotSeat":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- the host ------------------------------------------------------------------------------------
class BotHost:
    """The gRPC server bots connect to, and every bot process it started. A context manager."""

    def __init__(self, *, unsafe_no_sandbox: bool = False, log_dir: str | Path | None = None,
                 log_cap_bytes: int = DEFAULT_LOG_CAP, limits: "sandbox.Limits | None" = None,
                 fresh_per_match: bool = False, max_bots: int = 128,
                 freeze_between_turns: bool = True, spawn: Callable[..., Any] | None = None,
                 warn_slow_start: bool = False):
        """`spawn` starts a bot process (sandbox.spawn's signature and result); tests give a
        fake one to check the protocol without processes (tests/fake_transport.py).
        `warn_slow_start` logs a warning for each start-up that takes more than
        STARTUP_WARN_SHARE of its budget: for an author at `arena play` or `arena bot
        check`, not for every process a league starts."""
        if spawn is None and not unsafe_no_sandbox:
            sandbox.require()   # refuse before anything starts, naming the package
        self.spawn = spawn or sandbox.spawn
        self.unsafe_no_sandbox = unsafe_no_sandbox
        self.freeze_between_turns = freeze_between_turns
        self.warn_slow_start = warn_slow_start
        """Bots are frozen except during their own acts (off only to measure what it costs)."""
        self.fresh_per_match = fresh_per_match
        self.log_cap_bytes = log_cap_bytes
        self.limits = limits or sandbox.Limits()
        self.max_bots = max_bots   # live processes at once; each holds a server
        # It names this process as its owner: a dead arena's are removed by the next
        # (sandbox.scratch), here, once for both folders.
        self.socket_dir = scratch.folder_of_this_process()
        os.chmod(self.socket_dir, 0o700)
        self._socket_ids = itertools.count(1)
        # Without a log folder the logs are temporary: close() removes them.
        self.temporary_logs = not log_dir
        self.log_dir = (Path(log_dir) if log_dir
                        else scratch.folder_of_this_process("arena-logs-", sweep=False))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._process_numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._idle: list[BotProcess] = []   # released processes, least recently used first
        self._all: set[BotProcess] = set()
        self._match_ids = itertools.count(1)
        self.log_names: dict[BotSpec, str] = {}
        """Log file names (relative to `log_dir`) of bots whose log is not `log_path`'s
        default: the service's, one per author and version."""

    def seat(self, spec: BotSpec, lane: int | None = None) -> BotSeat:
        """A seat for `spec`, reusing an idle process of that spec and `lane` if there is one.

        Lanes keep processes apart: a league plays a bot's seat `i` in lane `i`, so that the
        process that played a deal in one seating never plays it in another (it could
        remember the cards it saw).
        """
        seat = BotSeat(self, spec, lane)
        with self._lock:
            for candidate in reversed(self._idle):
                if candidate.spec == spec and candidate.lane == lane and candidate.alive():
                    self._idle.remove(candidate)
                    seat.process = candidate
                    break
        return seat

    def processes(self) -> list[BotProcess]:
        """Every bot process of this host now: starting, playing or idle in the pool."""
        with self._lock:
            return list(self._all)

    def close(self) -> None:
        """Ends every bot process and stops its server.

        Each stream is ended after what is queued on it (a last MatchOver included), and the
        bots get `CLOSE_GRACE` seconds together to read it and exit; then whatever is left of
        every process tree is killed.
        """
        processes = self.processes()
        for process in processes:
            process.hang_up()
        deadline = time.monotonic() + CLOSE_GRACE
        for process in processes:
            process.wait_exit(deadline - time.monotonic())
        for process in processes:
            process.kill()
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        if self.temporary_logs:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def __enter__(self) -> "BotHost":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def log_path(self, spec: BotSpec) -> Path:
        """The log of every process of `spec`: one per bot version, kept across restarts; the
        sandbox caps it (it counts what the file already holds), so a bot that crashes every
        match cannot grow it. Named `NAME-VERSION.log`, or as `log_names` says."""
        path = self.log_dir / self.log_names.get(spec, f"{spec.name}-{spec.version}.log")
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    # -- for BotSeat and BotProcess ----------------------------------------------------------------
    def _start(self, spec: BotSpec, budget: float, lane: int | None = None,
               header: str | None = None) -> BotProcess:
        """A new process of `spec`, started; `header` goes into its log first (so what the
        bot prints while starting comes under its match's header)."""
        self._make_room()
        process = BotProcess(self, spec, self.log_path(spec), lane)
        with self._lock:
            self._all.add(process)
        if header is not None:
            process.log_header(header)
        process.start(budget)
        return process

    def _make_room(self) -> None:
        """Ends the least recently used idle processes while the host is full."""
        while True:
            with self._lock:
                if len(self._all) < self.max_bots:
                    return
                if not self._idle:
                    raise ArenaError(f"{len(self._all)} bot processes are busy, the most this "
                                     f"host runs at once (BotHost max_bots={self.max_bots})")
                oldest = self._idle.pop(0)
            oldest.kill()

    def _next_match_id(self) -> str:
        return f"m{next(self._match_ids)}"

    def _release(self, process: BotProcess) -> None:
        if self.fresh_per_match or not process.alive() or self._worn_out(process):
            process.kill()
            return
        with self._lock:
            self._idle.append(process)

    def _worn_out(self, process: BotProcess) -> bool:
        """True when a process has used RETIRE_CPU_SHARE of its CPU-time limit: RLIMIT_CPU
        counts a process's whole life, so a pooled bot that thinks hard would otherwise be
        killed by it in the middle of a later match (SIGXCPU, a crash it did not cause)."""
        used = process.cpu_seconds()
        return used is not None and used >= RETIRE_CPU_SHARE * self.limits.cpu_seconds

    def _forget(self, process: BotProcess) -> None:
        with self._lock:
            self._all.discard(process)
            if process in self._idle:
                self._idle.remove(process)
