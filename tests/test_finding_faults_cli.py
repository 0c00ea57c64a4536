"""Finding what went wrong, as an author does it: `arena league matches` lists a league's
matches and forfeits, and `arena bot check --keep DIR` keeps what its messages name."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from engine import records

ROOT = Path(__file__).parent.parent
ILLEGAL = ROOT / "tests" / "misbehaving_bots" / "illegal_move"
CRASHY = ROOT / "tests" / "misbehaving_bots" / "crash_mid_match"
EXITS = ROOT / "tests" / "misbehaving_bots" / "exit_at_start"   # fails its start-up

pytestmark = pytest.mark.sandbox


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    """A played league of random, greedy and a bot that forfeits every match (illegal)."""
    folder = tmp_path_factory.mktemp("league") / "lg"
    result = run("league", "run", "--game", "mandala", "--bot", "random", "--bot", ILLEGAL,
                 "--bot", "greedy", "--deals", "1", "--seed", "2", "--skip-check",
                 "--workers", "1", "--out", folder, "--quiet")
    assert result.exit_code == 0, result.output
    return folder


def table_rows(output: str) -> list[str]:
    """The table's first line of each match (a match's seats take a line each)."""
    return [line for line in output.splitlines() if re.match(r"d\d{4}:", line)]


def test_league_matches_lists_every_match_with_seats_results_and_forfeits(league):
    result = run("league", "matches", league)
    assert result.exit_code == 0, result.output
    rows = table_rows(result.output)
    assert len(rows) == 6   # three pairs, both seatings
    assert "6 match(es), 4 forfeit(s)" in result.output
    for line in rows:
        if "illegal_move" in line.split()[0]:
            assert "forfeit" in line and "illegal at ply" in line
        else:
            assert " normal" in line
    assert "0 random@builtin" in result.output and "1 greedy@builtin" in result.output


def test_league_matches_filters_forfeits_and_a_bot(league):
    result = run("league", "matches", league, "--forfeits", "--bot", "greedy")
    assert result.exit_code == 0, result.output
    rows = table_rows(result.output)
    assert len(rows) == 2 and all("greedy" in row and "forfeit" in row for row in rows)
    # The forfeit's ply leads to `arena debug` on that very match.
    match_id = rows[0].split()[0]
    ply = int(re.search(r"illegal at ply (\d+)", rows[0]).group(1))
    debug = run("debug", league, "--match", match_id, "--ply", ply, "--bot", ILLEGAL)
    assert debug.exit_code == 1 and "bot's move now: none, illegal" in debug.output


def test_league_matches_refuses_an_unknown_bot_in_one_line(league):
    result = run("league", "matches", league, "--bot", "nobody")
    assert result.exit_code == 2
    assert "no bot 'nobody' played in" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_bot_check_keep_keeps_every_record_and_log_its_messages_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # the kept paths are named as given: relative here
    result = run("bot", "check", CRASHY, "--keep", "kept")
    assert result.exit_code == 1
    named = re.findall(r"(kept/\S+?\.(?:log|json))\b", result.output)
    assert any(path.endswith(".log") for path in named)
    assert sum(path.endswith(".json") for path in set(named)) == 2   # both check matches
    for path in named:
        assert Path(path).is_file(), f"{path} is named but does not exist"
    for path in {path for path in named if path.endswith(".json")}:
        record = json.loads(Path(path).read_text())
        assert record["result"]["end"] == "forfeit" and records.verify(record)["ok"]
    assert "kept in kept" in result.output


def test_bot_check_without_keep_says_its_logs_were_temporary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("bot", "check", CRASHY)
    assert result.exit_code == 1
    assert "--keep DIR keeps them" in result.output
    assert list(tmp_path.iterdir()) == []   # nothing is left behind without --keep


def path_like(output: str) -> set[str]:
    """Every word of `output` that looks like a file's path: it holds a `/` or ends in .log or
    .json (a bare log name is a path too, relative to the working folder)."""
    words = {word.strip("()[]{}:;,.'\"`") for word in output.split()}
    return {word for word in words if "/" in word or re.search(r"\.(log|json)$", word)}


@pytest.mark.parametrize("keep", [False, True], ids=["temporary", "keep"])
@pytest.mark.parametrize("bot", [CRASHY, EXITS], ids=["crash mid-match", "exit at start"])
def test_every_path_bot_check_names_exists_afterwards(bot, keep, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # relative paths are named from here
    result = run("bot", "check", bot, *(["--keep", "kept"] if keep else []))
    assert result.exit_code == 1
    named = path_like(result.output)
    for path in named:
        assert Path(path).exists(), f"{path} is named but does not exist:\n{result.output}"
    if keep:
        assert any(path.endswith(".log") for path in named), result.output
    else:   # the log is shown, and said to be gone, by no name
        assert named == set(), result.output
        assert "the bot's log, temporary and not kept" in result.output


def test_export_output_dash_is_standard_output(league, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("league", "export", league, "--output", "-")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 6 and all(json.loads(line)["match"] for line in lines)
    assert not (tmp_path / "-").exists()
