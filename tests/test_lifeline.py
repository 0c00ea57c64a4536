"""A helper process's end: it dies with its parent, and its parent hears of its end."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena import lifeline


def test_a_child_still_running_at_the_deadline_is_a_timeout_and_runs_on():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            lifeline.wait(child, 0.05)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_the_wait_gives_the_exit_status_and_a_second_wait_gives_it_again():
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert lifeline.wait(child, 30) == 3
    assert lifeline.wait(child, 0) == 3   # reaped already: no pidfd, the stored status


def test_a_helper_whose_parent_is_another_process_than_named_ends_at_once():
    # The parent named in the variable is gone (its pid is no longer our parent's): the
    # helper was orphaned before its parent-death signal could take hold.
    code = ("import sys; from arena.lifeline import die_with_parent; "
            "sys.exit(0 if die_with_parent('ARENA_TEST_PARENT') else 7)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    named_right = subprocess.run([sys.executable, "-c", code],
                                 env={**env, "ARENA_TEST_PARENT": str(os.getpid())})
    named_wrong = subprocess.run([sys.executable, "-c", code],
                                 env={**env, "ARENA_TEST_PARENT": "1"})
    assert (named_right.returncode, named_wrong.returncode) == (0, 7)
