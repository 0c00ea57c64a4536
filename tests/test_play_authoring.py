"""`arena play` for bot authors: a recorded deal played again by other bots (--setup-from),
the record on standard output (--record -), one seed story, and a warning for a slow start."""
from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.keys import installation_key
from arena.match import StrategySeat, play_match
from engine import records

ROOT = Path(__file__).parent.parent
SAMPLE_BOTS = ROOT / "sample_bots"
needs_sandbox = pytest.mark.sandbox


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@needs_sandbox
def test_setup_from_deals_the_recorded_cards_to_other_bots(tmp_path):
    first = tmp_path / "first.json"
    result = run("play", "mandala", "--seed", "3", "--bot", "greedy", "--bot",
                 SAMPLE_BOTS / "random", "--record", first, "--quiet")
    assert result.exit_code == 0, result.stderr
    again = tmp_path / "again.json"
    result = run("play", "mandala", "--seed", "4", "--bot", SAMPLE_BOTS / "greedy", "--bot",
                 "random", "--setup-from", first, "--record", again)
    assert result.exit_code == 0, result.stderr
    assert f"the deal of {first}" in result.output
    old, new = json.loads(first.read_text()), json.loads(again.read_text())
    assert new["setup"] == old["setup"]            # the same deal ...
    assert new["players"] == ["greedy", "random"]  # ... to other bots
    assert records.verify(new)["ok"]
    # Without --setup-from, seed 4 deals other cards: the setup came from the record.
    fresh = tmp_path / "fresh.json"
    assert run("play", "mandala", "--seed", "4", "--bot", "greedy", "--bot", "random",
               "--record", fresh, "--quiet").exit_code == 0
    assert json.loads(fresh.read_text())["setup"] != old["setup"]


def test_setup_from_a_league_export_names_the_match(tmp_path):
    first = tmp_path / "first.json"
    assert run("play", "flowers-mandala", "--seed", "3", "--bot", "greedy", "--bot", "random",
               "--record", first, "--quiet").exit_code == 0
    record = json.loads(first.read_text())
    export = tmp_path / "league.jsonl"
    export.write_text("".join(json.dumps({**record, "match": f"d000{index}:x"}) + "\n"
                              for index in range(2)))
    again = tmp_path / "again.json"
    result = run("play", "flowers-mandala", "--bot", "random", "--bot", "random",
                 "--setup-from", export, "--setup-match", "d0001:x", "--record", again,
                 "--quiet")
    assert result.exit_code == 0, result.stderr
    assert json.loads(again.read_text())["setup"] == record["setup"]


def test_recorded_chance_outcomes_are_used_where_they_fit():
    # flowers-mandala with 3 players has chance moves (reshuffles, end orders). The same
    # bots on the same deal with another seed draw other chance outcomes, unless the
    # record's are given: then the match is the recorded one, move for move.
    def match(seed, **deal):
        seats = [StrategySeat("greedy", "flowers-mandala") for _ in range(3)]
        return play_match("flowers-mandala", 3, None, seed, seats, bot_seeds=[1, 2, 3], **deal)

    original = next(record for record in (match(seed) for seed in range(40))
                    if sum(seat == "chance" for seat, _ in record["moves"]) >= 2)
    chance = [move for seat, move in original["moves"] if seat == "chance"]
    replayed = match(original["seed"] + 1, setup=original["setup"], chance_moves=chance)
    assert replayed["moves"] == original["moves"]
    drawn = match(original["seed"] + 1, setup=original["setup"])
    assert drawn["setup"] == original["setup"]
    assert [m for s, m in drawn["moves"] if s == "chance"] != chance


@pytest.mark.parametrize("args, says", [
    (("--option", "x=1"), "--option cannot be given with --setup-from"),
    (("--bot", "random"), "is a 2-player deal: give 2 --bot, not 3"),
])
def test_setup_from_refuses_a_match_that_cannot_take_the_deal(tmp_path, args, says):
    first = tmp_path / "first.json"
    assert run("play", "mandala", "--bot", "random", "--bot", "random", "--record", first,
               "--quiet").exit_code == 0
    result = run("play", "mandala", "--bot", "random", "--bot", "random",
                 "--setup-from", first, *args)
    assert result.exit_code == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_setup_from_another_game_is_one_line(tmp_path):
    first = tmp_path / "first.json"
    assert run("play", "mandala", "--bot", "random", "--bot", "random", "--record", first,
               "--quiet").exit_code == 0
    result = run("play", "flowers", "--bot", "random", "--setup-from", first)
    assert result.exit_code == 2
    assert "is a match of mandala, not flowers" in result.stderr


def test_record_dash_writes_the_record_to_stdout_and_the_log_to_stderr():
    result = run("play", "mandala", "--seed", "9", "--bot", "random", "--bot", "greedy",
                 "--record", "-")
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)   # stdout holds the record and nothing else
    assert records.verify(record)["ok"]
    assert "ply 0  seat" in result.stderr
    assert not Path("-").exists()


def test_one_seed_story_names_both_seeds_and_a_command_that_replays_the_match(tmp_path):
    path = tmp_path / "a.json"
    result = run("play", "mandala", "--seed", "7", "--bot", "random", "--bot", "greedy",
                 "--move-time", "0.5", "--record", path)
    assert result.exit_code == 0, result.stderr
    deal_seed = json.loads(path.read_text())["seed"]
    assert deal_seed == installation_key().match_seeds("play:7", 2).deal
    story = [line for line in result.output.splitlines() if str(deal_seed) in line]
    assert len(story) == 1 and "seed 7," in story[0]
    command = shlex.split(story[0].split("replay this match here with: ")[1])
    assert command[:2] == ["arena", "play"]
    again = tmp_path / "b.json"
    replayed = run(*command[1:], "--record", again)
    assert replayed.exit_code == 0, replayed.stderr
    assert json.loads(again.read_text())["moves"] == json.loads(path.read_text())["moves"]


@needs_sandbox
def test_the_replay_of_a_record_says_its_seed_is_derived_and_how_to_replay_it(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(ROOT)   # the bot by a relative path, as an author types it
    first = tmp_path / "a.json"
    result = run("play", "mandala", "--seed", "7", "--bot", "sample_bots/random", "--bot",
                 "greedy", "--record", first, "--quiet")
    assert result.exit_code == 0, result.stderr
    deal_seed = json.loads(first.read_text())["seed"]
    text = run("replay", first)
    assert text.exit_code == 0, text.stderr
    note, = [line for line in text.output.splitlines() if "derived seed" in line]
    assert note.startswith(f"  seed {deal_seed} is the match's derived seed")
    assert "made from --seed 7 " in note and f"(--seed takes 7, not {deal_seed})" in note
    html = run("replay", first, "--format", "html").output
    title = html.split("<title>")[1].split("</title>")[0]
    assert title.endswith(f", derived seed {deal_seed}")
    assert note.strip() == html.split('id="seed">')[1].split("</p>")[0].replace("&#39;", "'")
    # The command shown replays the very match, from any folder.
    command = shlex.split(note.split("replay this match there with: ")[1])
    assert command[:2] == ["arena", "play"] and "--seed" in command
    monkeypatch.chdir(tmp_path)
    again = tmp_path / "b.json"
    replayed = run(*command[1:], "--record", again, "--quiet")
    assert replayed.exit_code == 0, replayed.stderr
    assert json.loads(again.read_text())["moves"] == json.loads(first.read_text())["moves"]
    # The derived seed as --seed is another match: the note is right to say it is not one.
    other = tmp_path / "c.json"
    assert run("play", "mandala", "--seed", deal_seed, "--bot", "random", "--bot", "greedy",
               "--record", other, "--quiet").exit_code == 0
    assert json.loads(other.read_text())["seed"] != deal_seed


@pytest.mark.slow
@needs_sandbox
def test_a_bot_that_takes_most_of_its_start_up_allowance_is_warned_of(tmp_path):
    # Sleeps 3.5 s of an allowance of 10 s: over the third (3.33 s), well inside the limit
    # (6.5 s to spare: 3.5 s was once too few for a loaded CI run's bot check).
    bot = shutil.copytree(ROOT / "tests" / "misbehaving_bots" / "slow_start", tmp_path / "bot")
    (bot / "bot.toml").write_text('name = "slow_start"\ncommand = ["python3", "bot.py", "3.5"]'
                                  '\ngames = ["mandala"]\n')
    for command in (("play", "mandala", "--bot", bot, "--bot", "random", "--quiet"),
                    ("bot", "check", bot)):
        result = run(*command, "--startup-time", "10")
        assert result.exit_code == 0, result.output
        warnings = [line for line in result.stderr.splitlines() if "to start" in line]
        assert warnings, result.stderr
        assert all("more than a third of its start-up allowance of 10 s" in line
                   for line in warnings)
    # A quick bot with a generous allowance is not warned of.
    quick = run("play", "mandala", "--bot", SAMPLE_BOTS / "random", "--bot", "random",
                "--quiet", "--startup-time", "30")
    assert quick.exit_code == 0 and "to start" not in quick.stderr
