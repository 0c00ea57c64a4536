"""The sandbox's errors: it cannot run here at all, or one bot could not be started or ended."""
from __future__ import annotations

from arena.errors import ArenaError


class SandboxUnavailable(ArenaError):
    """bubblewrap is missing or cannot create namespaces on this machine, or no bot could
    run the arena's Python in a sandbox."""

    def __init__(self, detail: str = "bubblewrap (bwrap) is not on PATH",
                 fix: str = "install the Debian package `bubblewrap` (apt-get install "
                            "bubblewrap) or pass --unsafe-no-sandbox to run bots unsandboxed"):
        super().__init__(f"cannot sandbox bots: {detail}; {fix}")


class SandboxError(ArenaError):
    """A bot could not be started or ended as asked."""
