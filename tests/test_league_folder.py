"""A league writes only into folders of its own user that no other user can plant links in:
a folder of another user, or one every user may write to, is refused before anything is
written, and a link planted where the league lock or a bot's log goes is refused, never
followed (as root, following it would write bot lines into any file of the machine)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.bots import BotSpec

ROOT = Path(__file__).resolve().parent.parent
FIRST = ROOT / "sample_bots" / "first"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
NOBODY = 65534


def league(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, "league", "run", "--game", "mandala", "--bot", str(FIRST),
                           "--bot", "greedy", "--deals", "1", "--seed", "1", "--skip-check",
                           "--out", str(folder)], capture_output=True, text=True, timeout=120)


def refused_in_one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    """Refused with one error line, the last (after the league's own header, if it began)."""
    assert done.returncode != 0, done.stdout
    last = done.stderr.splitlines()[-1]
    assert last.startswith("arena: error: ") and done.stderr.count("arena: error") == 1, \
        done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in last, done.stderr


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
    refused_in_one_line(league(log_linked), "cannot write the log of bot first", "link")
    assert target.read_text() == "untouched\n"
