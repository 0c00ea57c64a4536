"""Arena's SQLite databases (the league store, the service database), opened, made and written
one way.

- A new database is built complete under a draft name beside its final one (its tables, its
  marker and its first rows in one transaction), then linked into place: a reader, or a
  process killed while creating it, never finds a database without its marker there.
- A marker table names the application and the schema version. A file that is not ours (not
  a database, another application's database) or of a schema this code does not read is
  refused with one line, and never changed: it is checked before anything is written.
- Writers run in WAL mode with synchronous=NORMAL: a commit survives the process being
  killed (it is in the WAL file) without an fsync per commit, and readers never block the
  writer or each other.
- `transaction` is BEGIN IMMEDIATE ... COMMIT, rolled back on any exception, Ctrl-C included;
  `insert` writes one row given as a dict.
"""
from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from arena.errors import ArenaError

BUSY_SECONDS = 30
"""How long a connection waits for another's write lock before it fails."""
_MARKER_TABLE = "CREATE TABLE arena_marker (app TEXT NOT NULL, schema_version INTEGER NOT NULL)"


@dataclass(frozen=True)
class Kind:
    """One kind of arena database: what its marker says, the tables of a new one, and the
    words its refusals use."""

    app: str                    # the marker's application, e.g. "arena-league"
    version: int                # the schema version this code creates
    readable: tuple[int, ...]   # the schema versions this code opens
    tables: str                 # SQL statements making a new database's tables
    name: str                   # in messages: "arena league database"
    hint: str                   # what to do with a file that is not one: "give another ..."
    error: type[ArenaError]     # what refusals raise


def connect(path: Path, kind: Kind, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection to `path`, unchecked and unchanged; a writer's is in autocommit mode (its
    transactions are explicit). Only a regular file (or none, for a writer to create) is
    opened: SQLite would block for ever opening a FIFO, and read a device."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise kind.error(f"cannot open the {kind.name} {path}: {error.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise kind.error(f"{path} is not a file, so not an {kind.name}: {kind.hint}")
    try:
        if read_only:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_SECONDS)
        else:
            conn = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_SECONDS * 1000}")
    except sqlite3.Error as error:
        raise kind.error(f"cannot open the {kind.name} {path}: {error}") from None
    return conn


def marker(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """(application, schema version) as the database's marker names them; None when it has
    none (another application's database, or a file that is not a database at all)."""
    try:
        rows = conn.execute("SELECT app, schema_version FROM arena_marker").fetchall()
    except sqlite3.DatabaseError:
        return None
    return rows[0] if len(rows) == 1 else None


def open(path: Path, kind: Kind, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection to a database of `kind` (checked by its marker, else refused and closed);
    a writer's in WAL mode with synchronous=NORMAL."""
    conn = connect(path, kind, read_only=read_only)
    found = marker(conn)
    if found is None or found[0] != kind.app:
        conn.close()
        raise kind.error(f"{path} is not an {kind.name}: {kind.hint}")
    if found[1] not in kind.readable:
        conn.close()
        raise kind.error(f"{path} is an {kind.name} of schema {found[1]}, this arena reads "
                         f"schemas {', '.join(map(str, kind.readable))}: use the matching "
                         "arena version")
    if not read_only:
        conn.execute("PRAGMA journal_mode = WAL")   # kept in the file; set again: cheap
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def create(path: Path, kind: Kind,
           fill: Callable[[sqlite3.Connection], None] = lambda conn: None) -> bool:
    """Makes a new database of `kind` at `path`: its tables, its marker and what `fill` writes,
    in one transaction on a draft, linked into place complete. False, leaving it alone, when
    a file appeared at `path` meanwhile; `fill`'s exceptions leave no database."""
    draft = path.with_name(path.name + ".draft")
    try:
        _remove(draft)   # left by a creation that was killed
        conn = connect(draft, kind)
        try:
            with transaction(conn):
                for statement in (_MARKER_TABLE, *kind.tables.split(";")):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT INTO arena_marker (app, schema_version) VALUES (?, ?)",
                             (kind.app, kind.version))
                fill(conn)
            conn.execute("PRAGMA journal_mode = WAL")   # a database setting, kept in the file
        finally:
            conn.close()
        os.link(draft, path)   # unlike rename, never replaces a file made meanwhile
    except FileExistsError:
        return False
    except (sqlite3.Error, OSError) as error:
        raise kind.error(f"cannot create the {kind.name} {path}: {error}") from None
    finally:
        _remove(draft)
    return True


def _remove(draft: Path) -> None:
    """A draft and its journals: a killed creation's journal must never be replayed into
    the next draft."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        draft.with_name(draft.name + suffix).unlink(missing_ok=True)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`with transaction(conn):` BEGIN IMMEDIATE (the write lock at once, so two writers
    queue rather than fail midway) ... COMMIT, or ROLLBACK on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:   # Ctrl-C mid-transaction too: this handle must not see the rows
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def insert(conn: sqlite3.Connection, table: str, row: Mapping[str, Any]) -> None:
    """INSERT one row into `table`, its columns named by `row`'s keys (the code's own names,
    never input: only the values are parameters)."""
    conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                 tuple(row.values()))
