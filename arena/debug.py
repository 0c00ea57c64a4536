"""Puts a bot in front of one recorded position: `arena debug` and `debug_position`.

The record's moves are replayed through the engine up to ply K; then the bot folder is
started as a match starts it (sandboxed, a BotHost seat, its own NewMatch with the record's
game, options, seat and player count, the record's time control) and sent one act: the
position at K, with the clock its seat had then. The bot never sees the other seats' acts,
so what it answers depends on that position alone (and on what it keeps across matches).

    result = debug_position(record, 12, "sample_bots/greedy")
    result.observation      # the dict the bot's SDK hands to act()
    result.legal_moves, result.move, result.recorded, result.log_lines

Ply K is a record entry's index (chance moves count, as `arena replay` numbers them); after
the last move of a forfeited match it is the forfeit's ply, the position the forfeiting seat
faced. The bot's seed (NewMatch.rng_seed) is `bot_seed`: a match's own is secret and not in
its record, so a bot that draws random numbers may choose otherwise than it did.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from arena import wire
from arena.actlogs import split_log
from arena.bot_errors import BotError
from arena.bots.manifest import BotSpec
from arena.clock import MoveClock, SeatClock, TimeControl
from arena.errors import ArenaError
from arena.match import MatchInfo
from arena.sandbox import log_lines
from arena.sdk.bot import observation_dict
from engine import records
from engine.core import CHANCE, State

DEBUG_BOT_SEED = 0
"""The bot's rng_seed unless one is given: the same every run, so a run can be repeated."""


@dataclass(frozen=True)
class DebugResult:
    """What one debugged act showed."""

    ply: int
    seat: int
    game: str
    bot: str                    # the debugged bot's name and version, "name (version)"
    recorded_bot: str           # the seat's player in the record
    observation: dict           # as the bot's SDK hands it to act(): every field, even empty
    legal_moves: list[str]
    time_control: TimeControl
    clock: MoveClock            # the seat's clock at that ply, as the act carries it
    move: str | None            # what the bot answers now (None: no usable answer)
    error: str | None           # why there is none: "REASON: problem", as a forfeit says
    seconds: float | None       # how long the answer took
    log_lines: list[str]        # the bot's stderr for this match (start-up, new_match, act)
    recorded: str               # the move recorded at this ply, or the forfeit there

    @property
    def legal(self) -> bool:
        return self.move is not None and self.move in self.legal_moves


def debug_position(record: Mapping[str, Any], ply: int, folder: str | Path, *,
                   move_time: float | None = None, bot_seed: int = DEBUG_BOT_SEED,
                   unsafe_no_sandbox: bool = False) -> DebugResult:
    """Replays `record` to `ply`, starts the bot in `folder` for the seat to move there and
    asks it for one move; ArenaError (or RecordError) for a ply or bot that cannot be used.

    `move_time` replaces the record's time control with that per-move limit."""
    read = records.read(record)
    state, seat = position_at(read, ply)
    spec = BotSpec.load(folder, read.game.id)
    control = TimeControl.from_record(record.get("time_control"))
    if move_time is not None:
        control = TimeControl(move_time=move_time, startup=control.startup,
                              margin=control.margin)
    clock = _seat_clock(record, read, seat, ply, control)
    legal_moves = state.legal_moves()
    observation = state.observation(seat)
    act = wire.act_message(1, "debug", ply, read.game.id, observation, legal_moves, clock)
    received = observation_dict(act.act)   # what the SDK turns the wire message into

    from arena.bots import BotHost   # gRPC only when a bot is really started

    log_dir = Path(tempfile.mkdtemp(prefix="arena-debug-"))
    label = f"debug of ply {ply}"
    move = error = seconds = None
    try:
        with BotHost(unsafe_no_sandbox=unsafe_no_sandbox, log_dir=log_dir,
                     warn_slow_start=True) as host:
            with host.seat(spec) as bot_seat:
                info = MatchInfo(read.game.id, dict(read.options), seat, len(read.players),
                                 control, bot_seed, label=label)
                started = time.monotonic()
                try:
                    bot_seat.new_match(info)
                    started = time.monotonic()
                    move = bot_seat.act(observation, legal_moves, clock, ply)
                    seconds = time.monotonic() - started
                except BotError as failure:
                    error = f"{failure.reason}: {failure.problem}"
                    seconds = time.monotonic() - started
        # Read once the host is closed: its processes are gone and their output drained.
        lines = _match_lines(host.log_path(spec), label)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    if move is not None and move not in legal_moves:
        error = f"illegal: {move!r} is not a legal move here"
    if error is not None:   # a forfeit names the log, which is gone: the lines are shown
        error = error.replace(f" (its stderr: {log_dir}/{spec.name}-{spec.version}.log)", "")
    return DebugResult(ply=ply, seat=seat, game=read.game.id,
                       bot=f"{spec.name} ({spec.version})", recorded_bot=read.players[seat],
                       observation=received, legal_moves=legal_moves, time_control=control,
                       clock=clock,
                       move=move, error=error, seconds=seconds, log_lines=lines,
                       recorded=recorded_at(read, ply))


def position_at(read: records.Record, ply: int) -> tuple[State, int]:
    """The state before record entry `ply` and the seat to decide there; ArenaError when no
    seat decides at `ply` (out of range, a chance move, the end of a normal match)."""
    last = len(read.moves)
    forfeit = (read.result or {}).get("forfeit")
    if not 0 <= ply <= last:
        raise ArenaError(f"ply {ply} is outside the record: its plies are 0 to {last - 1}"
                         + (f", and {last} for the forfeit" if forfeit else ""))
    if ply == last and not forfeit:
        raise ArenaError(f"ply {ply} is the end of the match: no seat decides there "
                         f"(its plies are 0 to {last - 1})")
    if ply < last and read.moves[ply][0] == CHANCE:
        raise ArenaError(f"ply {ply} is a chance move ({read.moves[ply][1]}): no seat decides "
                         "there; the plies before or after it are decisions")
    state = read.start()
    for index, (entry_seat, move) in enumerate(read.moves[:ply]):
        records.apply_entry(state, index, entry_seat, move)
    seat = state.to_move()
    if not isinstance(seat, int):
        raise ArenaError(f"no seat is to move at ply {ply} (the replay says {seat!r})")
    return state, seat


def recorded_at(read: records.Record, ply: int) -> str:
    """What the record says happened at `ply`: the move, or the forfeit."""
    if ply < len(read.moves):
        return read.moves[ply][1]
    forfeit = read.result["forfeit"]
    detail = forfeit.get("detail", "")
    return (f"forfeit by seat {forfeit['seat']} ({forfeit['reason']})"
            + (f": {detail}" if detail else ""))


def _seat_clock(record: Mapping[str, Any], read: records.Record, seat: int, ply: int,
                control: TimeControl) -> MoveClock:
    """The seat's clock at `ply`: with a bank, what the seat's recorded times left of it."""
    clock = SeatClock(control)
    times = record.get("times")
    if control.bank is not None and isinstance(times, list) and len(times) >= ply:
        for (entry_seat, _), seconds in zip(read.moves[:ply], times):
            if entry_seat == seat and isinstance(seconds, (int, float)):
                clock.charge(clock.for_move(), seconds)
    return clock.for_move()


def _match_lines(path: Path, label: str) -> list[str]:
    """The bot's own lines in match `label` (start-up, new match, the act), untagged."""
    if not path.is_file():
        return []
    plies = split_log(log_lines(path))
    return [line for (match, _seat), by_ply in plies.items() if match == label
            for _ply, lines in sorted(by_ply.items()) for line in lines]
