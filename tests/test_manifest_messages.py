"""Manifest messages an author sees through the CLI: every problem of a bot.toml at once, in
one line, and one warning line per key the arena does not read (the bot still passes its
check)."""
from __future__ import annotations

import os
import subprocess
import sys
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


def test_a_manifest_that_is_no_plain_file_or_too_big_is_refused_in_one_line(tmp_path):
    # A link (to /dev/zero: endless; to another user's file), a pipe that never ends, a
    # huge or too deeply nested file: each one line, at once, nothing read past the folder.
    cases = {"a link": lambda path: path.symlink_to("/dev/zero"),
             "a pipe": lambda path: os.mkfifo(path),
             "too big": lambda path: path.write_text("# " + "x" * 70_000 + "\n"),
             "too deep": lambda path: path.write_text("a = " + "[" * 5000 + "]" * 5000)}
    for case, make in cases.items():
        folder = tmp_path / case.replace(" ", "-")
        folder.mkdir()
        make(folder / "bot.toml")
        result = run("play", "mandala", "--bot", folder, "--bot", "random")
        assert result.exit_code == 2, (case, result.output)
        assert result.output.startswith("arena: error: cannot read ")
        assert result.output.count("\n") == 1, (case, result.output)


def test_an_unknown_key_is_shown_as_text_not_as_a_terminal_escape(tmp_path):
    folder = bot(tmp_path, '"\\u001b]0;PWNED\\u0007\\r\\nforged" = 1\nname = "b"\n'
                           'command = ["python3", "bot.py"]\ngames = ["mandala"]\n')
    result = run("play", "mandala", "--bot", folder, "--bot", "random", "--seed", "1")
    warning = next(line for line in result.output.splitlines() if "unknown key" in line)
    assert "\\x1b]0;PWNED\\x07\\r\\nforged" in warning and "\x1b" not in result.output


def test_a_bot_folder_is_hashed_without_holding_its_files_in_memory(tmp_path):
    # A 384 MiB sparse file under a 256 MiB address-space limit: read whole, it could not be.
    folder = bot(tmp_path, 'name = "big"\ncommand = ["python3", "bot.py"]\n'
                           'games = ["mandala"]\n')
    with open(folder / "big.bin", "wb") as big:
        big.truncate(3 << 27)
    code = ("import resource, sys; from pathlib import Path\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1 << 28, 1 << 28))\n"
            "from arena.bots.manifest import folder_hash\n"
            "print(folder_hash(Path(sys.argv[1])))\n")
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and len(done.stdout.strip()) == 12, done.stderr
