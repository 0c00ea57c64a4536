"""The league store: one SQLite database per league folder, the single source of results.

It holds the league's config, its secret key (arena.keys: deals and bots' seeds derive from
it; only the arena reads it), its bots (name, content-hash version, folder), and every
finished match with its full arena-record/1, timings and outcome. Each finished match is
written in one transaction by one writer (the league's parent process), so a `kill -9`
loses at most the matches still being played. The database runs in WAL mode, so readers
(`read_league`, `arena ladder`) can read a league while it runs.

It is opened, made and written as every arena database is (`arena.sqlite`): a marker names
the application and the schema version, so a database that is not a league store, or of a
schema this code does not know, is refused, never changed; a new one appears complete.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from arena import sqlite
from arena.stats.botstats import MatchFacts
from arena.keys import LeagueKey
from arena.stats.outcome import Outcome
from arena.league import rows as checked
from arena.league.rows import StoreError, damaged  # noqa: F401 (StoreError: also from here)
from arena.league.schedule import MatchSpec

DB_NAME = "league.sqlite"
APP = "arena-league"
SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)
"""Schema 1 (before league keys) is still read by ladders; only schema 2 can be resumed."""

_SCHEMA = """
CREATE TABLE league (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    name     TEXT NOT NULL,
    config   TEXT NOT NULL,     -- JSON: everything needed to regenerate the schedule
    planned  INTEGER NOT NULL,  -- matches in the schedule
    created  REAL NOT NULL      -- unix time
);
CREATE TABLE bots (
    name     TEXT PRIMARY KEY,
    version  TEXT NOT NULL,     -- content hash of the bot's folder
    source   TEXT NOT NULL,     -- absolute folder (or "builtin:NAME")
    games    TEXT NOT NULL      -- JSON list of game ids the bot plays
);
CREATE TABLE matches (
    id             TEXT PRIMARY KEY,   -- MatchSpec.id: deal and seating
    ord            INTEGER NOT NULL,   -- position in the schedule
    deal           TEXT NOT NULL,
    seed           INTEGER NOT NULL,
    bots           TEXT NOT NULL,      -- JSON list of "name@version8" per seat
    scores         TEXT NOT NULL,      -- JSON list per seat
    ranks          TEXT NOT NULL,      -- JSON list per seat
    end_kind       TEXT NOT NULL,      -- "normal" or "forfeit"
    forfeit_seat   INTEGER,
    forfeit_reason TEXT,
    record         TEXT NOT NULL,      -- the full arena-record/1 JSON
    started        REAL NOT NULL,      -- unix time the match started
    seconds        REAL NOT NULL,      -- wall time the match took
    worker         INTEGER NOT NULL,
    stored         REAL NOT NULL       -- unix time of the commit
);
CREATE INDEX matches_by_order ON matches (ord);
CREATE TABLE secrets (
    name     TEXT PRIMARY KEY,  -- "league_key"
    value    TEXT NOT NULL      -- hex, never sent to a bot
);
"""
# Added after schema 1 shipped: made when first written, absent from older databases.
_PROTECTIONS_TABLE = """
CREATE TABLE IF NOT EXISTS protections (
    checked  REAL NOT NULL,     -- unix time of the run (start or resume) that checked them
    name     TEXT NOT NULL,     -- as `arena doctor` names it, e.g. "cgroup memory"
    status   TEXT NOT NULL,     -- "enforced" or "missing"
    detail   TEXT NOT NULL
)
"""


KIND = sqlite.Kind(APP, SCHEMA_VERSION, READABLE_SCHEMAS, _SCHEMA, "arena league database",
                   "leave it alone or choose another league folder", StoreError)

@dataclass(frozen=True)
class BotEntry:
    """A bot of the league as stored: its league name, folder content hash and source."""

    name: str
    version: str
    source: str
    games: tuple[str, ...]

    @property
    def label(self) -> str:
        """How ratings and tables name the bot: `name@` and the first 8 hex of its version."""
        return f"{self.name}@{self.version[:8]}"


@dataclass(frozen=True)
class FinishedMatch:
    """What a worker hands back for one match spec: the record and how long it took."""

    spec: MatchSpec
    record: dict
    started: float
    seconds: float
    worker: int
    node: str = ""
    """The Ray node that played it (its node id), when the executor is Ray."""
    logs: Mapping[str, bytes] = field(default_factory=dict)
    """Bot log lines a node gained while playing it, by log name (arena.league.nodelogs):
    for the server to append to its own logs; empty where bots log to the server's folder."""

    def row(self, **columns: Any) -> dict[str, Any]:
        """The match as a row of a `matches` table (the league store's, the service's): the
        columns both keep, and `columns`, those of that database alone."""
        result = self.record["result"]
        forfeit = result.get("forfeit") or {}
        return {"id": self.spec.id, "seed": self.spec.seed,
                "scores": json.dumps(result["scores"]), "ranks": json.dumps(result["ranks"]),
                "end_kind": result["end"], "forfeit_seat": forfeit.get("seat"),
                "forfeit_reason": forfeit.get("reason"),
                "record": json.dumps(self.record, separators=(",", ":")),
                "started": self.started, "seconds": self.seconds, "stored": time.time(),
                **columns}

    def outcome(self, labels: Sequence[str]) -> Outcome:
        """The match as ratings see it, its seats named by `labels`."""
        result = self.record["result"]
        return Outcome(match_id=self.spec.id, order=self.spec.order, bots=tuple(labels),
                       ranks=tuple(result["ranks"]),
                       scores=tuple(float(score) for score in result["scores"]),
                       deal=self.spec.deal,
                       forfeit_seat=(result.get("forfeit") or {}).get("seat"))


def database_path(where: str | os.PathLike) -> Path:
    """The database of a league folder (or the file itself when given a file)."""
    path = Path(where)
    return path / DB_NAME if path.is_dir() or not path.suffix else path


class Store:
    """The read-write handle on one league's database. Use from a single writer process."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path
        self._bots: dict[str, BotEntry] | None = None

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def create(cls, folder: str | os.PathLike, *, name: str, config: dict, planned: int,
               bots: Iterable[BotEntry], key: LeagueKey) -> "Store":
        """A new league database in `folder`; refuses a folder that already holds a league."""
        folder = Path(folder)
        path = folder / DB_NAME
        cls.check_free(folder)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"cannot create the league folder {folder}: "
                             f"{error.strerror}") from None

        def fill(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO league (id, name, config, planned, created) "
                         "VALUES (1, ?, ?, ?, ?)",
                         (name, json.dumps(config, sort_keys=True), planned, time.time()))
            conn.executemany("INSERT INTO bots (name, version, source, games) "
                             "VALUES (?, ?, ?, ?)",
                             [(bot.name, bot.version, bot.source, json.dumps(list(bot.games)))
                              for bot in bots])
            conn.execute("INSERT INTO secrets VALUES ('league_key', ?)", (key.hex(),))

        if not sqlite.create(path, KIND, fill):
            cls.check_free(folder)   # made meanwhile: says by which league
        return cls.open(folder)

    @classmethod
    def check_free(cls, folder: str | os.PathLike) -> None:
        """Refuses a folder that already holds a league (or a database that is not ours)."""
        path = Path(folder) / DB_NAME
        if path.exists():
            with cls(sqlite.open(path, KIND, read_only=True), path) as existing:
                done, total = existing.progress()
                other = existing.league_name()
            raise StoreError(
                f"{folder} already holds league {other!r} ({done} of {total} "
                f"matches done): resume it with `arena league resume {folder}` or choose "
                "another --name")

    @classmethod
    def open(cls, folder: str | os.PathLike) -> "Store":
        """The league database of an existing league folder (or database file), for writing."""
        path = database_path(folder)
        if not path.exists():   # a FIFO or a device: sqlite.open says what it is
            raise StoreError(f"{folder} holds no league ({DB_NAME} not found): give a folder "
                             "made by `arena league run`")
        conn = sqlite.open(path, KIND)
        schema = sqlite.marker(conn)[1]
        if schema != SCHEMA_VERSION:
            conn.close()
            raise StoreError(f"{path} is a league from before secret league keys (schema "
                             f"{schema}): its ladder can be read, but it cannot be resumed; "
                             "start a new league")
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- league ----------------------------------------------------------------------------
    def _rows(self, sql: str) -> list[tuple]:
        """The rows of a query of this league's database; StoreError (one line) when SQLite
        cannot answer it (a table dropped, a damaged file)."""
        try:
            return self.conn.execute(sql).fetchall()
        except sqlite3.Error as error:
            raise checked.read_failed(self.path, error) from None

    def _league_row(self, column: str) -> Any:
        rows = self._rows(f"SELECT {column} FROM league")
        if not rows:
            raise damaged(self.path, "it has no league row (name, config and plan)")
        return rows[0][0]

    def league_name(self) -> str:
        name = self._league_row("name")
        if not isinstance(name, str):
            raise damaged(self.path, f"the league's name {name!r} is not text")
        return name

    def config(self) -> dict:
        return checked.config(self.path, self._league_row("config"))

    def league_key(self) -> LeagueKey:
        """The league's secret key: deals and bots' seeds derive from it."""
        rows = self._rows("SELECT value FROM secrets WHERE name = 'league_key'")
        if not rows:
            raise damaged(self.path, "its secret league key is missing")
        try:
            return LeagueKey.from_hex(rows[0][0])
        except (TypeError, ValueError):
            raise damaged(self.path, "its secret league key is not 64 hex digits") from None

    def bots(self) -> list[BotEntry]:
        entries = []
        for name, version, source, games in self._rows(
                "SELECT name, version, source, games FROM bots ORDER BY name"):
            if not all(isinstance(text, str) for text in (name, version, source)):
                raise damaged(self.path, f"bot {name!r}'s name, version or folder is not text")
            listed = checked.decode(self.path, f"bot {name!r}'s games", games)
            if not isinstance(listed, list) or not all(isinstance(game, str) for game in listed):
                raise damaged(self.path, f"bot {name!r}'s games are not a list of game ids")
            entries.append(BotEntry(name, version, source, tuple(listed)))
        return entries

    def progress(self) -> tuple[int, int]:
        """(matches stored, matches planned)."""
        done = self._rows("SELECT COUNT(*) FROM matches")[0][0]
        planned = self._league_row("planned")
        if not checked.is_int(planned):
            raise damaged(self.path, f"the league's planned {planned!r} is not a whole number")
        return done, planned

    def finished_ids(self) -> set[str]:
        return {checked.check_id(self.path, row[0]) for row in self._rows("SELECT id FROM matches")}

    # -- matches ---------------------------------------------------------------------------
    def add_match(self, finished: FinishedMatch) -> Outcome:
        """Stores one finished match in one transaction and returns its outcome; a match
        already stored is an error."""
        spec = finished.spec
        labels = [self.bots_by_name()[name].label for name in spec.seats]
        row = finished.row(ord=spec.order, deal=spec.deal, bots=json.dumps(labels),
                           worker=finished.worker)
        try:
            with sqlite.transaction(self.conn):
                sqlite.insert(self.conn, "matches", row)
        except sqlite3.IntegrityError:
            raise StoreError(f"match {spec.id} is already stored in {self.path}: two runs of "
                             "one league at once?") from None
        return finished.outcome(labels)

    def bots_by_name(self) -> dict[str, BotEntry]:
        if self._bots is None:
            self._bots = {bot.name: bot for bot in self.bots()}
        return self._bots

    def record_protections(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Stores what the sandbox enforced for this run: (name, status, detail) rows of
        `arena doctor`, kept beside those of earlier runs."""
        now = time.time()
        with sqlite.transaction(self.conn):
            self.conn.execute(_PROTECTIONS_TABLE)
            self.conn.executemany("INSERT INTO protections VALUES (?, ?, ?, ?)",
                                  [(now, *row) for row in rows])

    def records(self) -> list[dict]:
        """Every stored match record, in schedule order."""
        return [checked.record(self.path, match_id, record) for match_id, record in
                self._rows("SELECT id, record FROM matches ORDER BY ord")]


def read_missing_protections(league: str | os.PathLike) -> dict[str, str]:
    """Protection name -> why it was missing, for each protection some run of the league
    went without (the latest reason); {} when none was, or none was recorded."""
    path = database_path(league)
    conn = sqlite.connect(path, KIND, read_only=True)
    try:
        rows = conn.execute("SELECT name, detail FROM protections WHERE status = 'missing' "
                            "ORDER BY checked").fetchall()
    except sqlite3.OperationalError:
        return {}   # a league from before protections were recorded
    except sqlite3.Error as error:
        raise checked.read_failed(path, error) from None
    finally:
        conn.close()
    if not all(isinstance(name, str) and isinstance(detail, str) for name, detail in rows):
        raise damaged(path, "a stored protection's name or detail is not text")
    return dict(rows)


@contextmanager
def _reading(league: str | os.PathLike) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a league's database (checked to be ours) in one read
    transaction: one moment's snapshot, safe on a running league (WAL)."""
    path = database_path(league)
    if not path.exists():
        raise StoreError(f"{league} holds no league ({DB_NAME} not found): give a folder made "
                         "by `arena league run`")
    conn = sqlite.open(path, KIND, read_only=True)
    try:
        with conn:
            conn.execute("BEGIN")
            yield conn
    except sqlite3.Error as error:
        raise checked.read_failed(path, error) from None
    finally:
        conn.close()


def read_league(league: str | os.PathLike) -> tuple[dict, list[Outcome]]:
    """A league's config and every stored match as ratings Outcomes in schedule order, read
    in one snapshot through a read-only connection (it never changes the database)."""
    path = database_path(league)
    with _reading(league) as conn:
        found = conn.execute("SELECT config FROM league").fetchone()
        rows = conn.execute(f"SELECT {', '.join(OUTCOME_COLUMNS)} FROM matches "
                            "ORDER BY ord").fetchall()
    if found is None:
        raise damaged(path, "it has no league row (name, config and plan)")
    return checked.config(path, found[0]), [_outcome(path, **dict(zip(OUTCOME_COLUMNS, row)))
                                     for row in rows]


def read_records(league: str | os.PathLike) -> Iterator[tuple[str, dict]]:
    """(match id, record) of every stored match, in schedule order, one at a time."""
    path = database_path(league)
    with _reading(league) as conn:
        for match_id, record in conn.execute("SELECT id, record FROM matches ORDER BY ord"):
            yield checked.check_id(path, match_id), checked.record(path, match_id, record)


def export_lines(league: str | os.PathLike) -> Iterator[str]:
    """A league's records as JSON Lines (`arena league export`): one arena-record/1 per line,
    in schedule order, each with its league match id as key `match` (for `arena replay
    --match`)."""
    for match_id, record in read_records(league):
        yield json.dumps({**record, "match": match_id}, separators=(",", ":"))


def write_export(league: str | os.PathLike, output: Path) -> int:
    """Writes `export_lines(league)` to `output` and returns how many records: whole under a
    draft name beside it, then renamed into place, so a reader never sees half an export."""
    draft = output.with_name(output.name + ".part")
    try:
        with open(draft, "w") as file:
            count = sum(file.write(line + "\n") > 0 for line in export_lines(league))
        draft.replace(output)
    except OSError as error:
        raise StoreError(f"cannot write {output}: {error.strerror}") from None
    finally:
        draft.unlink(missing_ok=True)   # there only when the export failed: it leaves nothing
    return count


def read_record(league: str | os.PathLike, match_id: str) -> dict:
    """The record of one stored match; StoreError naming a few ids when there is none."""
    with _reading(league) as conn:
        row = conn.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            some = [found for found, in conn.execute(
                "SELECT id FROM matches ORDER BY ord LIMIT 3")]
            raise StoreError(f"league {league} has no match {match_id!r}"
                             + (f" (its first: {', '.join(map(str, some))})" if some
                                else " (no match is stored yet)"))
    return checked.record(database_path(league), match_id, row[0])


@dataclass(frozen=True)
class MatchRow:
    """One stored match as `arena league matches` lists it."""

    match_id: str
    bots: tuple[str, ...]      # "name@version8" per seat
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    end: str                   # "normal" or "forfeit"
    plies: int                 # moves in the record: a forfeit's ply (for `arena debug`)
    forfeit_seat: int | None
    forfeit_reason: str | None
    forfeit_detail: str
    started: float             # unix time the match started (0: not known)

    @property
    def forfeit_text(self) -> str:
        """"timeout at ply 12: detail" for a forfeit (the detail names bot and seat), else ""."""
        if self.end != "forfeit":
            return ""
        detail = f": {self.forfeit_detail}" if self.forfeit_detail else ""
        return f"{self.forfeit_reason} at ply {self.plies}{detail}"


def read_match_rows(league: str | os.PathLike) -> list[MatchRow]:
    """Every stored match in schedule order, without the records' moves (SQLite picks the
    few fields out of each record)."""
    path = database_path(league)
    with _reading(league) as conn:
        rows = conn.execute(
            "SELECT id, bots, scores, ranks, end_kind, json_array_length(record, '$.moves'), "
            "forfeit_seat, forfeit_reason, json_extract(record, '$.result.forfeit.detail'), "
            "started FROM matches ORDER BY ord").fetchall()
    matches = []
    for match_id, bots, scores, ranks, end, plies, seat, reason, detail, started in rows:
        checked.check_id(path, match_id)
        labels, who = checked.labels(path, match_id, bots), f"match {checked.shown(match_id)}"
        if not all(isinstance(text, str) for text in (end, reason or "", detail or "")):
            raise damaged(path, f"{who}'s end, forfeit reason or detail is not text")
        if not checked.is_number(started or 0.0):
            raise damaged(path, f"{who}'s start time is not a number")
        seats = len(labels)
        matches.append(MatchRow(
            match_id, labels, checked.per_seat(path, match_id, "scores", scores, seats, False),
            checked.per_seat(path, match_id, "ranks", ranks, seats, True), end,
            plies if checked.is_int(plies) else 0, checked.seat(path, match_id, seat, seats),
            reason, detail or "", started or 0.0))
    return matches


def read_match_facts(league: str | os.PathLike) -> list[MatchFacts]:
    """What per-bot statistics need of every stored match (`arena.stats.botstats`), in schedule
    order; the records' moves and times are picked out by SQLite, not the whole records."""
    path = database_path(league)
    with _reading(league) as conn:
        rows = conn.execute(
            "SELECT id, bots, scores, ranks, forfeit_seat, forfeit_reason, "
            "json_extract(record, '$.moves'), json_extract(record, '$.times'), seed, started "
            "FROM matches ORDER BY ord").fetchall()
    facts = []
    for match_id, bots, scores, ranks, forfeit_seat, reason, moves, times, seed, started in rows:
        labels, who = checked.labels(path, match_id, bots), f"match {checked.shown(match_id)}"
        moved = checked.decode(path, f"{who}'s record moves", moves or "[]")
        took = checked.decode(path, f"{who}'s record times", times or "[]")
        if not isinstance(moved, list) or not all(
                isinstance(entry, list) and len(entry) == 2 for entry in moved):
            raise damaged(path, f"{who}'s record moves are not a list of [seat, move] pairs")
        if not isinstance(took, list):
            raise damaged(path, f"{who}'s record times are not a list")
        if reason is not None and not isinstance(reason, str):
            raise damaged(path, f"{who}'s forfeit reason is not text")
        if not (started is None or checked.is_number(started)):
            raise damaged(path, f"{who}'s start time is not a number")
        timed = tuple((seat, float(seconds)) for (seat, _), seconds in zip(moved, took)
                      if checked.is_int(seat) and 0 <= seat < len(labels)
                      and checked.is_number(seconds))
        facts.append(MatchFacts(
            labels, checked.per_seat(path, match_id, "scores", scores, len(labels), False),
            checked.per_seat(path, match_id, "ranks", ranks, len(labels), True),
            checked.seat(path, match_id, forfeit_seat, len(labels)), reason, timed, seed, started))
    return facts


def read_outcomes(league: str | os.PathLike) -> list[Outcome]:
    """Every stored match of a league as ratings Outcomes, in schedule order (`read_league`)."""
    return read_league(league)[1]


OUTCOME_COLUMNS = ("id", "ord", "deal", "bots", "scores", "ranks", "forfeit_seat")
"""The columns of `matches` that make a ratings Outcome."""


def _outcome(path: Path, *, id: str, ord: int, deal: str, bots: str, scores: str, ranks: str,
             forfeit_seat: int | None) -> Outcome:
    """An Outcome from the OUTCOME_COLUMNS of a `matches` row, by name; `damaged` (one line)
    when a column is not what the arena stores."""
    checked.check_id(path, id)
    labels = checked.labels(path, id, bots)
    if not isinstance(deal, str):
        raise damaged(path, f"match {checked.shown(id)}'s deal is not text")
    return Outcome(match_id=id, order=checked.check_ord(path, id, ord), bots=labels,
                   ranks=checked.per_seat(path, id, "ranks", ranks, len(labels), True),
                   scores=tuple(float(score) for score in
                                checked.per_seat(path, id, "scores", scores, len(labels), False)),
                   deal=deal, forfeit_seat=checked.seat(path, id, forfeit_seat, len(labels)))
