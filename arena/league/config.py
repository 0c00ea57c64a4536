"""What a league is (`LeagueConfig`, stored with it as JSON) and what a worker is told to play
its matches (`RunPlan`). Made from a file and flags by arena.league.settings, planned into
bots and matches by arena.league.plan.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from arena.clock import TimeControl
from arena.errors import ArenaError
from arena.league.schedule import DEFAULT_MAX_TABLES, DEFAULT_SEATING
from arena.league.store import BotEntry


class LeagueError(ArenaError):
    """A league that cannot be started or resumed as asked."""


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
    seating: str = DEFAULT_SEATING
    """`independent` (a deal per match) or `mirrored` (a table's deal in every seating);
    arena.league.schedule."""
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
        # Leagues stored before the seating mode existed all played mirrored deals.
        return cls(**{"seating": "mirrored", **data, "bots": tuple(data["bots"])})

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
    log_names: tuple[tuple[str, str], ...] = ()
    """(bot name, log file name in `log_dir`) for bots whose log is not named after their
    manifest name and version: the service keeps one log per author and version, since two
    authors may submit byte-identical bots."""
    seat_lanes: bool = True
    """A bot's seat `i` is always played by its process for seat `i` (its lane): with mirrored
    deals, no process then meets a deal twice. With independent deals (a deal per match, never
    played again) any process of the bot may play any seat, so it needs one process, not one
    per seat: fewer start-ups, less memory."""
    pool_bots: int | None = None
    """Most bot processes one worker keeps at once (None: the bot host's default): a service's
    workers live for days and meet every version of its ladders, so their pools are capped."""


def lanes(names: Sequence[str], by_seat: bool) -> list[int]:
    """The lane (which of its pooled processes) that plays each seat of a match of `names`.

    `by_seat` (`RunPlan.seat_lanes`, mirrored deals): seat `i` in lane `i`, so a process
    meets every deal at most once. Otherwise a bot's first seat in the match takes lane 0, a
    second seat (the bot playing itself) lane 1, and so on: one process per bot."""
    if by_seat:
        return list(range(len(names)))
    return [names[:index].count(name) for index, name in enumerate(names)]
