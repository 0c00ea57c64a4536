"""A league writes only into folders of its own user that no other user can plant links in:
a folder of another user, or one every user may write to, is refused before anything is
written, and a link planted where the league lock or a bot's log goes is refused, never
followed (as root, following it would write bot lines into any file of the machine)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.bots import BotSpec
from cli_refusals import refused_in_one_line

ROOT = Path(__file__).resolve().parent.parent
FIRST = ROOT / "sample_bots" / "first"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
NOBODY = 65534


def league(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, "league", "run", "--game", "mandala", "--bot", str(FIRST),
                           "--bot", "greedy", "--deals", "1", "--seed", "1", "--skip-check",
                           "--out", str(folder)], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: it makes a folder of another user")
def test_a_league_folder_of_another_user_is_refused_and_its_links_never_followed(tmp_path):
    target = tmp_path / "root-only"
    target.write_text("secret\n")
    os.chmod(target, 0o600)
    planted = tmp_path / "lg"
    (planted / "logs").mkdir(parents=True)
    (planted / "league.lock").symlink_to(tmp_path / "created-by-the-arena")
    (planted / "logs" / f"first-{BotSpec.load(FIRST).version}.log").symlink_to(target)
    for path in (planted, planted / "logs"):
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    refused_in_one_line(league(planted), "belongs to another user", "--out")
    assert target.read_text() == "secret\n"
    assert not (tmp_path / "created-by-the-arena").exists()
    assert sorted(path.name for path in planted.iterdir()) == ["league.lock", "logs"]


def test_a_league_folder_every_user_may_write_to_is_refused(tmp_path):
    shared = tmp_path / "lg"
    shared.mkdir()
    os.chmod(shared, 0o777)
    refused_in_one_line(league(shared), "writable by every user", "chmod o-w")
    assert list(shared.iterdir()) == []


def test_links_where_the_lock_or_a_bots_log_go_are_refused_not_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("untouched\n")
    lock_linked = tmp_path / "a"
    lock_linked.mkdir()
    (lock_linked / "league.lock").symlink_to(tmp_path / "created-by-the-arena")
    refused_in_one_line(league(lock_linked), "league.lock", "link")
    assert not (tmp_path / "created-by-the-arena").exists()

    log_linked = tmp_path / "b"
    (log_linked / "logs").mkdir(parents=True)
    (log_linked / "logs" / f"first-{BotSpec.load(FIRST).version}.log").symlink_to(target)
    refused_in_one_line(league(log_linked), "cannot write the log of bot first", "link",
                        after_output=True)
    assert target.read_text() == "untouched\n"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="needs root and unshare: a small tmpfs in a mount namespace of its own")
def test_a_full_disk_stops_a_league_in_one_line_and_keeps_what_it_stored(tmp_path):
    # The league runs on a 300 KiB tmpfs in a private mount namespace (nothing of the host's
    # mounts changes); when the disk is full, the matches stored so far are intact.
    script = ('mount -t tmpfs -o size=300k arena-test-full "$1" && '
              '"$2" -c "from arena.cli import main; main()" league run --game mandala '
              '--bot random --bot greedy --deals 400 --seed 1 --out "$1/lg" 2> "$3"; '
              'echo "status $?"; "$2" -c "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); '
              'print(db.execute(\'pragma integrity_check\').fetchone()[0], '
              'db.execute(\'select count(*) from matches\').fetchone()[0])" "$1/lg/league.sqlite"')
    disk, errors = tmp_path / "disk", tmp_path / "errors.txt"
    disk.mkdir()
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                           "sh", str(disk), sys.executable, str(errors)],
                          capture_output=True, text=True, timeout=300)
    status, checked = done.stdout.splitlines()[-2:]
    assert status != "status 0", done.stdout
    last = errors.read_text().splitlines()[-1]
    assert last.startswith("arena: error: cannot store a match of league") and \
        "make room, then `arena league resume`" in last, last
    assert "Traceback" not in errors.read_text()
    integrity, stored = checked.split()
    assert integrity == "ok" and int(stored) > 0, checked


def test_a_file_where_the_logs_folder_goes_is_refused_before_the_league_starts(tmp_path):
    folder = tmp_path / "lg"
    folder.mkdir()
    (folder / "logs").write_text("")
    refused_in_one_line(league(folder), "is not a folder")
    assert sorted(path.name for path in folder.iterdir()) == ["logs"]


@pytest.mark.parametrize("command", [["league", "run"], ["league", "resume"], ["ladder"]])
def test_a_fifo_where_the_database_goes_is_refused_not_opened(tmp_path, command):
    """SQLite blocks for ever opening a FIFO: the league must say so in one line instead."""
    folder = tmp_path / "lg"
    folder.mkdir()
    os.mkfifo(folder / "league.sqlite")
    if command == ["league", "run"]:
        done = league(folder)
    else:
        done = subprocess.run([*ARENA, *command, str(folder)], capture_output=True, text=True,
                              timeout=60)
    refused_in_one_line(done, "league.sqlite", "is not a file")
    assert (folder / "league.sqlite").is_fifo()
