"""`arena play`: a readable log, a record that replays, and one clear line for bad input."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import main
from engine import registry


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def replay_result(record: dict) -> dict:
    """The result the engine reaches by replaying the record's moves from its setup."""
    game = registry.get(record["game"])
    state = game.start(len(record["players"]), game.resolve_options(record["options"],
                                                                    len(record["players"])),
                       record["setup"])
    for seat, move in record["moves"]:
        assert seat == state.to_move()
        state.apply(move)
    assert state.is_over()
    return {"scores": state.scores(), "ranks": state.ranks(), "end": "normal"}


def test_play_prints_each_move_and_writes_a_record_that_replays(tmp_path):
    path = tmp_path / "match.json"
    result = run("play", "mandala", "--seed", "7", "--bot", "random", "--bot", "greedy",
                 "--record", str(path))
    assert result.exit_code == 0, result.output
    record = json.loads(path.read_text())
    assert record["format"] == "arena-record/1"
    assert record["players"] == ["random", "greedy"]
    assert record["seed"] == 7
    assert replay_result(record) == record["result"]
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
])
def test_bad_input_is_one_line_and_exit_2(args, says):
    result = run(*args)
    assert result.exit_code == 2
    assert says in result.output
    assert result.output.count("\n") == 1
    assert "Traceback" not in result.output
