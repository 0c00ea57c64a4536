"""`arena play`: a readable log, a record that replays, and one clear line for bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.keys import KEY_FILE_ENV, installation_key
from engine import records, registry

SAMPLE_BOTS = Path(__file__).parent.parent / "sample_bots"
needs_sandbox = pytest.mark.sandbox


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def verifies(record: dict) -> bool:
    verdict = records.verify(record)
    return verdict["ok"] and verdict["scores"] == record["result"]["scores"]


def test_play_prints_each_move_and_writes_a_record_that_replays(tmp_path):
    path = tmp_path / "match.json"
    result = run("play", "mandala", "--seed", "7", "--bot", "random", "--bot", "greedy",
                 "--record", str(path))
    assert result.exit_code == 0, result.output
    record = json.loads(path.read_text())
    assert record["format"] == "arena-record/1"
    assert record["players"] == ["random", "greedy"]
    # The record's seed is the engine's, derived from 7 with this installation's secret key.
    assert record["seed"] == installation_key().match_seeds("play:7", 2).deal != 7
    assert verifies(record)
    first_seat, first_move = record["moves"][0]
    assert f"ply 0  seat {first_seat} (random): {first_move}" in result.output
    assert f"result: scores {record['result']['scores']}" in result.output
    assert len(record["times"]) == len(record["moves"])


def test_same_seed_same_match(tmp_path):
    records = []
    for name in ("a.json", "b.json"):
        result = run("play", "mandala", "--seed", "11", "--bot", "random", "--bot", "random",
                     "--record", str(tmp_path / name), "--quiet")
        assert result.exit_code == 0, result.output
        record = json.loads((tmp_path / name).read_text())
        records.append((record["moves"], record["result"]))
    assert records[0] == records[1]


def test_the_typed_seed_alone_does_not_give_the_deal(tmp_path, monkeypatch):
    # A bot that guesses the seed a person typed cannot deal the cards itself: the deal
    # depends on this installation's secret key too.
    def setup_with_key(key_file: Path) -> dict:
        monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
        path = tmp_path / "match.json"
        assert run("play", "mandala", "--seed", "7", "--bot", "random", "--bot", "random",
                   "--record", str(path), "--quiet").exit_code == 0
        return json.loads(path.read_text())["setup"]

    here = setup_with_key(tmp_path / "one.key")
    assert setup_with_key(tmp_path / "one.key") == here
    assert setup_with_key(tmp_path / "other.key") != here
    assert registry.get("mandala").new_state(2, {}, seed=7).setup != here


def test_without_a_seed_the_match_gets_64_random_bits():
    seeds = set()
    for _ in range(3):
        result = run("play", "mandala", "--bot", "random", "--bot", "random")
        assert result.exit_code == 0, result.output
        seeds.add(int(result.output.split("seed ", 1)[1].split(",", 1)[0]))
    assert len(seeds) == 3
    assert max(seed.bit_length() for seed in seeds) > 32   # wrong once in 2^96 runs


def test_quiet_prints_only_the_result():
    result = run("play", "mandala", "--seed", "3", "--bot", "random", "--bot", "random",
                 "--quiet")
    assert result.exit_code == 0
    assert result.output.count("\n") == 1
    assert result.output.startswith("scores [")


@pytest.mark.parametrize("args, says", [
    (["play", "chess", "--bot", "random", "--bot", "random"], "unknown game 'chess'"),
    (["play", "mandala", "--bot", "random", "--bot", "nobody"], "unknown bot 'nobody'"),
    (["play", "mandala", "--bot", "random"], "mandala is for 2 players, not 1"),
    (["play", "mandala", "--players", "3", "--bot", "random", "--bot", "random"],
     "--players 3 but 2 --bot given"),
    (["play", "mandala", "--option", "size=3", "--bot", "random", "--bot", "random"],
     "has no option 'size'"),
    (["play", "mandala", "--tc", "ten", "--bot", "random", "--bot", "random"],
     "is not BANK+INCREMENT"),
    (["play", "mandala", "--move-time", "-1", "--bot", "random", "--bot", "random"],
     "move_time must be a positive number of seconds"),
    (["play", "mandala", "--startup-time", "0", "--bot", "random", "--bot", "random"],
     "startup must be a positive number of seconds"),
    (["play", "mandala", "--record", "/nonexistent/m.json", "--bot", "random", "--bot",
      "random"], "folder /nonexistent does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(args, says):
    result = run(*args)
    assert result.exit_code == 2
    assert says in result.output
    assert result.output.count("\n") == 1
    assert "Traceback" not in result.output


@needs_sandbox
def test_bot_folders_play_in_the_sandbox_and_the_record_verifies(tmp_path):
    path = tmp_path / "m.json"
    result = run("play", "mandala", "--seed", "5", "--bot", str(SAMPLE_BOTS / "greedy"),
                 "--bot", str(SAMPLE_BOTS / "random"), "--record", str(path))
    assert result.exit_code == 0, result.output
    record = json.loads(path.read_text())
    assert record["players"] == ["greedy", "random"]
    assert record["result"]["end"] == "normal"
    assert verifies(record)
    assert "bot logs in " in result.output


def test_unsafe_no_sandbox_runs_a_bot_folder_without_bubblewrap(tmp_path):
    result = run("play", "mandala", "--seed", "5", "--unsafe-no-sandbox", "--quiet",
                 "--bot", str(SAMPLE_BOTS / "random"), "--bot", "random")
    assert result.exit_code == 0, result.output
    assert "end normal" in result.output


def test_without_bubblewrap_bot_folders_are_refused_naming_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")   # no bwrap to be found
    result = run("play", "mandala", "--bot", str(SAMPLE_BOTS / "random"), "--bot", "random")
    assert result.exit_code == 2
    assert "bubblewrap" in result.output and "--unsafe-no-sandbox" in result.output
    assert result.output.count("\n") == 1


def test_a_folder_without_a_manifest_is_one_line(tmp_path):
    result = run("play", "mandala", "--bot", str(tmp_path), "--bot", "random")
    assert result.exit_code == 2
    assert "has no bot.toml manifest" in result.output
