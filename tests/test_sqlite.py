"""Arena's SQLite layer, as both the league store and the service database use it: a file that
is not ours is refused in one line and left as it was, a database appears under its name only
complete (a killed creation leaves none), and writers run in WAL mode, so readers read while
a write is under way."""
from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena import sqlite
from arena.league import store
from arena.serve import db

ROOT = Path(__file__).resolve().parent.parent

KINDS = [pytest.param(store.KIND, id="league"), pytest.param(db.KIND, id="service")]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def another_applications_database(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER, amount REAL)")
    conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.commit()
    conn.close()


def notes(path: Path) -> None:
    path.write_bytes(b"my notes, not a database\n" * 100)


def a_zeroed_database(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\0" + bytes(100))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("make", [notes, a_zeroed_database, another_applications_database])
@pytest.mark.parametrize("read_only", [False, True], ids=["writer", "reader"])
def test_a_file_that_is_not_ours_is_refused_in_one_line_and_left_alone(tmp_path, kind, make,
                                                                     read_only):
    path = tmp_path / "data.sqlite"
    make(path)
    before = digest(path)
    with pytest.raises(kind.error) as refused:
        sqlite.open(path, kind, read_only=read_only)
    assert str(refused.value) == f"{path} is not an {kind.name}: {kind.hint}"
    assert digest(path) == before   # not even switched to WAL
    assert sorted(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("kind", KINDS)
def test_a_database_of_the_other_kind_or_of_an_unknown_schema_is_refused(tmp_path, kind):
    other = db.KIND if kind is store.KIND else store.KIND
    assert sqlite.create(tmp_path / "other.sqlite", other)
    with pytest.raises(kind.error, match=f"is not an {kind.name}"):
        sqlite.open(tmp_path / "other.sqlite", kind)
    assert sqlite.create(tmp_path / "newer.sqlite", kind)
    with sqlite.transaction(sqlite.open(tmp_path / "newer.sqlite", kind)) as conn:
        conn.execute("UPDATE arena_marker SET schema_version = 99")
    with pytest.raises(kind.error, match=f"is an {kind.name} of schema 99, this arena reads "
                                         "schemas .*: use the matching arena version"):
        sqlite.open(tmp_path / "newer.sqlite", kind)


def test_a_new_database_is_never_visible_under_its_name_before_it_is_complete(tmp_path):
    path = tmp_path / "league.sqlite"
    seen = []

    def fill(conn):
        conn.execute("INSERT INTO league VALUES (1, 'x', '{}', 0, 0)")
        seen.append((path.exists(), path.with_name("league.sqlite.draft").exists()))

    assert sqlite.create(path, store.KIND, fill)
    assert seen == [(False, True)]   # filled under the draft's name only
    assert sorted(tmp_path.iterdir()) == [path]
    conn = sqlite.open(path, store.KIND, read_only=True)
    assert sqlite.marker(conn) == ("arena-league", store.SCHEMA_VERSION)
    assert conn.execute("SELECT name FROM league").fetchall() == [("x",)]


def test_a_failed_fill_leaves_no_database(tmp_path):
    path = tmp_path / "league.sqlite"

    def fill(conn):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sqlite.create(path, store.KIND, fill)
    assert list(tmp_path.iterdir()) == []


KILLED_WHILE_CREATING = """
import os, signal, sys
from pathlib import Path
from arena import sqlite
from arena.serve import db

def fill(conn):   # enough rows that SQLite writes its journal before the commit
    conn.executemany("INSERT INTO secrets VALUES (?, ?)",
                     [(str(i), "x" * 1000) for i in range(5000)])
    os.kill(os.getpid(), signal.SIGKILL)

sqlite.create(Path(sys.argv[1]), db.KIND, fill)
"""


def test_a_creation_killed_midway_leaves_no_database_and_the_next_one_succeeds(tmp_path):
    path = tmp_path / "service.sqlite"
    done = subprocess.run([sys.executable, "-c", KILLED_WHILE_CREATING, str(path)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert sorted(found.name for found in tmp_path.iterdir()) == [
        "service.sqlite.draft", "service.sqlite.draft-journal"]   # never the final name
    assert sqlite.create(path, db.KIND)
    assert sorted(tmp_path.iterdir()) == [path]   # the killed draft and its journal are gone
    assert sqlite.open(path, db.KIND).execute("SELECT * FROM secrets").fetchall() == []


def test_a_file_appearing_meanwhile_is_left_alone(tmp_path):
    path = tmp_path / "service.sqlite"

    def fill(conn):
        notes(path)   # another process got there first

    before = b"my notes, not a database\n" * 100
    assert sqlite.create(path, db.KIND, fill) is False
    assert path.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == [path]


def test_writers_run_in_wal_mode_and_readers_read_while_a_write_is_under_way(tmp_path):
    path = tmp_path / "service.sqlite"
    assert sqlite.create(path, db.KIND)
    writer = sqlite.open(path, db.KIND)
    assert writer.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert writer.execute("PRAGMA synchronous").fetchone() == (1,)   # NORMAL
    with sqlite.transaction(writer):
        writer.execute("INSERT INTO secrets VALUES ('a', '1')")
    writer.execute("BEGIN IMMEDIATE")   # a write under way, not yet committed
    writer.execute("DELETE FROM secrets")
    reader = sqlite.open(path, db.KIND, read_only=True)
    assert reader.execute("SELECT name FROM secrets").fetchall() == [("a",)]
    writer.execute("ROLLBACK")


def test_a_transaction_interrupted_is_rolled_back(tmp_path):
    path = tmp_path / "service.sqlite"
    assert sqlite.create(path, db.KIND)
    conn = sqlite.open(path, db.KIND)
    with pytest.raises(KeyboardInterrupt):
        with sqlite.transaction(conn):
            conn.execute("INSERT INTO secrets VALUES ('a', '1')")
            raise KeyboardInterrupt
    assert not conn.in_transaction
    assert conn.execute("SELECT * FROM secrets").fetchall() == []
