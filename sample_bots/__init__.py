"""The sample bots (one folder each), installed with Arena as package data so that the
benchmarks find them in any install: `sample_bot("random")`.

Each folder is a complete bot (bot.toml and its code); this file is not part of any bot.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_bot(name: str) -> Path:
    """The folder of sample bot `name` (`random`, `greedy`, `first`)."""
    folder = Path(str(resources.files(__name__))) / name
    if not (folder / "bot.toml").is_file():
        raise FileNotFoundError(f"no sample bot {name!r} in {folder.parent}")
    return folder
