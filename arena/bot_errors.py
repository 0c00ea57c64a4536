"""How a seat fails a match: the errors a seat raises instead of answering.

Each carries the forfeit `reason` written into the record (`result.forfeit.reason`) and a
message naming the bot, its seat and the ply, so a log line alone says what happened.
An illegal move is not here: the engine's IllegalMoveError covers it (reason "illegal").
"""
from __future__ import annotations

from arena.errors import ArenaError


class BotError(ArenaError):
    """A bot could not give a usable answer; the match is forfeited with `reason`."""

    reason = "error"

    def __init__(self, bot: str, problem: str, *, seat: int | None = None,
                 ply: int | None = None):
        self.bot = bot
        self.problem = problem
        self.seat = seat
        self.ply = ply
        where = ", ".join(part for part in (
            f"seat {seat}" if seat is not None else "",
            f"ply {ply}" if ply is not None else "") if part)
        super().__init__(f"bot {bot}" + (f" ({where})" if where else "") + f": {problem}")


class BotTimeout(BotError):
    """No answer (or no handshake) within the deadline."""

    reason = "timeout"
    cpu_seconds: float | None = None
    """CPU time all the bot's processes had used when it timed out (before it was killed)."""
    run_queue_wait: float | None = None
    """Seconds its threads had waited for a CPU since their mark, then (see arena.hostload)."""
    machine_cpu_seconds: float | None = None
    arena_cpu_seconds: float | None = None
    arena_core_seconds: float | None = None
    arena_wait: float | None = None
    at: float | None = None
    """The machine's, the arena process's and the arena's own core's CPU-time counters, its
    threads' wait (`Seat.arena_wait`) and time.monotonic() when it timed out (before the
    kill, which is the arena's work, not the others')."""


class BotCrashed(BotError):
    """The bot process died or its stream broke."""

    reason = "crash"


class BotProtocolError(BotError):
    """The bot sent something that is not a valid protocol message or move string."""

    reason = "protocol"


class BotReportedError(BotError):
    """The bot said its own code failed (a MoveReply with `error` set) instead of moving."""

    reason = "error"


class BotOutOfMemory(BotError):
    """The kernel killed the bot for using more memory than its limit (its memory cgroup)."""

    reason = "memory"
