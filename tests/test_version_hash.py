"""A bot's version (the hash of its folder) never follows a link out of the folder: links are
versioned by their text."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from arena.bots import BotSpec, folder_hash

RANDOM = Path(__file__).parent.parent / "sample_bots" / "random"


def test_a_link_out_of_the_folder_is_hashed_by_its_text_not_by_what_it_points_to(tmp_path):
    bot = shutil.copytree(RANDOM, tmp_path / "bot")
    outside = tmp_path / "another-authors-bot.py"
    outside.write_text("secret strategy\n")
    (bot / "strategy.py").symlink_to(outside)
    (bot / "folder-link").symlink_to(tmp_path)   # a linked folder: not walked either
    first = BotSpec.load(bot).version
    outside.write_text("another secret strategy\n")
    assert BotSpec.load(bot).version == first
    (bot / "strategy.py").unlink()
    (bot / "strategy.py").symlink_to(tmp_path / "elsewhere.py")
    assert BotSpec.load(bot).version != first   # the link's text is part of the version


def test_a_link_to_a_device_that_never_ends_is_hashed_at_once(tmp_path):
    bot = shutil.copytree(RANDOM, tmp_path / "bot")
    (bot / "data.bin").symlink_to("/dev/zero")
    os.mkfifo(bot / "pipe")   # not a file: left out, never opened
    started = time.monotonic()
    folder_hash(bot)
    assert time.monotonic() - started < 5


def test_a_folder_without_links_keeps_its_version(tmp_path):
    bot = shutil.copytree(RANDOM, tmp_path / "bot")
    assert folder_hash(bot) == folder_hash(RANDOM.resolve())
    (bot / "notes.txt").write_text("changed\n")
    assert folder_hash(bot) != folder_hash(RANDOM.resolve())
