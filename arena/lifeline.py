"""The ends of the arena's helper processes: each dies with the arena process that started
it, which hears of its end at once.

League workers and the protocol bench's floor processes call `die_with_parent` first thing,
so that a `kill -9` of their parent (which runs no clean-up) takes them too. `wait` waits for
a child's end with a deadline as promptly as without one (subprocess polls, sleeping up to
50 ms at a time: paid at every league's end and every bot's).
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess


def die_with_parent(variable: str) -> bool:
    """Asks Linux to SIGKILL this process when its parent dies; False when the parent is gone
    already (before that took hold), so the caller ends at once. `variable` names the
    environment variable in which the parent left its pid. Linux sends it when the parent
    *thread* that started this process ends: the parent starts it from a thread that lives
    as long as it needs the process (a league's main thread, the service's match player)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):   # not Linux: workers still stop at end of input
        pass
    return os.getppid() == int(os.environ.get(variable, os.getppid()))


def wait(process: subprocess.Popen, timeout: float) -> int:
    """`process.wait(timeout)`, woken by the exit itself (a pidfd) rather than by polling;
    subprocess.TimeoutExpired after `timeout` seconds."""
    if process.returncode is None:
        try:
            pidfd = os.pidfd_open(process.pid)
        except (OSError, AttributeError):   # reaped already, or no pidfds (Linux < 5.3)
            return process.wait(timeout)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            poller.poll(max(0.0, timeout) * 1000)
        finally:
            os.close(pidfd)
    return process.wait(0)
