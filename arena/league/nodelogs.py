"""Bot logs of a Ray node, brought back to the server with each match.

On a node, an actor's bots write their logs into a folder of the actor's own, under the
node's data folder (arena.league.bundles). After each match the actor collects what every
log gained since it last looked (`LogShipper.collect`, whole lines: the drain writes nothing
else) and returns it with the match; the server appends it to its own log of that bot version
(`append_logs`), the one file its author reads through the service. The server stays the only
writer of what authors read, and keeps each log under its cap however many nodes append to
it (each node's file is capped by its drain, but a version plays on many actors).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Mapping

from arena.bots.process import DEFAULT_LOG_CAP

TRUNCATED = "[arena: log truncated at {cap} bytes on the server; later output discarded]\n"


class LogShipper:
    """An actor's log folder on its node, and how much of each log was shipped already."""

    def __init__(self, node_data: Path):
        parent = node_data / "logs"
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _remove_stale(parent)
        self.folder = Path(tempfile.mkdtemp(prefix=f"actor-{os.getpid()}-", dir=parent))
        self.shipped: dict[Path, int] = {}

    def collect(self) -> dict[str, bytes]:
        """What each log gained since the last call, by its name in the folder."""
        gained = {}
        for path in self.folder.rglob("*.log"):
            done = self.shipped.get(path, 0)
            with open(path, "rb") as log:
                log.seek(done)
                data = log.read()
            if data:
                gained[path.relative_to(self.folder).as_posix()] = data
                self.shipped[path] = done + len(data)
        return gained

    def close(self) -> None:
        """Removes the folder: what it held was shipped (or lost with its match)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _remove_stale(parent: Path) -> None:
    """Removes the log folders of actors no longer running on this node (killed before they
    could remove their own): what they held was shipped, or lost with its match."""
    for folder in parent.glob("actor-*-*"):
        pid = folder.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


def append_logs(folder: Path, logs: Mapping[str, bytes], cap: int = DEFAULT_LOG_CAP) -> None:
    """Appends logs a node shipped to the server's logs in `folder`, each kept under `cap`
    bytes (cut after a whole line, with one note); a name that would lead out of `folder`
    is ignored (names are the server's own log names, but they crossed the network)."""
    for name, data in logs.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not name.endswith(".log"):
            continue
        path = folder.joinpath(*relative.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as log:
            room = cap - log.tell()
            if room <= 0:
                continue
            if len(data) > room:
                data = data[:data.rfind(b"\n", 0, room) + 1] + TRUNCATED.format(cap=cap).encode()
            log.write(data)
