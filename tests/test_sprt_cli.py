"""`arena sprt` end to end: a real subprocess, real sandboxed bots, the league store."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.league.store import DB_NAME

ROOT = Path(__file__).resolve().parent.parent
GREEDY, RANDOM = ROOT / "sample_bots" / "greedy", ROOT / "sample_bots" / "random"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]

pytestmark = pytest.mark.sandbox


def arena(cwd: Path, *args, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env=env)


def stored_ids(folder: Path) -> list[str]:
    with sqlite3.connect(folder / DB_NAME) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM matches ORDER BY ord")]


@pytest.mark.slow
def test_greedy_against_random_accepts_h1_and_a_second_run_only_reports(tmp_path):
    args = [GREEDY, RANDOM, "--game", "mandala", "--elo1", "50", "--max-pairs", "60",
            "--seed", "3", "--move-time", "2", "--workers", "2", "--name", "ab"]
    done = arena(tmp_path, "sprt", *args)
    assert done.returncode == 0, done.stderr
    assert "H1 accepted: new-greedy" in done.stdout
    assert "LLR +" in done.stderr and "[-2.94, 2.94]" in done.stderr   # the progress line
    folder = tmp_path / "results" / "ab"
    ids = stored_ids(folder)
    pairs = int(done.stdout.split("pairs")[1].split()[0])
    assert 3 <= pairs < 60 and len(ids) >= 2 * pairs
    # Both seatings of every deal: pair k's games are p..ka and p..kb with seats swapped. The
    # pairs counted are those with both games in; with 2 workers they finish in any order.
    halves = {match_id.split(":")[0] for match_id in ids}
    whole = {half[:-1] for half in halves if {half[:-1] + "a", half[:-1] + "b"} <= halves}
    assert len(whole) == pairs
    again = arena(tmp_path, "sprt", *args)
    assert again.returncode == 0, again.stderr
    assert again.stdout == done.stdout and stored_ids(folder) == ids
    # Pairs are mirrored deals, stored so; a test stored before seating modes (no such key)
    # is the same test.
    with sqlite3.connect(folder / DB_NAME) as conn:
        config = json.loads(conn.execute("SELECT config FROM league").fetchone()[0])
        assert config["seating"] == "mirrored"
        del config["seating"]
        conn.execute("UPDATE league SET config = ?", (json.dumps(config),))
    older = arena(tmp_path, "sprt", *args)
    assert older.returncode == 0 and older.stdout == done.stdout, older.stderr


@pytest.mark.slow
def test_random_against_a_copy_of_itself_does_not_accept_h1(tmp_path):
    # Identical bots: a test accepts H1 anyway at most alpha of the time (test_sprt.py
    # checks that rate). Here the deals and the bots' seeds are fixed (an installation key
    # of its own and a seed), so this run is the same every time: once, it met the 5%.
    copy = tmp_path / "random-copy"
    shutil.copytree(RANDOM, copy)
    key = tmp_path / "installation.key"
    key.write_text("5a" * 32 + "\n")
    done = arena(tmp_path, "sprt", RANDOM, copy, "--game", "mandala", "--elo1", "100",
                 "--max-pairs", "24", "--move-time", "2", "--workers", "2", "--quiet",
                 "--seed", "1", env={**os.environ, "ARENA_KEY_FILE": str(key)})
    assert done.returncode == 0, done.stderr
    first_line = done.stdout.splitlines()[0]
    assert "H1 accepted" not in first_line
    assert "H0 accepted" in first_line or "max pairs reached" in first_line


@pytest.mark.slow
def test_three_players_rotate_new_and_old_through_every_seat_beside_the_field(tmp_path):
    done = arena(tmp_path, "sprt", GREEDY, RANDOM, "--game", "flowers-mandala", "--players",
                 "3", "--field", "random", "--max-pairs", "3", "--move-time", "2",
                 "--workers", "2", "--name", "fm3", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "pairs                          3 (6 games)" in done.stdout
    seatings = [match_id.split(":")[1].split(",")
                for match_id in stored_ids(tmp_path / "results" / "fm3")]
    assert [seats.index("new-greedy") for seats in seatings] == [0, 1, 2, 0, 1, 2]
    assert [seats.index("random") for seats in seatings] == [2, 2, 1, 1, 0, 0]


@pytest.mark.parametrize("args, message", [
    (["--players", "3"], "3 players need 1 field bot"),
    (["--elo0", "5", "--elo1", "5"], "--elo1 (5) must be above --elo0 (5)"),
    (["--alpha", "0.7"], "--alpha must be between 0 and 0.5"),
    (["--max-pairs", "0"], "--max-pairs must be at least 1"),
])
def test_bad_settings_get_one_line_and_exit_2(tmp_path, args, message):
    done = arena(tmp_path, "sprt", GREEDY, RANDOM, "--game", "flowers-mandala", *args)
    assert done.returncode == 2
    said = done.stderr.split(": ", 2)[2].strip()
    assert done.stderr.strip().splitlines() == [f"arena: error: {said}"]
    assert message in done.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_another_test_under_a_used_name_is_refused(tmp_path):
    first = arena(tmp_path, "sprt", GREEDY, RANDOM, "--game", "mandala", "--max-pairs", "1",
                  "--name", "x", "--quiet")
    assert first.returncode == 0, first.stderr
    ids = stored_ids(tmp_path / "results" / "x")
    other = arena(tmp_path, "sprt", GREEDY, RANDOM, "--game", "mandala", "--max-pairs", "1",
                  "--elo1", "20", "--name", "x")
    assert other.returncode == 2
    assert "holds another test (it differs in sprt)" in other.stderr
    assert stored_ids(tmp_path / "results" / "x") == ids
    resumed = arena(tmp_path, "league", "resume", tmp_path / "results" / "x")
    assert resumed.returncode == 2 and "holds an A/B test" in resumed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_a_test_keeping_its_pairs_and_the_same_command_goes_on(
        tmp_path, stop):
    args = ["sprt", RANDOM, "random", "--game", "mandala", "--max-pairs", "12", "--seed", "4",
            "--move-time", "2", "--workers", "1", "--skip-check", "--name", "cut"]
    folder = tmp_path / "results" / "cut"
    test = subprocess.Popen([*ARENA, *map(str, args)], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while test.poll() is None and not ((folder / DB_NAME).exists()
                                       and len(stored_ids(folder)) >= 4):
        time.sleep(0.05)
    test.send_signal(stop)
    _, err = test.communicate(timeout=60)
    kept = stored_ids(folder)
    assert test.returncode == 130, err
    assert "stopped: the pairs played are stored" in err and "Traceback" not in err
    again = arena(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    assert stored_ids(folder)[:len(kept)] == kept and len(stored_ids(folder)) > len(kept)
