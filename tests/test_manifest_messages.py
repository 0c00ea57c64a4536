"""Manifest messages an author sees through the CLI: every problem of a bot.toml at once, in
one line, and one warning line per key the arena does not read (the bot still passes its
check)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main

RANDOM_BOT = Path(__file__).resolve().parent.parent / "sample_bots" / "random" / "bot.py"


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def bot(tmp_path: Path, manifest: str, code: str = "") -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text(code)
    return folder


def test_every_manifest_problem_is_reported_at_once_in_one_line(tmp_path):
    folder = bot(tmp_path, 'name = ""\ncommand = "python3 bot.py"\ngames = ["chess", "go"]\n')
    result = run("play", "mandala", "--bot", folder, "--bot", "random")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "3 problems: " in lines[0]
    for says in ("`name` must be a non-empty string", "`command` must be a list of strings",
                 "unknown games 'chess', 'go'"):
        assert says in lines[0]


def test_unknown_keys_are_warned_one_line_each_and_the_bot_still_plays(tmp_path):
    folder = bot(tmp_path, 'name = "quiet"\ncommand = ["python3", "bot.py"]\n'
                           'games = ["mandala"]\ngame = "mandala"\nauthor = "me"\n',
                 RANDOM_BOT.read_text())   # a bot that plays: the keys are only warned of
    result = run("bot", "check", folder, "--game", "mandala")
    assert result.exit_code == 0, result.output
    assert "quiet: all checks passed" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "unknown key" in line]
    assert len(warnings) == 2, result.stderr   # once each, however often the manifest is read
    assert any("`game` is ignored (did you mean `games`?" in line for line in warnings)
    assert any("`author` is ignored (the keys are name, command, games)" in line
               for line in warnings)
    assert all(line.startswith("arena: ") for line in warnings)
