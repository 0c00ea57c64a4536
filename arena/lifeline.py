"""A helper process's tie to the arena process that started it: it dies with it.

League workers and the protocol bench's floor processes call `die_with_parent` first thing,
so that a `kill -9` of their parent (which runs no clean-up) takes them too.
"""
from __future__ import annotations

import ctypes
import os
import signal


def die_with_parent(variable: str) -> bool:
    """Asks Linux to SIGKILL this process when its parent dies; False when the parent is gone
    already (before that took hold), so the caller ends at once. `variable` names the
    environment variable in which the parent left its pid."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):   # not Linux: workers still stop at end of input
        pass
    return os.getppid() == int(os.environ.get(variable, os.getppid()))
