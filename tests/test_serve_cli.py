"""The service's commands refuse bad input in one line (exit 2), and `arena bench serve`
prints its tables."""
from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_error(result, words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ") and words in lines[0], \
        result.output


def test_author_add_prints_a_token_once_and_refuses_bad_or_taken_names(tmp_path):
    first = run("author", "add", "alice", "--data", str(tmp_path / "svc"))
    assert first.exit_code == 0 and re.fullmatch(r"[0-9a-f]{64}\n", first.output)
    one_line_error(run("author", "add", "alice", "--data", str(tmp_path / "svc")),
                   "already exists")
    one_line_error(run("author", "add", "<b>x</b>", "--data", str(tmp_path / "svc")),
                   "is not allowed")
    database = (tmp_path / "svc" / "service.sqlite").read_bytes()
    assert first.output.strip().encode() not in database   # kept hashed only


def test_serve_refuses_unknown_ladders_and_foreign_databases(tmp_path):
    one_line_error(run("serve", "--data", str(tmp_path), "--ladder", "chess:2"), "chess")
    one_line_error(run("serve", "--data", str(tmp_path), "--ladder", "mandala"), "GAME:PLAYERS")
    one_line_error(run("serve", "--data", str(tmp_path), "--ladder", "flowers:1"),
                   "2 or more players")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "service.sqlite").write_text("not a database")
    one_line_error(run("author", "add", "x", "--data", str(tmp_path / "other")),
                   "not an arena service database")


def test_serve_refuses_a_port_in_use(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        one_line_error(run("serve", "--data", str(tmp_path), "--port", str(port)),
                       "cannot listen on 127.0.0.1")


def test_submit_and_recheck_refuse_bad_input_and_an_unreachable_server(tmp_path):
    one_line_error(run("submit", str(tmp_path), "--server", "http://127.0.0.1:9",
                       "--token", "t"), "no bot.toml")
    one_line_error(run("submit", str(SAMPLES / "greedy"), "--server", "http://127.0.0.1:9",
                       "--token", "t"), "cannot reach the service")
    one_line_error(run("author", "recheck", "7", "--server", "http://127.0.0.1:9",
                       "--token", "t"), "cannot reach the service")
    one_line_error(run("author", "recheck", "seven", "--server", "http://127.0.0.1:9",
                       "--token", "t"), "'seven' is not a valid integer")


@pytest.mark.slow   # a benchmark's tables: a service plays batches up to 16 (95 s of a quick run)
def test_bench_serve_prints_the_settling_memory_and_life_tables():
    result = run("bench", "serve", "--repeats", "1", "--matches", "2000", "--batches", "16",
                 "--ray-seconds", "0")
    assert result.exit_code == 0, result.output
    ratio = re.search(r"adaptive / round robin\s+([0-9.]+)", result.output)
    assert ratio and float(ratio.group(1)) <= 0.5, result.output
    assert re.search(r"^\s*2000\s+[0-9.]+", result.output, re.M), result.output
    # batches, minutes, matches, live bots, bot processes, MiB, MiB, voided (share), paused
    life = [line.split() for line in result.output.splitlines()
            if re.match(r"\s*\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+[0-9.]+\s+[0-9.]+\s+\d+ \(", line)]
    assert [int(row[0]) for row in life] == [2, 4, 8, 16], result.output
    assert all(int(row[2]) == 2 * int(row[0]) for row in life)   # one table, two seatings
    bots = [int(row[3]) for row in life]
    assert 0 < max(bots) <= 8 and bots[-1] <= bots[1], result.output   # capped and flat
