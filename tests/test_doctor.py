"""`arena doctor`: each protection probed on this machine, one line each, exit 1 if one a
league needs is missing; and its probes leave the arena's own process as it was."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import cgroups, doctor

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[1]
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
PROTECTIONS = ["namespaces", "arena's Python", "uid drop", "cgroup memory", "cgroup pids",
               "cgroup cpu", "cgroup cpuacct", "cgroup freezer", "seccomp",
               "user namespaces blocked", "open-files limit"]


def test_the_doctor_prints_one_line_per_protection_and_its_exit_says_if_leagues_are_safe():
    done = subprocess.run([*ARENA, "doctor"], capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    for name in PROTECTIONS:
        assert any(line.startswith(name + " ") and (" enforced " in line or " missing " in line)
                   for line in lines), (name, done.stdout)
    missing = doctor.missing_needed(doctor.protections())
    assert done.returncode == (1 if missing else 0), done.stdout


def test_its_json_agrees_with_what_the_sandbox_uses():
    done = subprocess.run([*ARENA, "doctor", "--json"], capture_output=True, text=True,
                          timeout=120)
    rows = {row["name"]: row for row in json.loads(done.stdout)["protections"]}
    assert list(rows) == PROTECTIONS
    for controller in cgroups.CONTROLLERS:
        expected = "enforced" if controller in cgroups.placement().folders else "missing"
        assert rows[f"cgroup {controller}"]["status"] == expected


def test_a_missing_needed_protection_is_named_with_its_reason_and_exits_1(monkeypatch):
    from click.testing import CliRunner

    from arena.cli import main
    monkeypatch.setattr(cgroups, "placement", lambda: cgroups.Placement(
        missing={name: "not writable here (test)" for name in cgroups.CONTROLLERS}))
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 1
    assert "cgroup memory" in result.output and "not writable here (test)" in result.output
    assert "RLIMIT_AS" in result.output   # says what stands in for the memory cgroup
    assert "missing for leagues: cgroup memory, cgroup pids" in result.output


def test_an_arena_on_a_python_no_sandbox_can_see_is_told_what_to_do(tmp_path):
    # A venv under /tmp (tmp_path is there): every sandbox covers /tmp with its own, so no
    # bot could run it. Every sandboxed command refuses in one line; the doctor says why too.
    assert str(tmp_path).startswith("/tmp/")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "python"), *ARENA[1:], "doctor", "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done
    row = {row["name"]: row for row in json.loads(done.stdout)["protections"]}["arena's Python"]
    assert row["status"] == "missing" and row["needed"], row
    assert row["detail"].startswith(f"the arena runs on a Python in {venv}/bin, under /tmp"), row
    assert row["detail"].endswith("run Arena on a Python (or a venv) outside /tmp and "
                                  "/dev/shm"), row
    rows_here = {row.name: row for row in doctor.protections()}
    assert rows_here["arena's Python"].enforced   # this test's own Python, outside /tmp


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
