"""A league database damaged or tampered with (by hand, by SQL): every command that reads it
says in one line what is wrong and what to do, exits non-zero, prints no traceback, and
leaves the database as it found it. Also: one league given twice to `arena ladder` under
two spellings (its folder and its database file) is refused."""
from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cli_refusals import arena_in_process
from cli_refusals import refused_in_one_line as refused

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
MATCH = "d0000:random,greedy"


def arena(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("damaged") / "base"
    done = arena("league", "run", "--game", "flowers", "--bot", "random", "--bot", "greedy",
                 "--deals", 2, "--seed", 4, "--out", folder, "--quiet")
    assert done.returncode == 0, done.stderr
    return folder


def digest(folder: Path) -> str:
    return hashlib.sha256((folder / "league.sqlite").read_bytes()).hexdigest()


def tampered(league: Path, where: Path, sql: str) -> Path:
    folder = where / "league"
    shutil.copytree(league, folder)
    (folder / "league.lock").unlink(missing_ok=True)
    conn = sqlite3.connect(folder / "league.sqlite")
    conn.executescript(sql)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return folder


LADDER = [["ladder"], ["ladder", "--stats"], ["ladder", "--history"], ["ladder", "--matrix"],
          ["ladder", "--format", "html"]]
MATCHES = [["league", "matches"]]
EXPORT = [["league", "export"]]
RESUME = [["league", "resume"]]
RECORD = [["replay", "--match", MATCH]]
READS = LADDER + MATCHES

# (name, SQL, commands that must refuse the league, words the line holds)
CASES = [
    ("bots not json", f"UPDATE matches SET bots = 'not json' WHERE id = '{MATCH}'",
     READS, ["damaged", MATCH, "bots", "restore it from a copy"]),
    ("ranks null", "UPDATE matches SET ranks = 'null'", READS,
     ["damaged", "ranks are not a list of whole numbers"]),
    ("scores text", """UPDATE matches SET scores = '["a","b"]'""", READS,
     ["damaged", "scores are not a list of numbers"]),
    ("scores too few", "UPDATE matches SET scores = '[1]'", READS,
     ["damaged", "1 scores for 2 seats"]),
    ("scores too deep", "UPDATE matches SET scores = '" + "[" * 100000 + "'", READS,
     ["damaged", "scores"]),
    ("scores too long", "UPDATE matches SET scores = '[" + "9" * 5000 + ", 1]'", READS,
     ["damaged", "scores"]),
    ("record cut", "UPDATE matches SET record = '{'", MATCHES + EXPORT + RECORD, ["damaged"]),
    ("record a number", "UPDATE matches SET record = '5'", EXPORT + RECORD,
     ["damaged", "record is not a JSON object"]),
    ("config a list", "UPDATE league SET config = '[]'", LADDER + RESUME,
     ["damaged", "config"]),
    ("config not json", "UPDATE league SET config = 'not json'", LADDER + RESUME,
     ["damaged", "config"]),
    ("no league row", "DELETE FROM league", LADDER + RESUME, ["damaged", "no league row"]),
    ("no league key", "DELETE FROM secrets", RESUME, ["damaged", "league key is missing"]),
    ("league key not hex", "UPDATE secrets SET value = 'xyz'", RESUME,
     ["damaged", "league key"]),
    ("ord not a number", "UPDATE matches SET ord = 'x'", LADDER, ["damaged", "ord"]),
    ("forfeit seat off the table", "UPDATE matches SET forfeit_seat = 7", READS,
     ["damaged", "forfeit_seat"]),
    ("bot games not a list", "UPDATE bots SET games = '5'", RESUME, ["damaged", "games"]),
    ("matches dropped", "DROP TABLE matches", READS + EXPORT + RESUME + RECORD,
     ["no such table: matches"]),
]


# The quick selection checks one damage of each kind of row; the rest run in the full suite.
QUICK = {"bots not json", "record cut", "config not json", "no league key", "matches dropped"}


@pytest.mark.parametrize("name, sql, commands, words", [
    pytest.param(*case, id=case[0], marks=() if case[0] in QUICK else pytest.mark.slow)
    for case in CASES])
def test_a_damaged_league_is_refused_in_one_line_and_left_as_it_was(league, tmp_path, name,
                                                                    sql, commands, words):
    folder = tampered(league, tmp_path, sql)
    before = digest(folder)
    for command in commands:
        head, rest = (command[:2], command[2:]) if command[0] == "league" else (command[:1],
                                                                                 command[1:])
        refused(arena_in_process(*head, folder, *rest), *words)
    assert digest(folder) == before


def test_an_undamaged_league_still_reads(league):
    for command in READS + EXPORT:
        head, rest = (command[:2], command[2:]) if command[0] == "league" else (command[:1],
                                                                                 command[1:])
        done = arena_in_process(*head, league, *rest)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def test_one_league_named_by_folder_and_by_database_is_refused(league):
    # Real processes: the refusal as a user's shell sees it.
    for other in (league / "league.sqlite", league / "." / "league.sqlite", league / "."):
        refused(arena("ladder", league, other), "given twice")
