"""Leagues on Ray (`--executor ray`): a real local Ray instance, real sandboxed sample bots.

The Ray executor must give exactly the results of local workers (same seed, deterministic
bots), survive a worker (actor) killed mid-league, leave no bot behind, and refuse a bad
address in one line without creating the league.
"""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import sandbox
from arena.store import DB_NAME, Store

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap cannot run here")

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
LEAGUE = ["league", "run", "--game", "mandala", "--deals", "6", "--seed", "11", "--quiet",
          "--move-time", "10",  # no forfeit on time however loaded the machine
          "--workers", "2"]


@pytest.fixture(scope="module")
def bots(tmp_path_factory) -> Path:
    """The sample bots, copied to a folder of this module's own, so that finding their
    processes cannot mistake another test run's bots for them."""
    folder = tmp_path_factory.mktemp("bots")
    for name in ("greedy", "random", "first"):
        shutil.copytree(SAMPLE_BOTS / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def league(bots) -> list[str]:
    return LEAGUE + [arg for bot in sorted(bots.iterdir()) for arg in ("--bot", str(bot))]


def arena(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def stored(folder: Path) -> list[tuple]:
    with Store.open(folder) as store:
        return [(record["players"], record["seed"], record["moves"], record["result"])
                for record in store.records()]


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def local_league(tmp_path_factory, league) -> Path:
    folder = tmp_path_factory.mktemp("local") / "league"
    done = arena(*league, "--out", folder)
    assert done.returncode == 0, done.stderr
    return folder


def test_a_league_on_ray_stores_exactly_what_local_workers_store(local_league, league, bots,
                                                                 tmp_path):
    folder = tmp_path / "ray"
    done = arena(*league, "--executor", "ray", "--out", folder)
    assert done.returncode == 0, done.stderr
    assert "Elo" in done.stdout
    assert stored(folder) == stored(local_league)
    workers = {row[0] for row in sqlite3.connect(folder / DB_NAME).execute(
        "SELECT worker FROM matches")}
    assert workers == {0, 1}
    deadline = time.monotonic() + 10   # every bot ends with its actor, a moment later
    while processes_with(str(bots)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(str(bots)) == []


def test_a_ray_worker_killed_mid_league_is_replaced_and_nothing_is_lost(local_league, league,
                                                                        tmp_path):
    folder = tmp_path / "ray-killed"
    running = subprocess.Popen([*ARENA, *league, "--executor", "ray", "--out", str(folder)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and running.poll() is None:
            if (folder / DB_NAME).exists() and len(stored(folder)) >= 3:
                break
            time.sleep(0.05)
        actors = processes_with("ray::LeagueWorker")
        assert actors, "no Ray league worker found to kill"
        assert running.poll() is None, "the league ended before the kill: make it longer"
        os.kill(actors[0], signal.SIGKILL)
        out, err = running.communicate(timeout=300)
    finally:
        running.kill()
    assert running.returncode == 0, err
    assert "Ray league worker" in err and "died; playing its" in err
    assert stored(folder) == stored(local_league)


def test_a_bad_ray_address_is_one_line_and_creates_nothing(league, tmp_path):
    folder = tmp_path / "never"
    refused = arena(*league, "--executor", "ray", "--ray-address", "127.0.0.1:1",
                    "--out", folder)
    assert refused.returncode == 2
    assert refused.stderr.startswith("arena: error: cannot reach the Ray cluster at 127.0.0.1:1")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not folder.exists()

    wrong = arena(*league, "--ray-address", "127.0.0.1:1", "--out", folder)
    assert wrong.returncode == 2
    assert "--ray-address needs --executor ray" in wrong.stderr
    assert not folder.exists()
