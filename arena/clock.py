"""Time controls and per-seat clocks, in seconds (milliseconds only at the wire, in arena.bots).

A time control is a per-move limit (`--move-time 1.0`), a bank with an increment
(`--tc 10+0.1`), or both (each move then gets the smaller of the two). Bots also get a
separate start-up budget, and every deadline a small transport margin, so a bot that answers
exactly at its limit is not forfeited by the time the reply needs to cross the socket.

The arena measures time itself with a monotonic clock around each decision; what a bot says
about its own time is never trusted.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from arena.errors import ArenaError

DEFAULT_MOVE_TIME = 1.0
DEFAULT_STARTUP = 10.0
DEFAULT_MARGIN = 0.05
MAX_SECONDS = 86400.0
"""The most any one time limit may be (a day): beyond it no match is meant to wait, and the
clock's arithmetic (deadlines, timeouts handed to the OS) would overflow."""


class TimeControlError(ArenaError, ValueError):
    """A time control the user wrote that cannot be used."""


@dataclass(frozen=True)
class TimeControl:
    """How much time each seat gets. All figures in seconds; None means "no such limit"."""

    move_time: float | None = DEFAULT_MOVE_TIME  # limit for each single decision
    bank: float | None = None                    # starting bank for the whole match
    increment: float = 0.0                       # added to the bank after each answered move
    startup: float = DEFAULT_STARTUP             # to start a bot process and finish its handshake
    margin: float = DEFAULT_MARGIN               # transport slack on top of every deadline

    def __post_init__(self) -> None:
        for name in ("move_time", "bank", "startup"):   # none of these can be 0 and work
            value = getattr(self, name)
            usable = _is_number(value) and value > 0 and _finite(value)
            if (value is not None or name == "startup") and not usable:
                raise TimeControlError(f"{name} must be a positive number of seconds, "
                                       f"got {_shown(value)}")
        for name in ("increment", "margin"):
            value = getattr(self, name)
            if not (_is_number(value) and value >= 0 and _finite(value)):
                raise TimeControlError(f"{name} must be zero or more seconds, "
                                       f"got {_shown(value)}")
        for name in ("move_time", "bank", "increment", "startup", "margin"):
            value = getattr(self, name)
            if value is not None and value > MAX_SECONDS:
                raise TimeControlError(f"{name} must be at most {MAX_SECONDS:g} seconds (a "
                                       f"day), got {_shown(value)}: give a shorter time")

    @classmethod
    def from_cli(cls, move_time: float | None, tc: str | None,
                 startup: float | None = None) -> "TimeControl":
        """From `--move-time SECONDS` and/or `--tc BANK+INCREMENT`; 1 s per move if neither."""
        bank, increment = (None, 0.0) if tc is None else parse_tc(tc)
        if move_time is None and bank is None:
            move_time = DEFAULT_MOVE_TIME
        return cls(move_time=move_time, bank=bank, increment=increment,
                   startup=DEFAULT_STARTUP if startup is None else startup)

    def describe(self) -> str:
        parts = []
        if self.move_time is not None:
            parts.append(f"{self.move_time:g} s per move")
        if self.bank is not None:
            parts.append(f"bank {self.bank:g} s + {self.increment:g} s per move")
        return ", ".join(parts) or "no time limit"

    @classmethod
    def from_record(cls, data: dict | None) -> "TimeControl":
        """The time control a record's `time_control` key names (the default one when the
        record has none); TimeControlError when its figures are unusable."""
        if not data:
            return cls()
        if not isinstance(data, dict):
            raise TimeControlError(f"the record's time_control is not an object: {data!r}")
        fields = {key: data[key] for key in ("move_time", "bank", "increment", "startup",
                                               "margin") if key in data}
        try:
            return cls(**fields)
        except (TimeControlError, TypeError) as error:   # TypeError: a key it does not know
            raise TimeControlError(f"the record's time_control is unusable: {error}") from None

    def to_record(self) -> dict:
        """The JSON form a match record keeps (an extra key of arena-record/1)."""
        return {"move_time": self.move_time, "bank": self.bank, "increment": self.increment,
                "startup": self.startup, "margin": self.margin}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: int | float) -> bool:
    return isinstance(value, int) or math.isfinite(value)   # a long int overflows isfinite


def _shown(value: object) -> str:
    """A figure as an error quotes it, cut short (a record may hold a 5000-digit number)."""
    try:
        text = repr(value)
    except ValueError:   # an int too long to print
        text = "a number too long to print"
    return text if len(text) <= 40 else text[:37] + "..."


def parse_tc(text: str) -> tuple[float, float]:
    """`"10+0.1"` -> (10.0, 0.1); `"10"` -> (10.0, 0.0)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*", text)
    if not match or float(match.group(1)) <= 0:
        raise TimeControlError(
            f"time control {text!r} is not BANK+INCREMENT in seconds (e.g. --tc 10+0.1)")
    return float(match.group(1)), float(match.group(2) or 0.0)


@dataclass(frozen=True)
class MoveClock:
    """What one decision may use, as handed to a seat. Seconds."""

    remaining: float | None    # what is left in the seat's bank; None without a bank
    move_limit: float | None   # the per-move limit; None without one
    allowed: float             # the time this decision may take (inf when unlimited)
    deadline: float            # allowed + transport margin: when a waiting arena gives up


class SeatClock:
    """One seat's clock over a match: hands out the allowance and charges what was used."""

    def __init__(self, control: TimeControl):
        self.control = control
        self.bank = control.bank

    def for_move(self) -> MoveClock:
        limits = [limit for limit in (self.control.move_time, self.bank) if limit is not None]
        allowed = max(0.0, min(limits)) if limits else math.inf
        return MoveClock(remaining=self.bank, move_limit=self.control.move_time,
                         allowed=allowed, deadline=allowed + self.control.margin)

    def charge(self, clock: MoveClock, elapsed: float) -> bool:
        """Books `elapsed` seconds against the clock; False when the move came too late."""
        if elapsed > clock.deadline:
            return False
        if self.bank is not None:
            self.bank = self.bank - elapsed + self.control.increment
        return True
