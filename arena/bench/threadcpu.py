"""Where a decision's CPU goes, thread by thread: the CPU time of each thread, exact to the
nanosecond (field 1 of /proc/TID/schedstat, what the scheduler charged it), summed by the
part each thread plays.

The arena's threads are told apart by their names: the thread that asks (a match runner's;
the benchmark's own), each bot's gRPC stream handler (`arena-bot_N`, arena.bots.process),
each bot server's poller (grpc's `_serve` loop, which reads every event off the server's
completion queue in Python), each bot's log drain (`sandbox-log-PID`), and the rest (gRPC's
own threads in C: timers, the event engine). A bot's threads are its processes' main threads
(the one that runs a Python bot's code) and the others (gRPC's poller among them).
"""
from __future__ import annotations

import os
import threading
from collections import Counter
from typing import Iterable

ASKING = "asking thread (builds the act, waits, checks the move, holds the bot)"
HANDLER = "gRPC stream handlers (send the act, read the reply)"
POLLER = "gRPC server pollers (events off the completion queue, in Python)"
LOG_DRAIN = "log drains"
OTHER = "other threads (gRPC core's, in C)"
BOT_MAIN = "bot: main threads (the SDK, its asyncio loop, the bot's code)"
BOT_OTHER = "bot: other threads (gRPC's poller)"
ROLES = (ASKING, HANDLER, POLLER, LOG_DRAIN, OTHER, BOT_MAIN, BOT_OTHER)   # the order shown


def thread_cpu(tids: Iterable[int]) -> dict[int, float]:
    """CPU seconds so far of each of `tids` that is alive (and has scheduler statistics)."""
    seconds: dict[int, float] = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/schedstat", "rb") as stat:
                seconds[tid] = int(stat.read().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):
            pass   # gone meanwhile, or a kernel without schedstats
    return seconds


def process_cpu(pid: int) -> float:
    """CPU seconds so far of process `pid`'s live threads (those that ended: not counted)."""
    try:
        tids = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return 0.0   # gone
    return sum(thread_cpu(tids).values())


def arena_roles(asking: threading.Thread) -> dict[int, str]:
    """Every thread of this process by id, with its part (`asking` is the one that asks)."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    roles = {}
    for tid in map(int, os.listdir("/proc/self/task")):
        name = names.get(tid, "")
        if tid == asking.native_id:
            roles[tid] = ASKING
        elif name.startswith("arena-bot"):
            roles[tid] = HANDLER
        elif name.endswith("(_serve)"):
            roles[tid] = POLLER
        elif name.startswith("sandbox-log"):
            roles[tid] = LOG_DRAIN
        else:
            roles[tid] = OTHER
    return roles


def bot_roles(tids: Iterable[int]) -> dict[int, str]:
    """A bot's threads by id (host ids), each a main thread of its process or another."""
    roles = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/status") as status:
                tgid = next(int(line.split()[1]) for line in status
                            if line.startswith("Tgid:"))
        except (OSError, StopIteration, ValueError):
            continue   # gone meanwhile
        roles[tid] = BOT_MAIN if tgid == tid else BOT_OTHER
    return roles


class RoleClock:
    """CPU seconds by role, counted over the spans between `start` and `stop`."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self._roles: dict[int, str] = {}
        self._before: dict[int, float] = {}

    def start(self, roles: dict[int, str]) -> None:
        self._roles = roles
        self._before = thread_cpu(roles)

    def stop(self) -> None:
        """Adds what each thread used since `start` (a thread that ended meanwhile: lost)."""
        for tid, now in thread_cpu(self._roles).items():
            self.seconds[self._roles[tid]] += now - self._before.get(tid, 0.0)
