"""Reads the host's process table from /proc: who runs, under which uid, started when.

The scan needs file descriptors, and a flood of connections can leave the arena with none: a
few descriptors are held in reserve and given back for the scan's retry when the scan meets
EMFILE, so killing a bot still works when the arena is out of descriptors.
"""
from __future__ import annotations

import errno
import os
import threading
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

_RESERVE_SIZE = 8
_reserve: list[int] = []
_reserve_lock = threading.RLock()   # a retried scan reads stat files through it again


def _fill_reserve() -> None:
    while len(_reserve) < _RESERVE_SIZE:
        try:
            _reserve.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            return


_fill_reserve()


def _with_reserve(scan: Callable[[], T]) -> T:
    """Runs `scan`; when it runs out of descriptors, runs it again with the reserve freed."""
    try:
        return scan()
    except OSError as error:
        if error.errno not in (errno.EMFILE, errno.ENFILE):
            raise
    with _reserve_lock:
        while _reserve:
            os.close(_reserve.pop())
        try:
            return scan()
        finally:
            _fill_reserve()


def processes() -> list[tuple[int, int, int, int]]:
    """(pid, ppid, uid, starttime) of every live process (zombies excluded)."""
    return _with_reserve(lambda: list(_scan()))


def _scan() -> Iterator[tuple[int, int, int, int]]:
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            fields = stat_fields(pid)
            if fields is None:
                continue
            _, ppid, start = fields
            try:
                uid = os.stat(f"/proc/{pid}").st_uid
            except FileNotFoundError:
                continue
            yield pid, ppid, uid, start


def running(pid: int) -> bool:
    """True while `pid` is a live process; a zombie (dead, awaiting its reaper) is not."""
    return stat_fields(pid) is not None


def stat_fields(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of a live, non-zombie process; None when gone or a zombie."""
    text = _read_stat(pid)
    if text is None:
        return None
    # The command name may hold spaces and parentheses: the fields follow the last ')'.
    fields = text[text.rindex(")") + 2:].split()
    state = fields[0]
    if state in ("Z", "X", "x"):
        return None
    return state, int(fields[1]), int(fields[19])


def cpu_ticks(pid: int) -> int:
    """User plus system CPU time of `pid` in clock ticks (0 when it is gone)."""
    text = _read_stat(pid)
    if text is None:
        return 0
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def _read_stat(pid: int) -> str | None:
    return _with_reserve(lambda: _read_stat_once(pid))


def _read_stat_once(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().decode(errors="replace")
    except OSError as error:
        if error.errno in (errno.EMFILE, errno.ENFILE):
            raise
        return None
