"""Temporary folders of one arena process, each with a file naming its owner (pid and start
time), so that those of a process that died without removing them (`kill -9`, the OOM
killer, a Ray actor killed) are found and removed by the next one that makes such a folder:
the sandbox's /etc (`mounts.etc_folder`), a bot host's sockets and temporary logs
(`arena.bots.host`). Names stay short: a Unix socket's path may not pass 107 characters."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from arena.sandbox.proctree import stat_fields

OWNER_FILE = ".arena-owner"
PREFIX = "arena-"   # every such folder's name starts with it
UNOWNED_GRACE = 60.0
"""Seconds after which an empty folder of such a name without its owner file is an orphan:
its process was killed between making it and naming its owner, or while removing it. (It
is written a moment after the folder is made: no folder is still being made after this.)"""
_MADE_NAME = re.compile(r"arena-(?:[a-z]+-)?[a-z0-9_]{8}")   # PREFIX, a kind, mkdtemp's 8


def folder_of_this_process(prefix: str = PREFIX, sweep: bool = True) -> Path:
    """A new private folder (`prefix` starting with PREFIX) owned by this process, made after
    removing every such folder whose owner is gone (unless `sweep` is False: the caller just
    did, making another)."""
    assert prefix.startswith(PREFIX), prefix
    if sweep:
        remove_orphans()
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    (folder / OWNER_FILE).write_text(_identity(os.getpid()) or "")
    return folder


LEGACY_ETC = "arena-etc-"
"""The sandbox's /etc folders of earlier versions, named `arena-etc-PID-XXXXXXXX` without an
owner file: theirs is the pid in the name."""


def remove_orphans() -> None:
    """Removes this user's folders `folder_of_this_process` made for processes that are
    gone. A folder without its owner file, being made or made otherwise, is left alone, but
    for an earlier version's /etc folder, whose name gives its owner's pid, and an empty one
    named as this module names them and older than UNOWNED_GRACE."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            mine = folder.lstat().st_uid == os.geteuid() and folder.is_dir()
            owner = (folder / OWNER_FILE).read_text() if mine else ""
        except FileNotFoundError:
            owner = _legacy_owner(folder)
            if not owner:
                _remove_if_unowned(folder)
                continue
        except OSError:
            continue
        pid = owner.partition(" ")[0]
        if pid.isdigit() and _identity(int(pid)) != owner:
            shutil.rmtree(folder, ignore_errors=True)


def _remove_if_unowned(folder: Path) -> None:
    """Removes `folder` if it is empty, named as `folder_of_this_process` names them and
    older than UNOWNED_GRACE (rmdir: a folder with anything in it stays)."""
    try:
        if (_MADE_NAME.fullmatch(folder.name)
                and time.time() - folder.lstat().st_mtime > UNOWNED_GRACE):
            folder.rmdir()
    except OSError:
        pass   # not empty, or gone meanwhile


def _legacy_owner(folder: Path) -> str:
    """"PID" of an earlier version's /etc folder whose process is gone, else "" (a pid alive
    now may be its owner still: kept, as before)."""
    pid, dash, _ = folder.name[len(LEGACY_ETC):].partition("-")   # new names have no dash
    if (folder.name.startswith(LEGACY_ETC) and dash and pid.isdigit()
            and _identity(int(pid)) is None):
        return pid
    return ""


def _identity(pid: int) -> str | None:
    """"PID STARTTIME" of a live process (a pid used again is another process), else None."""
    fields = stat_fields(pid)
    return None if fields is None else f"{pid} {fields[2]}"
