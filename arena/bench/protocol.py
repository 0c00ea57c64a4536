"""The cost of one decision three ways, on the same decisions with the same policy (random):

- in-process: the built-in strategy called directly (what `arena play --bot random` does);
- arena: through the BotHost to the `random` sample bot, sandboxed, over gRPC on the Unix
  socket: observation to message, stream, SDK, message to dict, policy, reply, checks;
- pipe: a raw round trip between two Python processes over a pair of pipes, the same
  decision carried as one JSON line (`pipe-json`) and as a one-byte ping (`pipe-ping`, the
  bare cost of waking another process and being woken back);
- gRPC floors: a bare gRPC stream between two processes on a Unix socket, a 600-byte ask
  and a 20-byte answer, three ways (arena.bench.grpc_floor): the least the arena's protocol
  can cost, and the target is measured against the fastest of them;
- gRPC handoff patterns: the same stream, asked from a thread other than the server's, as a
  match runner asks: the arena's synchronous server fed by a queue, and an asyncio server on
  a loop thread of its own (arena.bench.grpc_floor.PATTERNS): what the handoff costs, and
  which design of the arena's server costs less; the arena's pattern with the Python
  work of a decision on both ends (spinning as long): what that work costs on this machine;
  and the protocol turned around, the asking thread calling a bot's server once per ask;
- a gRPC bound: the fastest floor's own design (no hand-over) with that same work on both
  ends (arena.bench.grpc_floor.BOUNDS): the least any way of serving could reach with it.

Each decision is timed with a monotonic clock around the call, as the match runner times a
bot; the arena's also holds the bot once it has answered, as the runner does between its
moves (`BotSeat.rest`). The corpus is the decisions of random in-process matches from a fixed
seed. Every path plays the same turns of TURN decisions back to back, the paths taking turns
in a rotating order, so each is timed alike (warm, in a run of decisions) and whatever else
the machine does weighs on all. CPU per decision is counted on both sides: for the arena, the
arena process's CPU (all its threads) and the bot's (its cgroup) over its turns; for a floor,
each end's; the arena's also by thread (arena.bench.threadcpu), to show where it goes.
"""
from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from arena import hostload
from arena.bench import grpc_floor, threadcpu
from arena.clock import SeatClock, TimeControl
from arena.match import MatchInfo, StrategySeat
from engine import registry
from engine.core import CHANCE
from sample_bots import sample_bot

TARGET_RATIO = 1.5   # arena median at most this many times the fastest gRPC floor's
WARM_UP = 50         # decisions played before timing starts, on every path
TURN = 100           # decisions each path plays in a turn before the next path's turn

# The pipe's other end: answers each JSON decision line with a random legal move.
_PIPE_CHILD = """
import json, random, sys
rng = random.Random(1)
read, write = sys.stdin.buffer.readline, sys.stdout.buffer
while line := read():
    if line == b"p\\n":
        write.write(b"p\\n")
    else:
        observation, legal = json.loads(line)
        write.write(rng.choice(legal).encode() + b"\\n")
    write.flush()
"""


@dataclass(frozen=True)
class Figure:
    path: str
    decisions: int
    median_us: float
    p99_us: float
    arena_cpu_us: float | None = None
    """CPU per decision of the asking side (the arena process; a floor's server)."""
    bot_cpu_us: float | None = None
    """CPU per decision of the answering side (the bot's processes; a floor's client)."""

    def to_json(self) -> dict:
        cpu = lambda value: None if value is None else round(value, 1)   # noqa: E731
        return {"path": self.path, "decisions": self.decisions,
                "median_us": round(self.median_us, 1), "p99_us": round(self.p99_us, 1),
                "arena_cpu_us": cpu(self.arena_cpu_us), "bot_cpu_us": cpu(self.bot_cpu_us)}


@dataclass(frozen=True)
class Results:
    figures: list[Figure]
    cpu_by_thread_us: dict[str, float]
    """The arena path's CPU per decision by the part each thread plays, on both sides
    (arena.bench.threadcpu): where the arena's and the bot's CPU go."""
    placement: dict[str, list[int]]
    """The CPUs the arena path's threads may run on: the arena's ("arena") and the bot's
    ("bot"), read from the kernel as the bench ends."""


def corpus(game_id: str, count: int, seed: int = 1) -> list[tuple[dict, list[str]]]:
    """`count` (observation, legal moves) pairs from random in-process matches."""
    game = registry.get(game_id)
    rng = random.Random(seed)
    decisions: list[tuple[dict, list[str]]] = []
    while len(decisions) < count:
        state = game.new_state(game.min_players if game.min_players > 1 else 2, {},
                               seed=rng.randrange(2**31))
        while not state.is_over() and len(decisions) < count:
            mover = state.to_move()
            if mover == CHANCE:
                state.apply(state.sample_chance(rng))
                continue
            legal = state.legal_moves()
            decisions.append((state.observation(mover), legal))
            state.apply(rng.choice(legal))
    return decisions


def figure(path: str, seconds: list[float], arena_cpu: float | None = None,
           bot_cpu: float | None = None) -> Figure:
    """The figure of `seconds` (one per decision) and CPU seconds per decision."""
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    micros = lambda value: None if value is None else value * 1e6   # noqa: E731
    return Figure(path, len(ordered), statistics.median(ordered) * 1e6, p99 * 1e6,
                  micros(arena_cpu), micros(bot_cpu))


def floor_name(mode: str) -> str:
    if mode in grpc_floor.PATTERNS:
        return f"grpc-{mode} (pattern)"
    if mode in grpc_floor.BOUNDS:
        return f"grpc-{mode} (bound)"
    return f"grpc-{mode} (floor)"


class _Paths:
    """Every path, set up at once and timed in turns, so that whatever else the machine is
    doing weighs on all of them alike: the in-process, arena and pipe paths take turns on each
    decision; the arena alone (for its CPU) and each gRPC floor, on each `TURN` of them."""

    def __init__(self, game_id: str, *, unsafe: bool, bot: Path | None):
        from arena.bots import BotHost, BotSpec   # gRPC only when this benchmark runs

        self.game_id = game_id
        control = TimeControl(move_time=10.0)
        self.clock = SeatClock(control).for_move()
        self.strategy = StrategySeat("random", game_id)
        # The other processes first: they run wherever the machine puts them, the arena and
        # its bot as `arena play` runs them (kept apart on their own cores, hostload).
        # What failed to start ends what did (`close`), the caller's placement included.
        self.child, self.floors, self.kept_apart, self.host, self.bot = None, [], False, None, None
        try:
            self.child = subprocess.Popen([sys.executable, "-c", _PIPE_CHILD],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for mode in grpc_floor.MODES + grpc_floor.PATTERNS + grpc_floor.BOUNDS:
                self.floors.append(grpc_floor.FloorPair(mode))
            self.kept_apart = not unsafe and hostload.keep_apart()
            self.host = BotHost(unsafe_no_sandbox=unsafe)
            self.bot = self.host.seat(BotSpec.load(bot or sample_bot("random")))
            self.bot.new_match(MatchInfo(game_id, registry.get(game_id).resolve_options({}, 2),
                                         0, 2, control, bot_seed=1))
        except BaseException:
            self.close()
            raise
        self.arena_name = "arena (gRPC, no sandbox)" if unsafe else "arena (gRPC, sandboxed bot)"

    def deciders(self) -> dict[str, Callable[[dict, list[str]], str]]:
        send, receive = self.child.stdin, self.child.stdout

        def arena(observation: dict, legal: list[str]) -> str:
            move = self.bot.act(observation, legal, self.clock)
            self.bot.rest()   # held until its next act, as in a match
            return move

        def pipe_json(observation: dict, legal: list[str]) -> str:
            send.write(json.dumps([observation, legal]).encode() + b"\n")
            send.flush()
            return receive.readline()[:-1].decode()

        def pipe_ping(observation: dict, legal: list[str]) -> str:
            send.write(b"p\n")
            send.flush()
            receive.readline()
            return legal[0]

        return {"in-process": lambda seen, legal: self.strategy.act(seen, legal, self.clock),
                self.arena_name: arena,
                "pipe-json": pipe_json, "pipe-ping": pipe_ping}

    def placement(self) -> dict[str, list[int]]:
        bot: set[int] = set()
        for thread in self.bot.process.process.threads():
            try:
                bot |= os.sched_getaffinity(thread)
            except ProcessLookupError:   # a thread that ended meanwhile
                pass
        return {"arena": sorted(os.sched_getaffinity(0)), "bot": sorted(bot)}

    def close(self) -> None:
        """Ends what was started (all of it, or what had started when the start failed)."""
        for floor in self.floors:
            floor.close()
        if self.child is not None:
            self.child.stdin.close()
            self.child.wait(timeout=10)
        if self.bot is not None:
            self.bot.close()
        if self.host is not None:
            self.host.close()
        if self.kept_apart:   # not a caller's own placement
            hostload.end_apart()


def run(game_id: str, count: int, *, unsafe: bool = False, bot: Path | None = None
        ) -> Results:
    decisions = corpus(game_id, count + WARM_UP)
    paths = _Paths(game_id, unsafe=unsafe, bot=bot)
    try:
        deciders = paths.deciders()
        seconds: dict[str, list[float]] = {name: [] for name in deciders}
        cpu = {name: [0.0, 0.0] for name in deciders}   # the arena's: its side, the bot's
        by_thread = threadcpu.RoleClock()   # the arena's turns, on both sides
        floor_seconds: list[list[float]] = [[] for _ in paths.floors]
        for floor in paths.floors:
            floor.round_trips(WARM_UP)
        floor_cpu_before = [floor.cpu() for floor in paths.floors]
        turns = [(paths.floors.index(floor), None) for floor in paths.floors]
        turns += [(None, name) for name in deciders]
        for number, start in enumerate(range(0, len(decisions), TURN)):
            turn = decisions[start:start + TURN]
            shift = number % len(turns)
            for floor_index, name in turns[shift:] + turns[:shift]:   # a rotating order
                timed = turn[max(0, WARM_UP - start):]
                if floor_index is not None:
                    if timed:
                        floor_seconds[floor_index] += paths.floors[floor_index].round_trips(
                            len(timed))
                    continue
                decide = deciders[name]
                if timed and name == paths.arena_name:
                    by_thread.start({
                        **threadcpu.arena_roles(threading.current_thread()),
                        **threadcpu.bot_roles(paths.bot.process.process.threads())})
                arena_before, bot_before = time.process_time(), paths.bot.cpu_seconds()
                for index, (observation, legal) in enumerate(turn, start):
                    started = time.monotonic()
                    move = decide(observation, legal)
                    elapsed = time.monotonic() - started
                    if move not in legal:
                        raise RuntimeError(f"{name} answered {move!r}, not a legal move")
                    if index >= WARM_UP:
                        seconds[name].append(elapsed)
                if timed and name == paths.arena_name:
                    cpu[name][0] += time.process_time() - arena_before
                    cpu[name][1] += paths.bot.cpu_seconds() - bot_before
                    by_thread.stop()
        figures = [figure(name, values, *((cpu[name][0] / count, cpu[name][1] / count)
                                          if name == paths.arena_name else ()))
                   for name, values in seconds.items()]
        for floor, times, (server_before, client_before) in zip(
                paths.floors, floor_seconds, floor_cpu_before):
            server, client = floor.cpu()
            figures.append(figure(floor_name(floor.mode), times,
                                  (server - server_before) / count,
                                  (client - client_before) / count))
        return Results(figures, {role: seconds / count * 1e6
                                 for role, seconds in by_thread.seconds.items()},
                       paths.placement())
    finally:
        paths.close()
