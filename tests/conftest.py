"""Fixtures shared by the test files."""
from __future__ import annotations

import os
import tempfile

import pytest

from arena import sandbox
from arena.bots import BotHost


# The tests' own installation key (arena.keys), in a folder of theirs: they never make or
# read the key of the machine's user, and subprocesses they start inherit it.
_KEY_DIR = tempfile.TemporaryDirectory(prefix="arena-test-key-")
os.environ["ARENA_KEY_FILE"] = os.path.join(_KEY_DIR.name, "installation.key")


@pytest.fixture(scope="module")
def host():
    """A bot host (gRPC server and sandboxed bot pool) shared by one test module."""
    if not sandbox.available():
        pytest.skip("bubblewrap cannot run here")
    with BotHost() as bot_host:
        yield bot_host
