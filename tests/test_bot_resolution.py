"""One rule turns a `--bot` argument into a bot, for `arena play` and `arena league` alike: a
folder holding a bot.toml wins over a built-in of the same name; `builtin:NAME` is always the
built-in; a folder without a manifest does not hide a built-in."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bots import BotSpec, BuiltinBot, resolve_bot
from arena.cli import main
from arena.errors import ArenaError
from arena.league.config import LeagueError
from arena.league.plan import load_bot

SAMPLE_RANDOM = Path(__file__).parent.parent / "sample_bots" / "random"


@pytest.fixture
def folder_named_random(tmp_path, monkeypatch):
    """A bot folder called `random` in the working directory, whose bot is named `my-random`."""
    folder = tmp_path / "random"
    shutil.copytree(SAMPLE_RANDOM, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = folder / "bot.toml"
    manifest.write_text(manifest.read_text().replace('name = "random"', 'name = "my-random"'))
    monkeypatch.chdir(tmp_path)
    return folder


def test_a_folder_with_a_manifest_wins_over_the_built_in_of_its_name(folder_named_random):
    bot = resolve_bot("random", "mandala")
    assert isinstance(bot, BotSpec) and bot.name == "my-random"
    assert load_bot("random", "mandala").name == "my-random"


def test_builtin_prefix_always_means_the_built_in(folder_named_random):
    assert resolve_bot("builtin:random", "mandala") == BuiltinBot("random")
    assert load_bot("builtin:random", "mandala").source == "builtin:random"


def test_a_folder_without_a_manifest_does_not_hide_the_built_in(tmp_path, monkeypatch):
    (tmp_path / "greedy").mkdir()
    monkeypatch.chdir(tmp_path)
    assert resolve_bot("greedy", "mandala") == BuiltinBot("greedy")


def test_unknown_bots_are_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArenaError, match="unknown bot 'nobody'"):
        resolve_bot("nobody", "mandala")
    with pytest.raises(ArenaError, match="unknown built-in bot 'nobody'"):
        resolve_bot("builtin:nobody", "mandala")
    with pytest.raises(ArenaError, match="has no bot.toml"):
        resolve_bot("empty", "mandala")
    with pytest.raises(LeagueError, match="unknown bot 'nobody'"):
        load_bot("nobody", "mandala")


def test_resolving_a_bot_does_not_import_grpc():
    import subprocess
    import sys
    code = ("import sys; from arena.bots import resolve_bot; resolve_bot('random', 'mandala');"
            "import arena.league.config; print('grpc' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).parent.parent, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.sandbox
def test_play_follows_the_same_rule(folder_named_random, tmp_path):
    record_path = tmp_path / "match.json"
    result = CliRunner().invoke(main, ["play", "mandala", "--seed", "3", "--quiet",
                                       "--bot", "random", "--bot", "builtin:random",
                                       "--record", str(record_path)])
    assert result.exit_code == 0, result.output
    assert json.loads(record_path.read_text())["players"] == ["my-random", "random"]


def test_help_states_the_rule():
    for command in (["play", "--help"], ["league", "run", "--help"]):
        output = CliRunner().invoke(main, command).output
        assert "builtin:NAME" in " ".join(output.split())
