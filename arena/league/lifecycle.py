"""A league's lifecycle: open one (planned and checked, then created, or reopened and checked
against what it started with), and run it (play what is missing, commit each match as it
comes back).

`open_league` is the one way in, for `arena league run`, `arena league resume` and
`arena sprt`: the league is planned once (bots, schedule; arena.league.plan), everything is
checked before anything is created, and the folder is locked while it is open. `run` skips
the matches already stored and hands the rest to an executor (arena.league.workers),
committing each finished match as it comes back (one transaction each, this process the only
writer), until none is missing or its stop condition holds.

A league stopped by Ctrl-C keeps every finished match; one killed with `kill -9` loses only
the matches in flight (workers die with the parent). Opening it again plays what is missing.
"""
from __future__ import annotations

import fcntl
import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from arena.bots.manifest import is_builtin
from arena.keys import LeagueKey
from arena.league.config import LeagueConfig, LeagueError, RunPlan
from arena.league.plan import LEAGUE, LeagueKind
from arena.league.schedule import MatchSpec
from arena.league.store import DB_NAME, BotEntry, Store
from arena.league.workers import Executor
from arena.stats.ratings import Outcome
from engine import registry

RESULTS = Path("results")
"""Where leagues and A/B tests given by name are kept (results/NAME)."""


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

    def done(self) -> int:
        return len(self.specs) - len(self.missing())


def named_folder(name: str, what: str = "league") -> Path:
    """results/NAME, for a league or test given by name; refuses a name that is not one folder."""
    if "/" in name or os.sep in name or name in ("", ".", ".."):
        hint = "use --out for a path" if what == "league" else "give a name without '/'"
        raise LeagueError(f"{what} name {name!r} is not a folder name: {hint}")
    return RESULTS / name


def check_owned(folder: Path) -> None:
    """Refuses a league folder (or its `logs`) of another user, or one other users may write
    to: they could plant links in it for this arena to follow (as root: into any file)."""
    for path in (folder, folder / "logs"):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue   # made by this arena, as its own
        except OSError as error:
            raise LeagueError(f"cannot use league folder {path}: {error.strerror}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise LeagueError(f"{path} is not a folder: move it away or choose another --out")
        if info.st_uid != os.geteuid():
            raise LeagueError(f"league folder {path} belongs to another user (uid "
                              f"{info.st_uid}): an arena writes only in its own user's "
                              "folders; choose another --out")
        if info.st_mode & stat.S_IWOTH:
            raise LeagueError(f"league folder {path} is writable by every user (mode "
                              f"{stat.S_IMODE(info.st_mode):o}): another user could plant "
                              "links in it; `chmod o-w` it or choose another --out")


def lock_folder(folder: Path) -> int:
    """An exclusive lock on the league folder: two runs of one league would double matches.
    The kernel drops it when the process dies, so a killed league can be resumed at once."""
    try:
        fd = os.open(folder / "league.lock",
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as error:   # a link planted there must not make us create its target
        raise LeagueError(f"cannot lock league {folder}: {folder / 'league.lock'}: "
                          f"{error.strerror}; remove it if it is a link") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LeagueError(f"league {folder} is being run by another process right now: wait "
                          "for it or stop it first") from None
    return fd


CheckBots = Callable[[LeagueConfig, list[BotEntry]], None]
"""Checks a league's bots before they play (`arena bot check`'s short match each); raises
ArenaError to refuse the league."""


def open_league(folder: str | os.PathLike, config: LeagueConfig | None = None, *,
                kind: LeagueKind = LEAGUE, name: str | None = None,
                check_bots: CheckBots | None = None) -> League:
    """The league in `folder`, locked for this process until it is closed.

    Without a config: the league stored there, refused if a bot changed since it started.
    With one: a new league (named `name`, by default the folder's name), planned and checked
    before the folder is created; a folder that already holds one is refused, unless `kind`
    continues (A/B tests), when the stored one is reopened if it is the same. `check_bots`
    runs last, being the slowest check, and only when matches are left to play.
    """
    folder = Path(folder)
    check_owned(folder)
    if config is None or (kind.continues and (folder / DB_NAME).exists()):
        return _reopen(folder, config, kind, check_bots)
    key = LeagueKey.for_league(config.seed)
    planned = kind.plan(config, key)
    if check_bots is not None:
        Store.check_free(folder)   # refused before the slow check; create() checks again
        check_bots(planned.config, planned.bots)
    store = Store.create(folder, name=name or folder.name, config=kind.stored(planned.config),
                         planned=kind.planned(planned.specs), bots=planned.bots, key=key)
    try:
        lock = lock_folder(folder)
    except LeagueError:
        store.close()
        raise
    return League(folder, store, planned.config, planned.bots, planned.specs, lock)


def _reopen(folder: Path, config: LeagueConfig | None, kind: LeagueKind,
            check_bots: CheckBots | None) -> League:
    store = Store.open(folder)
    lock = None
    try:
        lock = lock_folder(folder)
        stored = store.config()
        if not kind.holds(stored):
            raise kind.refuse_other(folder)
        _check_rules(folder, stored)
        planned = kind.plan(kind.reopened(config, stored), store.league_key())
        kind.check_same(folder, planned.config, stored)
        _check_versions(kind, store.bots(), planned.bots)
        league = League(folder, store, planned.config, planned.bots, planned.specs, lock)
        if check_bots is not None and league.missing():
            check_bots(league.config, league.bots)
    except BaseException:
        store.close()
        if lock is not None:
            os.close(lock)
        raise
    return league


def _check_rules(folder: Path, stored: dict) -> None:
    rules, now = stored.get("rules"), registry.get(stored["game"]).rules()
    if rules not in (None, now):   # None: stored before rules versions were
        raise LeagueError(
            f"league {folder} was played under rules {rules}, this Arena plays {now}: finish "
            "it with the Arena it started with, or start a new league")


def _check_versions(kind: LeagueKind, stored: list[BotEntry], bots: list[BotEntry]) -> None:
    versions = {bot.name: bot.version for bot in stored}
    for bot in bots:
        before = versions.get(bot.name)
        if before != bot.version:
            was = "was not in it" if before is None else f"was version {before[:8]}"
            raise LeagueError(
                f"bot {bot.name} ({bot.source}) changed since the {kind.noun} started ({was}, "
                f"now {bot.version[:8]}): restore it, or {kind.new_version}")


def _protections(sandboxed: bool) -> list[tuple[str, str, str]]:
    """What the sandbox enforces for this run, as `arena doctor` says (stored with the league)."""
    if not sandboxed:
        return [("sandbox", "missing", "bots ran unsandboxed (--unsafe-no-sandbox)")]
    from arena.sandbox import doctor
    return [(row.name, row.status, row.detail) for row in doctor.protections()]


def run(league: League, executor: Executor, *, fresh_bots: bool = False,
        on_match: Callable[[Outcome], None] | None = None,
        stop: Callable[[], bool] | None = None) -> int:
    """Plays the league's missing matches until none is left or `stop()` holds (asked before
    the first and after every match); returns how many were played now.

    Each finished match is committed before the next is taken; stopping, or an exception
    (Ctrl-C included), leaves every finished match stored and loses only those in flight.
    """
    if stop is not None and stop():
        return 0
    plan = RunPlan(league.config.game, league.config.players, dict(league.config.options),
                   dict(league.config.time_control), tuple(league.bots),
                   fresh_bots=fresh_bots, sandbox=league.config.sandbox,
                   seat_lanes=league.config.seating == "mirrored",
                   log_dir=str(league.folder.resolve() / "logs"))
    if any(not is_builtin(bot.source) for bot in league.bots):
        league.store.record_protections(_protections(league.config.sandbox))
    played = 0
    finished = executor.run(plan, league.missing())
    try:
        for match in finished:
            try:
                outcome = league.store.add_match(match)
            except sqlite3.OperationalError as error:   # a full disk, a read-only folder
                raise LeagueError(f"cannot store a match of league {league.folder}: {error} "
                                  f"({played} stored now and every one before are kept: "
                                  "make room, then `arena league resume`)") from None
            played += 1
            if on_match is not None:
                on_match(outcome)
            if stop is not None and stop():
                break
    finally:
        finished.close()   # stops the workers if we leave early
    return played
