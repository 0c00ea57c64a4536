"""The service database: one SQLite file in the data folder, the only record of the service.

It holds the ladders, the deal key (secret: it never leaves this file), authors (tokens only
as sha256), bots and their versions (one per submitted content hash and ladder), submissions
with their verdicts, and every finished match (its full arena-record/1, as the league store
keeps them, in the same row: `FinishedMatch.row`) with its pairwise results, which ratings
are refitted from. It is opened, made and written as the league store is (`arena.sqlite`:
marker, draft, WAL): one transaction per finished match, so `kill -9` loses only matches
still being played; readers (the pages) never block the writer (the match thread); another
database is refused. Connections are per thread (the web server answers on a thread pool).
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from arena import sqlite
from arena.clock import TimeControl
from arena.errors import ArenaError

DB_NAME = "service.sqlite"
APP = "arena-serve"
SCHEMA_VERSION = 4
"""1: the first; 2: bots.retired (a bot its author retired); 3: head_to_head (made from the
pairs); 4: matches.node (the Ray node that played it). An older database is brought to 4
when it is opened."""

_HEAD_TO_HEAD = """
CREATE TABLE head_to_head (              -- the pairs' running totals, what pages show
    ladder   TEXT NOT NULL,
    first    INTEGER NOT NULL,           -- version ids, as in pairs
    second   INTEGER NOT NULL,
    games    INTEGER NOT NULL,
    points   REAL NOT NULL,              -- of first against second
    PRIMARY KEY (ladder, first, second)
)"""

_SCHEMA = """
CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ladders (
    id           TEXT PRIMARY KEY,      -- "mandala-2p"
    game         TEXT NOT NULL,
    players      INTEGER NOT NULL,
    rules        TEXT NOT NULL,         -- the engine's rules version, e.g. "mandala/1"
    time_control TEXT NOT NULL,         -- JSON
    tables       INTEGER NOT NULL DEFAULT 0,   -- tables scheduled so far: numbers deals
    standings    TEXT,                  -- JSON of the latest fit (the API's ladder), if any
    created      REAL NOT NULL
);
CREATE TABLE authors (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,    -- sha256 of the token, hex
    created    REAL NOT NULL
);
CREATE TABLE bots (
    id        INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    name      TEXT NOT NULL,
    retired   REAL,                     -- when its author retired it: no more matches
    UNIQUE (author_id, name)
);
CREATE TABLE versions (
    id        INTEGER PRIMARY KEY,
    bot_id    INTEGER NOT NULL REFERENCES bots(id),
    ladder    TEXT NOT NULL REFERENCES ladders(id),
    version   TEXT NOT NULL,            -- content hash of the unpacked folder
    folder    TEXT NOT NULL,
    status    TEXT NOT NULL,            -- checking, admitted, rejected, retired
    submitted REAL NOT NULL,
    UNIQUE (bot_id, ladder, version)
);
CREATE TABLE submissions (
    id         INTEGER PRIMARY KEY,
    author_id  INTEGER NOT NULL REFERENCES authors(id),
    ladder     TEXT NOT NULL,
    bot_name   TEXT,
    version_id INTEGER REFERENCES versions(id),
    status     TEXT NOT NULL,           -- checking, admitted, rejected
    reason     TEXT NOT NULL DEFAULT '',
    log        TEXT NOT NULL DEFAULT '',   -- excerpt of the check's bot log: author only
    created    REAL NOT NULL,
    decided    REAL
);
CREATE INDEX submissions_by_author ON submissions (author_id, created);
CREATE TABLE matches (
    id             TEXT PRIMARY KEY,    -- "mandala-2p/t17/1": ladder, table, seating
    ladder         TEXT NOT NULL,
    table_no       INTEGER NOT NULL,    -- one deal per table: the ratings' cluster
    seed           INTEGER NOT NULL,
    versions       TEXT NOT NULL,       -- JSON list of version ids per seat
    labels         TEXT NOT NULL,       -- JSON list of "author/name@version8" per seat
    scores         TEXT NOT NULL,
    ranks          TEXT NOT NULL,
    end_kind       TEXT NOT NULL,
    forfeit_seat   INTEGER,
    forfeit_reason TEXT,
    record         TEXT NOT NULL,       -- the full arena-record/1 JSON
    started        REAL NOT NULL,
    seconds        REAL NOT NULL,
    stored         REAL NOT NULL,
    node           TEXT                 -- the Ray node that played it (NULL: this machine)
);
CREATE INDEX matches_by_ladder ON matches (ladder, stored);
CREATE TABLE match_seats (
    match_id   TEXT NOT NULL REFERENCES matches(id),
    version_id INTEGER NOT NULL,
    seat       INTEGER NOT NULL,
    forfeit    TEXT                      -- this seat's forfeit reason, if it forfeited
);
CREATE INDEX match_seats_by_version ON match_seats (version_id);
CREATE TABLE pairs (                     -- pairwise results, what ratings are fitted from
    ladder   TEXT NOT NULL,
    table_no INTEGER NOT NULL,
    first    INTEGER NOT NULL,           -- version ids
    second   INTEGER NOT NULL,
    score    REAL NOT NULL               -- of first against second: 1, 0.5 or 0
);
CREATE INDEX pairs_by_ladder ON pairs (ladder);
CREATE TABLE standings (                 -- the latest fit, one row per rated version
    version_id INTEGER PRIMARY KEY,
    ladder     TEXT NOT NULL,
    elo        REAL NOT NULL,
    interval   REAL,                     -- NULL when unknown
    games      INTEGER NOT NULL
);
CREATE TABLE rating_history (
    version_id INTEGER NOT NULL,
    games      INTEGER NOT NULL,
    elo        REAL NOT NULL,
    interval   REAL,
    at         REAL NOT NULL
);
CREATE INDEX rating_history_by_version ON rating_history (version_id, games);
""" + _HEAD_TO_HEAD


class ServiceDBError(ArenaError):
    """A data folder whose database cannot be used."""


KIND = sqlite.Kind(APP, SCHEMA_VERSION, tuple(range(1, SCHEMA_VERSION + 1)), _SCHEMA,
                   "arena service database", "give another --data folder", ServiceDBError)


@dataclass(frozen=True)
class Ladder:
    id: str
    game: str
    players: int
    rules: str
    time_control: dict


def time_control_text(record: dict) -> str:
    """`0.5 s per move, start-up 10 s`: a ladder's time control, as pages and refusals say it."""
    control = TimeControl.from_record(record)
    return f"{control.describe()}, start-up {control.startup:g} s"


def _upgrade(conn: sqlite3.Connection) -> None:
    """Brings a database of schema 1 to 3 up to 4 (in one transaction; a 4 is left alone)."""
    if sqlite.marker(conn)[1] == SCHEMA_VERSION:
        return
    with sqlite.transaction(conn):
        found = sqlite.marker(conn)[1]   # again: another start may have upgraded it meanwhile
        if found == 1:
            conn.execute("ALTER TABLE bots ADD COLUMN retired REAL")
        if found in (1, 2):
            conn.execute(_HEAD_TO_HEAD)
            conn.execute("INSERT INTO head_to_head SELECT ladder, first, second, COUNT(*), "
                         "SUM(score) FROM pairs GROUP BY ladder, first, second")
        if found in (1, 2, 3):
            conn.execute("ALTER TABLE matches ADD COLUMN node TEXT")
            conn.execute("UPDATE arena_marker SET schema_version = ?", (SCHEMA_VERSION,))


def ladder_id(game: str, players: int) -> str:
    """The ladder's name in URLs and the database: `mandala-2p`."""
    return f"{game}-{players}p"


@dataclass(frozen=True)
class Version:
    """A bot version on one ladder, with its bot and author."""

    id: int
    bot_id: int
    author: str
    name: str
    ladder: str
    version: str
    folder: str
    status: str
    submitted: float

    @property
    def label(self) -> str:
        """How ratings and tables name it: `author/name@` and 8 hex of its content hash."""
        return f"{self.author}/{self.name}@{self.version[:8]}"

    @property
    def log_name(self) -> str:
        return log_name(self.author, self.name, self.version)


def log_name(author: str, bot: str, version: str) -> str:
    """The log of an author's bot version, under the data folder's `logs/`: one per author
    (and its cap too), since two authors may submit byte-identical bots, which would share a
    log named after the manifest and content hash alone. Names are checked: no path in them."""
    return f"{author}/{bot}-{version}.log"


_VERSION_COLUMNS = ("v.id, v.bot_id, a.name, b.name, v.ladder, v.version, v.folder, v.status, "
                    "v.submitted FROM versions v JOIN bots b ON b.id = v.bot_id "
                    "JOIN authors a ON a.id = b.author_id")


class ServiceDB:
    """The database of one data folder; `connection()` gives this thread's connection."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.path = folder / DB_NAME
        self._local = threading.local()

    @classmethod
    def open(cls, folder: str | Path) -> "ServiceDB":
        """The data folder's database, created (with its folder) when the folder is new."""
        folder = Path(folder)
        try:   # a new folder is ours alone: tokens' hashes, the deal key, logs
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise ServiceDBError(f"cannot use the data folder {folder}: "
                                 f"{error.strerror}") from None
        db = cls(folder)
        if not db.path.exists():
            sqlite.create(db.path, KIND)   # False: made meanwhile, by another start
        _upgrade(db.connection())   # checks that it is ours first
        return db

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = sqlite.open(self.path, KIND)
        return conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.connection().execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        return self.connection().execute(sql, params).fetchone()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """`with db.transaction() as conn:` this thread's connection in a write transaction."""
        return sqlite.transaction(self.connection())

    # -- secrets and ladders ---------------------------------------------------------------
    def secret(self, name: str, make: Any) -> str:
        """The secret `name`, made by `make()` and stored the first time it is asked for."""
        with self.transaction() as conn:
            row = conn.execute("SELECT value FROM secrets WHERE name = ?", (name,)).fetchone()
            if row is not None:
                return row[0]
            value = make()
            conn.execute("INSERT INTO secrets VALUES (?, ?)", (name, value))
            return value

    def ensure_ladder(self, game: str, players: int, rules: str,
                      time_control: dict | None) -> Ladder:
        """The ladder of `game` for `players`, made if new (with `time_control`, else the
        default one). A ladder's time control is fixed when it is made: its ratings were
        earned under it, so asking an existing ladder for another one is refused (None: the
        stored one)."""
        lid = ladder_id(game, players)
        with self.transaction() as conn:
            row = conn.execute("SELECT rules, time_control FROM ladders WHERE id = ?",
                               (lid,)).fetchone()
            if row is None:
                time_control = time_control or TimeControl().to_record()
                conn.execute("INSERT INTO ladders (id, game, players, rules, time_control, "
                             "created) VALUES (?, ?, ?, ?, ?, ?)",
                             (lid, game, players, rules, json.dumps(time_control), time.time()))
                return Ladder(lid, game, players, rules, time_control)
        stored_rules, stored = row[0], json.loads(row[1])
        if stored_rules != rules:
            raise ServiceDBError(
                f"ladder {lid} was played under rules {stored_rules}, this Arena plays {rules}: "
                "serve it with the Arena it started with, or use another --data folder")
        if time_control is not None and time_control != stored:
            raise ServiceDBError(
                f"ladder {lid} plays {time_control_text(stored)} (fixed when it was made), not "
                f"{time_control_text(time_control)}: start without --move-time, --tc and "
                "--startup-time to serve it as it is, or give another --data folder for a new "
                "ladder")
        return Ladder(lid, game, players, rules, stored)

    def ladders(self) -> list[Ladder]:
        return [Ladder(lid, game, players, rules, json.loads(tc)) for lid, game, players, rules, tc
                in self.query("SELECT id, game, players, rules, time_control FROM ladders "
                              "ORDER BY id")]

    def ladder(self, lid: str) -> Ladder | None:
        return next((ladder for ladder in self.ladders() if ladder.id == lid), None)

    def take_tables(self, lid: str, count: int) -> int:
        """Reserves `count` new table numbers on a ladder; returns the first. Numbers are never
        reused (a restart skips those in flight when it died), so every table's deal is new."""
        with self.transaction() as conn:
            first = conn.execute("SELECT tables FROM ladders WHERE id = ?", (lid,)).fetchone()[0]
            conn.execute("UPDATE ladders SET tables = ? WHERE id = ?", (first + count, lid))
        return first

    # -- versions ----------------------------------------------------------------------------
    def versions(self, where: str = "1", params: Sequence[Any] = ()) -> list[Version]:
        return [Version(*row) for row in
                self.query(f"SELECT {_VERSION_COLUMNS} WHERE {where} ORDER BY v.id", params)]

    def version(self, version_id: int) -> Version | None:
        found = self.versions("v.id = ?", (version_id,))
        return found[0] if found else None

    def admitted(self, lid: str) -> list[Version]:
        return self.versions("v.ladder = ? AND v.status = 'admitted'", (lid,))

    # -- matches ---------------------------------------------------------------------------
    def add_match(self, row: dict, seats: Sequence[tuple[int, int, str | None]],
                  pairs: Sequence[tuple[int, int, float]]) -> None:
        """Stores one finished match, its seats and pairwise results, in one transaction."""
        with self.transaction() as conn:
            sqlite.insert(conn, "matches", row)
            conn.executemany("INSERT INTO match_seats VALUES (?, ?, ?, ?)",
                             [(row["id"], version, seat, forfeit)
                              for version, seat, forfeit in seats])
            conn.executemany("INSERT INTO pairs VALUES (?, ?, ?, ?, ?)",
                             [(row["ladder"], row["table_no"], first, second, score)
                              for first, second, score in pairs])
            # Kept as the pairs land: a page reads a few rows, not every pairwise result.
            conn.executemany("INSERT INTO head_to_head VALUES (?, ?, ?, 1, ?) ON CONFLICT "
                             "DO UPDATE SET games = games + 1, points = points + "
                             "excluded.points", [(row["ladder"], first, second, score)
                                                 for first, second, score in pairs])

    def pair_rows(self, lid: str) -> Iterator[tuple[int, int, int, float]]:
        """(table, first, second, score) of every pairwise result of a ladder, streamed."""
        return self.connection().execute(
            "SELECT table_no, first, second, score FROM pairs WHERE ladder = ?", (lid,))

    def match_count(self, lid: str | None = None) -> int:
        if lid is None:
            return self.one("SELECT COUNT(*) FROM matches")[0]
        return self.one("SELECT COUNT(*) FROM matches WHERE ladder = ?", (lid,))[0]

