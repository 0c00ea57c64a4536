"""Hostile or damaged inputs to `arena replay` (text and html) and `arena league run --config`:
each is refused in one line on standard error with a non-zero exit and no traceback; what a
record lets a bot or a hand write (names, the replay command) reaches the terminal escaped."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_refusals import arena_in_process
from cli_refusals import refused_in_one_line as refused

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]


def arena(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, errors="replace")


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("rec") / "rec.json"
    done = arena("play", "mandala", "--bot", "random", "--bot", "greedy", "--seed", 3,
                 "--record", path)
    assert done.returncode == 0, done.stderr
    return json.loads(path.read_text())


def changed(record: dict, key: str, value) -> dict:
    if value is DELETE:
        return {k: v for k, v in record.items() if k != key}
    return {**record, key: value}


DELETE = object()
# (name, key, value or DELETE, raw JSON text replacing the value, words of the error)
HOSTILE = [
    ("no game", "game", DELETE, None, "missing key game"),
    ("no players", "players", DELETE, None, "missing key players"),
    ("players a number", "players", 5, None, "players must be"),
    ("result text", "result", "x", None, "result must be an object"),
    ("time control text", "time_control", "x", None, "time_control"),
    ("time control beyond a day", "time_control", {"move_time": 1e10}, None, "at most 86400"),
    ("times not a list", "times", "x", None, "times must be a list"),
    ("replay a list", "replay", [1], None, "replay must be an object"),
    ("deep nesting", "setup", None, "[" * 100000 + "]" * 100000, "nested too deeply"),
    ("deep objects", "extra", None, '{"a":' * 100000 + "1" + "}" * 100000, "nested too deeply"),
    ("moderately deep", "extra", None, "[" * 500 + "]" * 500, "nested deeper than"),
    ("5000-digit seed", "seed", None, "9" * 5000, "number too long"),
    ("5000-digit time", "times", None, "[" + "9" * 5000 + "]", "number too long"),
    ("huge seat", "extra", None, "1" + "0" * 100, "too large"),
    ("lone surrogate in a name", "players", None, '["ra\\ud800nd", "greedy"]', "Unicode"),
    ("NaN in times", "times", None, "[NaN, 0.1]", "finite"),
    ("Infinity in times", "times", None, "[0.1, Infinity]", "finite"),
    ("-Infinity in cpu_times", "cpu_times", None, "[-Infinity]", "finite"),
]


@pytest.mark.parametrize("name, key, value, raw, words", HOSTILE,
                         ids=[case[0] for case in HOSTILE])
@pytest.mark.parametrize("fmt", ["text", "html"])
def test_a_hostile_record_is_refused_in_one_line(record, tmp_path, name, key, value, raw,
                                                 words, fmt):
    path = tmp_path / "hostile.json"
    if raw is None:
        path.write_text(json.dumps(changed(record, key, value)))
    else:
        marker = "@@RAW@@"
        path.write_text(json.dumps(changed(record, key, marker)).replace(f'"{marker}"', raw))
    refused(arena_in_process("replay", path, "--format", fmt), words)


def test_the_untouched_record_replays(record, tmp_path):
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(record))
    for fmt in ("text", "html"):
        done = arena("replay", path, "--format", fmt)
        assert done.returncode == 0 and done.stderr == "", done.stderr


def test_names_and_the_replay_command_reach_the_terminal_escaped(record, tmp_path):
    path = tmp_path / "esc.json"
    hostile = {**record, "players": ["ra\x1b[31mnd\x07", "gr\needy"],
               "replay": {**(record.get("replay") or {}), "seed": 3,
                          "command": "arena play\x1b]0;TITLE\x07 mandala"}}
    path.write_text(json.dumps(hostile))
    done = arena("replay", path)
    assert done.returncode == 0, done.stderr
    assert not any(ord(char) < 32 and char != "\n" or ord(char) == 127
                   for char in done.stdout + done.stderr)
    assert "ra\\x1b[31mnd\\x07" in done.stdout and "gr\\needy" in done.stdout
    assert "arena play\\x1b]0;TITLE\\x07 mandala" in done.stdout


@pytest.mark.parametrize("content, words", [
    (b"game = \"mandala\"\nname = \"\xff\xfe\"\n", "not UTF-8"),
    (b"options = " + b"[" * 100000 + b"]" * 100000 + b"\n", "too deeply"),
    (b"[options]\nx = " + b"{a = " * 5000 + b"1" + b"}" * 5000 + b"\n", "too deeply"),
], ids=["not utf-8", "deep arrays", "deep inline tables"])
def test_a_league_config_that_cannot_be_read_is_refused_in_one_line(tmp_path, content, words):
    config = tmp_path / "league.toml"
    config.write_bytes(content)
    done = arena_in_process("league", "run", "--config", config, "--out", tmp_path / "lg")
    refused(done, words)
    assert not (tmp_path / "lg").exists()
