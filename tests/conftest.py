"""Fixtures shared by the test files."""
from __future__ import annotations

import pytest

from arena import sandbox
from arena.bots import BotHost


@pytest.fixture(scope="module")
def host():
    """A bot host (gRPC server and sandboxed bot pool) shared by one test module."""
    if not sandbox.available():
        pytest.skip("bubblewrap cannot run here")
    with BotHost() as bot_host:
        yield bot_host
