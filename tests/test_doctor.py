"""`arena doctor`'s probes run inside the arena's own process: they must leave it as it was."""
from __future__ import annotations

import os
import sqlite3

import pytest

from arena import sandbox
from arena.sandbox import doctor

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap cannot run here")


def test_the_probes_leave_every_open_descriptor_of_the_arena_alone(tmp_path):
    # A league probes the protections with its database open (it held the lowest free
    # descriptor, often 3): the seccomp probe once put its pipe on descriptor 3, closing the
    # database under SQLite ("disk I/O error" at the next write).
    doctor._bwrap_fails.cache_clear()
    database = sqlite3.connect(tmp_path / "league.sqlite", isolation_level=None)
    database.execute("CREATE TABLE t (x)")
    opened = {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in map(int, os.listdir("/proc/self/fd"))
              if os.path.exists(f"/proc/self/fd/{fd}")}
    rows = doctor.protections()
    assert {row.name for row in rows} >= {"seccomp", "namespaces"}
    for fd, target in opened.items():
        assert os.readlink(f"/proc/self/fd/{fd}") == target, fd
    database.execute("BEGIN IMMEDIATE")
    database.execute("INSERT INTO t VALUES (1)")
    database.execute("COMMIT")
