"""One match: an engine state, one Seat per player, their clocks -> an arena-record/1 dict.

The runner owns the rules' authority and the clock: it asks the engine who is to move, hands
that seat its observation, the legal moves and its clock, times the answer itself, and
applies it. Chance moves are drawn from a generator derived from the match seed and recorded
like any move, so the record replays without a generator.

A seat that cannot give a legal move in time forfeits (see `engine.records.forfeit_result`);
the record then keeps the moves up to the forfeit and `result.end = "forfeit"`.
"""
from __future__ import annotations

import copy
import random
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from arena import hostload
from arena.bot_errors import BotError, BotTimeout
from arena.clock import MoveClock, SeatClock, TimeControl
from arena.errors import ArenaError, HostError, HostOverloaded
from arena.keys import MatchSeeds
from arena import strategies
from engine import records, registry
from engine.core import CHANCE, IllegalMoveError, State


FROZEN_CPU_BURST = 0.020
FROZEN_CPU_PER_MOVE = 0.002
"""CPU seconds a bot may use while frozen, counted from the moment it is frozen to its next
move: over a match, at most FROZEN_CPU_BURST in all, plus FROZEN_CPU_PER_MOVE for every
frozen gap after the first. An honest bot takes next to nothing (0.05 ms median, 0.5 ms at
most, seen; the freezer, which does not wait, stops a spinning thread within moments); the
burst absorbs a rare host spike (16 ms once, on a loaded CI machine). More is CPU taken from
the bots that moved meanwhile (kernel work the freezer cannot interrupt) and forfeits with
reason `fair-play`: 20 ms in one gap, or a steady 2 ms or more a gap, within a match."""


def frozen_cpu_allowed(gaps: int) -> float:
    """The CPU seconds a bot may have used while frozen, in all, over `gaps` frozen gaps."""
    return FROZEN_CPU_BURST + FROZEN_CPU_PER_MOVE * max(0, gaps - 1)


@dataclass(frozen=True)
class MatchInfo:
    """What a seat is told when a match starts (never the deal's seed)."""

    game_id: str
    options: dict            # all options, defaults filled in
    seat: int
    players: int
    time_control: TimeControl
    bot_seed: int
    """A seed for the seat's own random choices: reproducible, but says nothing of the deal
    (see arena.keys)."""
    label: str = ""
    """What the arena calls this match in bot logs (a league's match id); may be empty."""


class Seat(ABC):
    """A player of a match: a built-in strategy in-process, or a bot process (arena.bots)."""

    name: str
    version: str
    cores: float = 1.0
    """The CPU the seat may use during its move, in cores (a bot's CPU quota)."""
    frozen_between_moves: bool = False
    """True when the seat's processes are frozen between its moves: any CPU time they take
    meanwhile is taken from the others (FROZEN_CPU_BURST)."""

    def new_match(self, info: MatchInfo) -> None:
        """Called before the first act of every match; may raise BotError, or HostError
        when the host cannot start it."""

    @abstractmethod
    def act(self, observation: dict, legal_moves: list[str], clock: MoveClock,
            ply: int = 0) -> str:
        """The seat's move in notation for record entry `ply`; raises BotError when no usable
        answer comes (a remote seat waits at most `clock.deadline` seconds)."""

    def rest(self) -> None:
        """Called after the seat's moves, once its time is taken, before another seat is
        asked to move (or when the match ends): a bot process is frozen until its next act,
        so it cannot take CPU from the bot whose turn it is. A seat that moves again next
        (play, then draw) is not frozen in between: no other bot runs meanwhile."""

    def cpu_seconds(self) -> float | None:
        """CPU time the seat's processes used so far (None where it cannot be told): the
        difference around an act is the move's CPU time."""
        return None

    def run_queue_wait(self) -> float | None:
        """Seconds the seat's threads waited for a CPU since its last `mark_run_queue` (None
        where it cannot be told): a timeout is the host's only if the bot waited (see
        arena.hostload)."""
        return None

    def mark_run_queue(self) -> None:
        """Starts `run_queue_wait` afresh: called before a move when the machine is busy."""

    def arena_wait(self) -> float | None:
        """Seconds the arena's threads that carry this seat's moves (the caller's, and a
        bot's stream handler and server poller) waited for a CPU over their lives (None
        where it cannot be told, or the arena is not kept apart from its bots): a counter,
        read around a move of an arena kept apart."""
        return None

    def match_over(self, result: dict) -> None:
        """Called once the match ended (normally or by a forfeit, anyone's)."""

    def discard(self) -> None:
        """Called instead of `match_over` when the match is no result (the host failed it):
        a bot process that saw the deal must not play it again, so it is ended."""

    def close(self) -> None:
        """Releases what the seat holds (processes, sockets)."""


class StrategySeat(Seat):
    """A built-in strategy (`random`, `greedy`) played in-process."""

    def __init__(self, name: str, game_id: str):
        try:
            self.choose = strategies.get(name, game_id)
        except (LookupError, ImportError) as error:
            raise ArenaError(f"no built-in bot {name!r} for game {game_id}: {error}") from None
        self.name = name
        self.version = "builtin"
        self.rng = random.Random()

    def new_match(self, info: MatchInfo) -> None:
        self.rng = random.Random(info.bot_seed)

    def act(self, observation: dict, legal_moves: list[str], clock: MoveClock,
            ply: int = 0) -> str:
        return self.choose(observation, legal_moves, self.rng)

    def cpu_seconds(self) -> float:
        return time.thread_time()   # the strategy runs in the match's own thread


# -- events for a move-by-move log --------------------------------------------------------
@dataclass(frozen=True)
class Moved:
    ply: int
    seat: int | str          # a seat number or "chance"
    bot: str                 # the seat's name ("chance" for chance moves)
    move: str
    seconds: float | None    # time the seat took (None for chance)
    state: State             # the position after the move (read it, do not change it)


@dataclass(frozen=True)
class Forfeited:
    ply: int
    seat: int
    bot: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Ended:
    record: dict
    state: State


Event = Moved | Forfeited | Ended


@dataclass
class _Forfeit:
    seat: int
    reason: str
    detail: str


@dataclass
class _Progress:
    moves: list = field(default_factory=list)
    times: list = field(default_factory=list)       # wall seconds per move (the clock's)
    cpu_times: list = field(default_factory=list)   # CPU seconds of the mover's processes
    host_load: dict | None = None   # what the machine did during a move that timed out
    resting: int | None = None      # the last mover's seat, to rest before another moves
    rested_cpu: dict = field(default_factory=dict)   # seat -> its CPU time as it was frozen
    frozen_cpu: dict = field(default_factory=dict)   # seat -> [CPU while frozen, gaps]


def play_match(game_id: str, players_count: int, options: Mapping[str, Any] | None,
               seed: int, seats: Sequence[Seat], time_control: TimeControl = TimeControl(),
               on_event: Callable[[Event], None] | None = None, *,
               bot_seeds: Sequence[int] | None = None, label: str = "",
               setup: Mapping[str, Any] | None = None,
               chance_moves: Sequence[str] = ()) -> dict:
    """Plays one match and returns its arena-record/1 dict (with timings and bot versions).

    `seed` fixes the deal and the chance draws; it stays in the arena. `bot_seeds` are the
    seats' `rng_seed`s, derived from a secret key (arena.keys) for a match that must replay
    the same; without them each seat gets fresh random bits. `label` names the match in
    the bots' logs (a league's match id).

    `setup` replaces the deal drawn from `seed` (a recorded deal played again by other
    bots); `chance_moves` are recorded chance outcomes, each used in turn at a chance move
    of its kind where it is legal (see `_recorded_chance`), the others drawn from `seed`.
    """
    game = registry.get(game_id)
    if len(seats) != players_count:
        raise ArenaError(f"{len(seats)} bots for {players_count} players: give one bot per seat")
    if bot_seeds is None:
        bot_seeds = MatchSeeds.secret(seed, players_count).bots
    if len(bot_seeds) != players_count:
        raise ArenaError(f"{len(bot_seeds)} bot seeds for {players_count} players")
    resolved = game.resolve_options(options, players_count)
    if setup is None:
        state = game.new_state(players_count, resolved, seed=seed)
    else:
        state = game.new_state(players_count, resolved, setup=copy.deepcopy(dict(setup)))
    setup = copy.deepcopy(state.setup)
    emit = on_event or (lambda event: None)
    progress = _Progress()

    started: list[Seat] = []
    try:
        forfeit = _start_seats(game_id, resolved, players_count, bot_seeds, seats,
                               time_control, started, label)
        if forfeit is None:
            forfeit = _play(state, seats, time_control, seed, progress, emit,
                            list(chance_moves))
    except HostError:
        for seat in started:
            seat.discard()
        raise
    finally:
        _rest(progress, seats)   # the last mover: frozen before the match-over message
    if forfeit is None:
        result = records.normal_result(state)
    else:
        seat_name = seats[forfeit.seat].name
        emit(Forfeited(len(progress.moves), forfeit.seat, seat_name, forfeit.reason,
                       forfeit.detail))
        result = records.forfeit_result(players_count, forfeit.seat, forfeit.reason,
                                        forfeit.detail)
    for seat in started:
        _tell_match_over(seat, result)

    extras = {"bots": [{"name": seat.name, "version": seat.version} for seat in seats],
              "times": progress.times, "cpu_times": progress.cpu_times,
              "time_control": time_control.to_record()}
    if progress.host_load is not None:
        extras["host_load"] = progress.host_load
    record = records.build_record(
        game_id=game_id, options=resolved,
        players=[seat.name for seat in seats], seed=seed, setup=setup,
        moves=progress.moves, result=result, extras=extras)
    emit(Ended(record, state))
    return record


def _start_seats(game_id, options, players, bot_seeds, seats, time_control,
                 started: list[Seat], label: str) -> _Forfeit | None:
    """Tells every seat a match starts (appending it to `started`); the first that cannot
    start forfeits, and the seats after it are not started at all."""
    for index, seat in enumerate(seats):
        try:
            seat.new_match(MatchInfo(game_id, dict(options), index, players, time_control,
                                     bot_seeds[index], label))
        except BotError as error:
            return _Forfeit(index, error.reason, f"{_who(seat, index, 0)}: {error.problem}")
        started.append(seat)
    return None


def _who(seat: Seat, index: int, ply: int) -> str:
    return f"bot {seat.name} (seat {index}, ply {ply})"


def _play(state: State, seats: Sequence[Seat], time_control: TimeControl, seed: int,
          progress: _Progress, emit: Callable[[Event], None],
          recorded_chance: list[str]) -> _Forfeit | None:
    """Runs the match to its end; returns the forfeit that stopped it, if any."""
    chance_rng = random.Random(f"arena-chance:{seed}")
    clocks = [SeatClock(time_control) for _ in seats]
    machine = hostload.Watch()
    while True:
        mover = state.to_move()
        if mover is None:
            return None
        ply = len(progress.moves)
        if mover == CHANCE:
            move = (_recorded_chance(state, recorded_chance)
                    or state.sample_chance(chance_rng))
            state.apply(move)
            progress.moves.append([CHANCE, move])
            progress.times.append(None)
            progress.cpu_times.append(None)
            emit(Moved(ply, CHANCE, CHANCE, move, None, state))
            continue
        seat, clock = seats[mover], clocks[mover]
        if progress.resting != mover:
            _rest(progress, seats)   # before this seat's CPU count and clock start
        move_clock = clock.for_move()
        cpu_before = seat.cpu_seconds()
        if (seat.frozen_between_moves and cpu_before is not None
                and mover in progress.rested_cpu):
            forfeit = _check_frozen_cpu(progress, seat, mover, ply, cpu_before)
            if forfeit is not None:
                return forfeit
        machine_before = hostload.machine_cpu_seconds()
        arena_before = hostload.arena_cpu_seconds()
        if machine.busy(machine_before):   # this move may be starved: time its waits alone
            seat.mark_run_queue()
        own_core = hostload.arena_core_seconds()   # kept apart from its bots: its own core
        own_wait = seat.arena_wait()
        started = time.monotonic()
        try:
            move = seat.act(state.observation(mover), state.legal_moves(), move_clock, ply)
        except BotTimeout as error:
            return _timeout(seat, mover, ply, error.problem,
                            (error.at or time.monotonic()) - started, move_clock.allowed,
                            _spent(cpu_before, error.cpu_seconds), error.run_queue_wait,
                            (machine_before, error.machine_cpu_seconds),
                            (arena_before, error.arena_cpu_seconds), progress,
                            _OwnCore(own_core, own_wait, error.arena_core_seconds,
                                     error.arena_wait))
        except BotError as error:
            return _Forfeit(mover, error.reason, f"{_who(seat, mover, ply)}: {error.problem}")
        elapsed = time.monotonic() - started
        cpu_after = seat.cpu_seconds()
        progress.resting = mover   # frozen off the clock, unless it moves again next
        if not clock.charge(move_clock, elapsed):
            return _timeout(seat, mover, ply, f"answered after {elapsed:.3f} s, allowed "
                                              f"{move_clock.allowed:.3f} s",
                            elapsed, move_clock.allowed, _spent(cpu_before, cpu_after),
                            seat.run_queue_wait(),
                            (machine_before, None), (arena_before, None), progress,
                            _OwnCore(own_core, own_wait, hostload.arena_core_seconds(),
                                     seat.arena_wait()))
        try:
            state.apply(move)
        except IllegalMoveError as error:
            return _Forfeit(mover, "illegal", f"{_who(seat, mover, ply)}: {error}")
        progress.moves.append([mover, move])
        elapsed = round(elapsed, 6)   # the log shows what the record keeps
        progress.times.append(elapsed)
        spent = _spent(cpu_before, cpu_after)
        progress.cpu_times.append(None if spent is None else round(spent, 6))
        emit(Moved(ply, mover, seat.name, move, elapsed, state))


def _rest(progress: _Progress, seats: Sequence[Seat]) -> None:
    """Freezes the last mover (`Seat.rest`), if it is not yet, noting its CPU time then:
    what it uses from there to its next move, it uses frozen. (Between its reply and here
    no other seat is asked to move, so what it computes meanwhile takes nobody's time.)"""
    index, progress.resting = progress.resting, None
    if index is None:
        return
    seat = seats[index]
    cpu = seat.cpu_seconds() if seat.frozen_between_moves else None
    seat.rest()
    if cpu is not None:
        progress.rested_cpu[index] = cpu


def _check_frozen_cpu(progress: _Progress, seat: Seat, mover: int, ply: int,
                      cpu_now: float) -> _Forfeit | None:
    """The fair-play forfeit of a seat that used more CPU while frozen than it may (see
    FROZEN_CPU_BURST), counted over the match up to this move."""
    taken = progress.frozen_cpu.setdefault(mover, [0.0, 0])
    taken[0] += max(0.0, cpu_now - progress.rested_cpu.pop(mover))
    taken[1] += 1
    allowed = frozen_cpu_allowed(taken[1])
    if taken[0] <= allowed:
        return None
    gaps = f"{taken[1]} gap" + ("s" if taken[1] > 1 else "")
    return _Forfeit(mover, "fair-play", f"{_who(seat, mover, ply)}: used {taken[0] * 1000:.0f} "
                    f"ms of CPU while frozen between its moves in this match ({gaps}; at most "
                    f"{allowed * 1000:.0f} ms: {FROZEN_CPU_BURST * 1000:.0f} ms, plus "
                    f"{FROZEN_CPU_PER_MOVE * 1000:.0f} ms a gap after the first), taken from "
                    "the bots that moved meanwhile")


def _recorded_chance(state: State, recorded: list[str]) -> str | None:
    """The next recorded chance outcome of the kind pending here (its first word: `deck`,
    `order`), taken off `recorded`, if it is legal here; None to draw one instead.

    Other bots play the deal otherwise, so a recorded outcome may not fit: a reshuffle of
    another discard pile, an order of other mandalas. Such a one is dropped and the outcome
    drawn; the recorded ones after it are still offered to later chance moves."""
    kind = state.sample_chance(random.Random(0)).split()[0]   # a throwaway draw names it
    index = next((i for i, move in enumerate(recorded) if move.split()[0] == kind), None)
    if index is None:
        return None
    move = recorded.pop(index)
    try:
        state.clone().apply(move)
    except IllegalMoveError:
        return None
    return move


def _spent(cpu_before: float | None, cpu_after: float | None) -> float | None:
    return None if cpu_before is None or cpu_after is None else cpu_after - cpu_before


@dataclass(frozen=True)
class _OwnCore:
    """An arena kept apart from its bots, around a move that timed out: the CPU used on its
    own core and the wait of its threads of the move (`Seat.arena_wait`), at the move's
    start and at its timeout (None: not kept apart, or not told)."""

    core_before: float | None
    wait_before: float | None
    core_after: float | None
    wait_after: float | None

    def measures(self) -> dict:
        """`hostload.measure`'s arguments of the arena's own core."""
        if self.core_before is None or self.core_after is None:
            return {}
        waited = (None if self.wait_before is None or self.wait_after is None
                  else self.wait_after - self.wait_before)
        return {"arena_core": self.core_after - self.core_before, "arena_waited": waited}


def _timeout(seat: Seat, mover: int, ply: int, problem: str, wall: float, allowed: float,
             bot_cpu: float | None, waited: float | None,
             machine: tuple[float, float | None], arena: tuple[float, float | None],
             progress: _Progress, own: _OwnCore) -> _Forfeit:
    """A timeout forfeit, with what the machine did meanwhile in the record; HostOverloaded
    instead when other processes kept the bot off the CPU it was due, or held the arena's
    own core while it was to read the reply (see arena.hostload). `wall`: the move's time,
    `allowed`: what its clock allowed; `machine` and `arena`: their CPU counters at the
    move's start and at its timeout (None: now)."""
    arena_after = hostload.arena_cpu_seconds() if arena[1] is None else arena[1]
    load = hostload.measure(wall, bot_cpu, waited, machine[0], seat.cores, machine[1],
                            arena_cpu=arena_after - arena[0], overrun=wall - allowed,
                            **own.measures())
    who = _who(seat, mover, ply)
    if load.starved:
        raise HostOverloaded(f"{who} timed out while other processes held the machine's CPU "
                             f"({load.describe()}): the match is voided, not the bot's loss",
                             {"seat": mover, "ply": ply, **load.to_record()})
    progress.host_load = {"seat": mover, "ply": ply, **load.to_record()}
    return _Forfeit(mover, "timeout", f"{who}: {problem} ({load.describe()})")


def _tell_match_over(seat: Seat, result: dict) -> None:
    try:
        seat.match_over(result)
    except BotError:
        pass  # the match is decided; a bot that broke afterwards is restarted before its next
