"""A league's lifecycle: start one (checked, then created), resume one (checked against what
it started with), and run it (play what is missing, commit each match as it comes back).

`start_league` checks everything (game, player count, options, bot folders and the games they
play, the schedule; arena.league.config) before it creates anything, then creates the league
folder and database; `resume_league` reopens one and checks that no bot changed since. Both
end in `run`, which skips the matches already stored and hands the rest to an executor
(arena.league.workers), committing each finished match as it comes back (one transaction each, this
process the only writer).

A league stopped by Ctrl-C keeps every finished match; one killed with `kill -9` loses only
the matches in flight (workers die with the parent). `resume_league` plays what is missing.
"""
from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from arena.bots.manifest import BUILTIN
from arena.errors import ArenaError
from arena.keys import LeagueKey
from arena.bots.manifest import BUILTIN
from arena.league.config import LeagueConfig, LeagueError, RunPlan, check_config
from arena.stats.ratings import Outcome
from arena.league.schedule import MatchSpec
from arena.league.store import BotEntry, Store, StoreError
from arena.league.workers import Executor
from engine import registry


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


def lock_folder(folder: Path) -> int:
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
        lock = lock_folder(folder)
    except LeagueError:
        store.close()
        raise
    return League(folder, store, config, bots, specs, lock)


def resume_league(folder: str | os.PathLike) -> League:
    """Reopens a league; refuses it if a bot changed since it started."""
    folder = Path(folder)
    store = Store.open(folder)
    try:
        lock = lock_folder(folder)
    except LeagueError:
        store.close()
        raise
    try:
        if "sprt" in store.config():
            raise LeagueError(f"{folder} holds an A/B test: continue it by running the same "
                              "`arena sprt` command again")
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


def _protections(sandboxed: bool) -> list[tuple[str, str, str]]:
    """What the sandbox enforces for this run, as `arena doctor` says (stored with the league)."""
    if not sandboxed:
        return [("sandbox", "missing", "bots ran unsandboxed (--unsafe-no-sandbox)")]
    from arena.sandbox import doctor
    return [(row.name, row.status, row.detail) for row in doctor.protections()]


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
    if any(not bot.source.startswith(BUILTIN) for bot in league.bots):
        league.store.record_protections(_protections(league.config.sandbox))
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
