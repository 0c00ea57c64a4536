"""Bot logs per match: a league's log of a bot holds one header line per match, written by the
arena, and the bot's own lines each start with its process tag, so a bot that prints fake
headers (even behind carriage returns and terminal escapes) cannot pass one off; `arena play`
keeps logs beside its record or in --logs, and leaves no temporary folder behind."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.store import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

ROOT = Path(__file__).resolve().parent.parent
FORGER = ROOT / "tests" / "league_bots" / "forger"
CRASH = ROOT / "tests" / "misbehaving_bots" / "crash_mid_match"
GREEDY = ROOT / "sample_bots" / "greedy"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
HEADER = re.compile(r"== arena: match (.+?): mandala, seat (\d) of 2, [\d-]+ [\d:]+ UTC; "
                    r"process (\d+\.\d+) ==")


def arena(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)


def test_a_league_log_has_one_arena_header_per_match_and_no_forged_one(tmp_path):
    folder = tmp_path / "lg"
    done = arena("league", "run", "--game", "mandala", "--deals", 3, "--seed", 1, "--bot",
                 FORGER, "--bot", GREEDY, "--out", folder, "--quiet", "--workers", 2)
    assert done.returncode == 0, done.stderr
    with Store.open(folder) as store:
        matches = store.finished_ids()
    log, = (folder / "logs").glob("forger-*.log")
    lines = log.read_text().splitlines()
    headers = [HEADER.fullmatch(line) for line in lines if not re.match(r"\d+\.\d+\| ", line)]
    assert all(headers), [line for line in lines if not re.match(r"\d+\.\d+\| ", line)][:3]
    assert sorted(header[1] for header in headers) == sorted(matches)   # each match once
    tags = {header[3] for header in headers}
    for line in lines:
        if not HEADER.fullmatch(line):
            tag, _, text = line.partition("| ")
            assert tag in tags and "\r" not in text and "\x1b" not in text
    # Each fake header is there as the bot's text, visibly so.
    assert sum("d9999:fake,forger" in line for line in lines) == 4 * len(matches)
    assert any(line.endswith("| note\\x0d== arena: match d9999:fake,forger: mandala, seat 0 of "
                             "2, 2000-01-01 00:00:00 UTC; process 1.1 ==") for line in lines)
    assert any(line.endswith("| and an unfinished line") for line in lines)
    # The sample bot's log has its headers too: the matches it played.
    greedy_log, = (folder / "logs").glob("greedy-*.log")
    greedy_headers = [HEADER.fullmatch(line) for line in greedy_log.read_text().splitlines()]
    assert sorted(header[1] for header in greedy_headers if header) == sorted(matches)


def test_play_keeps_logs_beside_the_record_or_in_logs(tmp_path):
    record = tmp_path / "match.json"
    done = arena("play", "mandala", "--seed", 3, "--bot", FORGER, "--bot", GREEDY,
                 "--record", record)
    assert done.returncode == 0, done.stderr
    logs = tmp_path / "match.logs"
    assert f"  bot logs in {logs}\n" in done.stdout and record.is_file()
    forger_log, = logs.glob("forger-*.log")
    header = HEADER.fullmatch(forger_log.read_text().splitlines()[0])
    assert header and header[1] == "play seed 3" and header[2] == "0"
    other = tmp_path / "elsewhere"
    done = arena("play", "mandala", "--bot", GREEDY, "--bot", FORGER, "--logs", other,
                 "--quiet")
    assert done.returncode == 0 and len(list(other.glob("*.log"))) == 2


def test_play_without_record_removes_its_temporary_logs_after_showing_a_forfeiters(tmp_path):
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    done = arena("play", "mandala", "--seed", 2, "--bot", GREEDY, "--bot", CRASH, env=env)
    assert done.returncode == 0, done.stderr
    assert "(temporary: --logs FOLDER or --record keeps them)" in done.stdout
    assert "end forfeit" in done.stdout
    assert "the end of crash_mid_match-" in done.stderr and "seat 1 of 2" in done.stderr
    assert list(private_tmp.iterdir()) == []   # no arena-logs-* (nor sockets) left behind
    done = arena("play", "mandala", "--bot", GREEDY, "--bot", GREEDY, "--quiet", env=env)
    assert done.returncode == 0 and list(private_tmp.iterdir()) == []
