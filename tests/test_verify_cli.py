"""`arena verify`: one JSON line per record, in order; exit 0 / 1 / 2 as docs/notation.md says.

Records come from real `arena play` matches; bad inputs are written as files. The exit codes
are checked both in-process (CliRunner) and through the installed `arena` console script.
"""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from arena.cli import main


def run(*args: str, stdin: str | None = None):
    result = CliRunner().invoke(main, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def lines(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict:
    """A record written by `arena play` between two random bots."""
    path = tmp_path_factory.mktemp("records") / "match.json"
    result = run("play", "mandala", "--seed", "11", "--bot", "random", "--bot", "random",
                 "--quiet", "--record", str(path))
    assert result.exit_code == 0, result.output
    return json.loads(path.read_text())


@pytest.fixture
def write(tmp_path):
    """write(name, record or text) -> the path of a record file."""
    def write_file(name: str, content) -> str:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return str(path)
    return write_file


def changed(record: dict, **changes) -> dict:
    return json.loads(json.dumps({**record, **changes}))


def test_a_played_match_verifies_with_its_result(played, write):
    path = write("good.json", played)
    result = run("verify", path)
    assert result.exit_code == 0
    assert lines(result) == [{"ok": True, "scores": played["result"]["scores"],
                              "ranks": played["result"]["ranks"], "end": "normal",
                              "source": str(path), "match": None}]


def test_an_illegal_move_at_ply_k_reports_ply_k_and_exit_1(played, write):
    record = changed(played)
    record["moves"][9][1] = "field 7 red 1"
    result = run("verify", write("illegal.json", record))
    assert result.exit_code == 1
    [line] = lines(result)
    assert (line["ok"], line["ply"]) == (False, 9) and "field 7 red 1" in line["error"]


def test_moves_stopping_early_report_len_moves_and_exit_1(played, write):
    record = changed(played, moves=played["moves"][:20])
    result = run("verify", write("short.json", record))
    assert (result.exit_code, lines(result)[0]["ply"]) == (1, 20)


def test_a_stored_result_that_differs_reports_len_moves_and_exit_1(played, write):
    result_dict = dict(played["result"], scores=[99, 98])
    result = run("verify", write("result.json", changed(played, result=result_dict)))
    assert (result.exit_code, lines(result)[0]["ply"]) == (1, len(played["moves"]))


def test_a_forfeited_match_verifies_up_to_its_last_move_with_exit_0(played, write):
    forfeit = {"seat": played["moves"][12][0], "reason": "timeout"}
    result_dict = {"scores": [1, 1], "ranks": [1, 1], "end": "forfeit", "forfeit": forfeit}
    result_dict["scores"][forfeit["seat"]], result_dict["ranks"][forfeit["seat"]] = 0, 2
    record = changed(played, moves=played["moves"][:12], result=result_dict)
    path = write("forfeit.json", record)
    result = run("verify", path)
    assert result.exit_code == 0
    assert lines(result) == [{"ok": True, "scores": result_dict["scores"],
                              "ranks": result_dict["ranks"], "end": "forfeit",
                              "forfeit": forfeit, "source": str(path), "match": None}]
    record["moves"][5][1] = "pass"              # an illegal move before the forfeit still fails
    result = run("verify", write("forfeit-bad.json", record))
    assert (result.exit_code, lines(result)[0]["ply"]) == (1, 5)


@pytest.mark.parametrize("name,content,says", [
    ("not-json.json", "this is not json", "not JSON"),
    ("format.json", {"format": "arena-record/0"}, "format"),
    ("game.json", {"game": "go"}, "unknown game"),
    ("option.json", {"options": {"colours": 7}}, "colours"),
    ("setup.json", {"setup": {"cups": [], "hands": [], "mountains": [], "deck": []}}, "setup"),
])
def test_a_record_that_cannot_be_read_reports_ply_null_and_exit_2(played, write, name,
                                                                  content, says):
    text = content if isinstance(content, str) else json.dumps(changed(played, **content))
    result = run("verify", write(name, text))
    assert result.exit_code == 2
    [line] = lines(result)
    assert (line["ok"], line["ply"]) == (False, None) and says in line["error"]


def test_a_missing_file_reports_ply_null_and_exit_2(tmp_path):
    missing = str(tmp_path / "nowhere.json")
    result = run("verify", missing)
    assert result.exit_code == 2
    [line] = lines(result)
    assert line["ply"] is None and "nowhere.json" in line["error"]


def test_a_directory_is_a_record_that_cannot_be_read(played, write, tmp_path):
    result = run("verify", str(tmp_path), write("good.json", played))
    assert result.exit_code == 2
    assert [line["ok"] for line in lines(result)] == [False, True]


def test_a_dash_reads_the_record_from_standard_input(played):
    result = run("verify", "-", stdin=json.dumps(played))
    assert result.exit_code == 0 and lines(result)[0]["ok"] is True


def test_one_line_per_record_in_order_and_the_highest_exit_status(played, write):
    good = write("good.json", played)
    bad_move = write("bad.json", changed(played, moves=played["moves"][:3]))
    unreadable = write("unreadable.json", "[]")
    result = run("verify", good, bad_move, good)
    assert result.exit_code == 1
    assert [line["ok"] for line in lines(result)] == [True, False, True]
    result = run("verify", unreadable, good, bad_move)
    assert result.exit_code == 2
    assert [(line["ok"], line.get("ply")) for line in lines(result)] == \
        [(False, None), (True, None), (False, 3)]


def test_the_installed_command_exits_0_1_2_without_a_traceback(played, write):
    arena = shutil.which("arena")
    assert arena, "the arena console script is not installed (pip install -e .)"
    good = write("good.json", played)
    failing = write("failing.json", changed(played, moves=played["moves"][:5]))
    broken = write("broken.json", "{")
    for files, status, plies in [([good], 0, [None]), ([good, failing], 1, [None, 5]),
                                 ([failing, broken, good], 2, [5, None, None])]:
        done = subprocess.run([arena, "verify", *files], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == status, done.stderr
        assert "Traceback" not in done.stderr
        verdicts = [json.loads(line) for line in done.stdout.splitlines()]
        assert [verdict.get("ply") for verdict in verdicts] == plies


def test_each_line_names_its_file_and_match(played, write, tmp_path):
    single = write("one.json", played)
    export = tmp_path / "league.jsonl"
    broken = changed(played, moves=[[0, "field 7 red 1"]] + played["moves"][1:])
    export.write_text(json.dumps({**played, "match": "d0000:a,b"}) + "\n"
                      + json.dumps({**broken, "match": "d0001:b,a"}) + "\n")
    result = run("verify", str(single), str(export), str(tmp_path / "missing.json"))
    assert result.exit_code == 2
    named = [(line["source"], line["match"], line["ok"]) for line in lines(result)]
    assert named == [(str(single), None, True), (str(export), "d0000:a,b", True),
                     (str(export), "d0001:b,a", False),
                     (str(tmp_path / "missing.json"), None, False)]
