"""`arena debug`: a sandboxed bot put in front of one recorded position, as an author runs it,
on a normal move and on a forfeit, from a record file and from a JSON Lines export."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.debug import debug_position
from engine import records

ROOT = Path(__file__).parent.parent
GREEDY = ROOT / "sample_bots" / "greedy"
ILLEGAL = ROOT / "tests" / "misbehaving_bots" / "illegal_move"

pytestmark = pytest.mark.sandbox

TALKER = '''
import sys
from arena.sdk import Bot


class Talker(Bot):
    name = "talker"

    def act(self, observation, legal_moves, ply):
        print(f"talker at ply {ply} (self.ply {self.ply}): {len(legal_moves)} moves",
              file=sys.stderr)
        return legal_moves[-1]


Talker().run()
'''


def run(*args: str):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def talker(tmp_path_factory) -> Path:
    """A bot that plays deterministically and logs the ply it is given."""
    folder = tmp_path_factory.mktemp("talker")
    (folder / "bot.toml").write_text('name = "talker"\ncommand = ["python3", "bot.py"]\n'
                                     'games = ["mandala"]\n')
    (folder / "bot.py").write_text(TALKER)
    return folder


def play(tmp_path: Path, name: str, *bots) -> dict:
    path = tmp_path / name
    result = run("play", "mandala", "--seed", "5", "--record", path, "--quiet",
                 *[part for bot in bots for part in ("--bot", bot)])
    assert result.exit_code == 0, result.output
    return json.loads(path.read_text())


def observation_at(record: dict, ply: int, seat: int) -> dict:
    read = records.read(record)
    state = read.start()
    for index, (entry_seat, move) in enumerate(read.moves[:ply]):
        records.apply_entry(state, index, entry_seat, move)
    return state.observation(seat)


def test_debug_on_a_normal_move_shows_what_the_bot_saw_answers_and_logged(tmp_path, talker):
    record = play(tmp_path, "match.json", "random", talker)
    ply = [index for index, (seat, _) in enumerate(record["moves"]) if seat == 1][3]
    result = run("debug", tmp_path / "match.json", "--ply", ply, "--bot", talker)
    assert result.exit_code == 0, result.output
    recorded = record["moves"][ply][1]
    assert f"mandala, ply {ply}: seat 1 to move (in the record: talker)" in result.output
    assert f"recorded then: {recorded}\n" in result.output
    # The same bot, the same position: the same (deterministic) move as in the match.
    assert f"bot's move now: {recorded} (the same)" in result.output
    # Its log line for this act, with the ply the SDK gave it as argument and self.ply.
    assert f"talker at ply {ply} (self.ply {ply}):" in result.output
    observation = result.output.split("observation (as the bot receives it):\n")[1]
    observation = json.loads(observation.split("\nlegal moves")[0])
    expected = observation_at(record, ply, 1)
    assert observation.items() >= expected.items()
    legal = result.output.split("legal moves (")[1].split("\n")[0]
    assert recorded in legal.split(": ", 1)[1].split(", ")


def test_debug_on_a_forfeit_reproduces_it_and_another_bot_answers(tmp_path):
    record = play(tmp_path, "forfeit.json", "random", ILLEGAL)
    assert record["result"]["end"] == "forfeit"
    ply = len(record["moves"])   # the forfeit's ply: the position the forfeiting bot faced
    result = run("debug", tmp_path / "forfeit.json", "--ply", ply, "--bot", ILLEGAL)
    assert result.exit_code == 1, result.output
    assert "recorded then: forfeit by seat 1 (illegal)" in result.output
    assert "bot's move now: none, illegal: " in result.output
    assert "Traceback" not in result.output
    # The Python helper, with a bot that plays: the same position, now a legal answer.
    fixed = debug_position(record, ply, GREEDY)
    assert (fixed.seat, fixed.legal, fixed.error) == (1, True, None)
    assert fixed.move in fixed.legal_moves
    assert fixed.observation.items() >= observation_at(record, ply, 1).items()
    assert fixed.recorded.startswith("forfeit by seat 1 (illegal)")


def test_debug_reads_a_match_of_a_json_lines_export(tmp_path, talker):
    record = play(tmp_path, "match.json", "random", talker)
    export = tmp_path / "export.jsonl"
    export.write_text("".join(json.dumps({**record, "match": match}) + "\n"
                              for match in ("d0000:a", "d0001:b")))
    result = run("debug", export, "--match", "d0001:b", "--ply", 1, "--bot", talker)
    assert result.exit_code == 0, result.output
    assert "talker at ply 1 " in result.output


@pytest.mark.parametrize("ply, says", [(999, "ply 999 is outside the record"),
                                       (-1, "ply -1 is outside the record")])
def test_a_ply_without_a_decision_is_one_line_and_status_2(tmp_path, ply, says):
    record = tmp_path / "match.json"
    play(tmp_path, "match.json", "random", "greedy")
    result = run("debug", record, "--ply", ply, "--bot", GREEDY)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert says in result.output


def test_the_end_of_a_normal_match_is_no_decision(tmp_path):
    record = play(tmp_path, "match.json", "random", "greedy")
    end = len(record["moves"])
    result = run("debug", tmp_path / "match.json", "--ply", end, "--bot", GREEDY)
    assert result.exit_code == 2
    assert f"ply {end} is the end of the match" in result.output


@pytest.mark.parametrize("args, says", [
    (["missing.json", "--ply", "1", "--bot", str(GREEDY)], "cannot read the record missing.json"),
    (["{record}", "--ply", "1", "--bot", "no-such-bot"], "bot folder"),
    (["{record}", "--bot", str(GREEDY)], "Missing option '--ply'"),
])
def test_bad_input_from_the_shell_is_one_line_exit_2_no_traceback(tmp_path, args, says):
    play(tmp_path, "match.json", "random", "greedy")
    args = [arg.format(record=tmp_path / "match.json") for arg in args]
    done = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main(prog_name='arena')", "debug",
         *args], capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)})   # this checkout's arena, not another
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("arena: error: ")
    assert says in done.stderr


def test_the_bot_gets_the_clock_its_seat_had_at_that_ply(tmp_path, talker):
    path = tmp_path / "bank.json"
    result = run("play", "mandala", "--seed", "5", "--tc", "5+0.25", "--record", path,
                 "--quiet", "--bot", "random", "--bot", talker)
    assert result.exit_code == 0, result.output
    record = json.loads(path.read_text())
    ply = [index for index, (seat, _) in enumerate(record["moves"]) if seat == 1][4]
    spent = sum(seconds for (seat, _), seconds in zip(record["moves"][:ply], record["times"])
                if seat == 1)
    result = debug_position(record, ply, talker)
    assert result.legal and result.clock.move_limit is None
    assert result.clock.remaining == pytest.approx(5 - spent + 4 * 0.25)
    shown = run("debug", path, "--ply", ply, "--bot", talker)
    assert f"bank left {result.clock.remaining:.3f} s" in shown.output
