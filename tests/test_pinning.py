"""League workers that fill the machine's cores keep each match on one core: the worker, its
bots (which cannot move off it), and the host's load measured on that core alone."""
from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena import hostload
from arena.league.config import LeagueConfig
from arena.league.lifecycle import open_league, run
from arena.league.workers import ProcessPool, pinned_cpus

ROOT = Path(__file__).resolve().parent.parent
PINNED = ROOT / "tests" / "league_bots" / "pinned"
CPUS = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs")


def plan(sandbox: bool = True):
    return type("Plan", (), {"sandbox": sandbox})()


def test_workers_are_pinned_only_when_they_fill_every_core_of_a_sandboxed_league():
    cores = len(CPUS)
    if cores > 1:
        assert pinned_cpus(cores, plan()) == CPUS
        assert pinned_cpus(cores + 1, plan()) == CPUS
        assert pinned_cpus(cores - 1, plan()) is None        # a core is left to others
        assert pinned_cpus(cores, plan(sandbox=False)) is None   # bots could move off it
    assert pinned_cpus(1, plan()) is None   # one worker never fills two cores; one core: moot


@pytest.mark.sandbox
@two_cpus
def test_each_worker_and_its_bots_run_on_a_core_of_their_own(tmp_path):
    bots = []
    for name in ("pa", "pb", "pc"):
        folder = tmp_path / "bots" / name
        folder.mkdir(parents=True)
        for file in ("bot.py", "bot.toml"):
            text = (PINNED / file).read_text()
            (folder / file).write_text(text.replace('name = "pinned"', f'name = "{name}"'))
        bots.append(str(folder))
    config = LeagueConfig(game="mandala", bots=tuple(bots), deals=2, seed=3,
                          time_control={"move_time": 2.0})
    with open_league(tmp_path / "league", config, name="pinning") as league:
        played = run(league, ProcessPool(len(CPUS)))
    assert played == 12
    reports = collections.defaultdict(set)   # worker pid -> the bots' reports
    for log in (tmp_path / "league" / "logs").glob("*.log"):
        for worker, before, after, widened in re.findall(
                r"^(\d+)\.\d+\| pinned: cpus (\[[\d, ]*\]) then (\[[\d, ]*\]), (.*)$",
                log.read_text(), re.MULTILINE):
            reports[worker].add((before, after, widened))
    assert reports, "no bot reported its CPUs"
    cores_of_workers = []
    for worker, seen in reports.items():
        assert len(seen) == 1, f"worker {worker}'s bots saw {seen}"
        before, after, widened = seen.pop()
        assert before == after and widened == "refused 1"   # EPERM: it stays where it is
        cores_of_workers.append(before)
        assert len(json.loads(before)) == 1
    assert len(set(cores_of_workers)) == len(cores_of_workers)   # no two workers share one


_COUNT = """
import subprocess, sys
from arena import hostload
here, other = map(int, sys.argv[1:])
spin = ("import os, sys, time; os.sched_setaffinity(0, {int(sys.argv[1])}); "
        "end = time.monotonic() + 0.5\\nwhile time.monotonic() < end: pass")
hostload.pin(here)
assert hostload.cores() == 1
for cpu in (other, here):
    before = hostload.machine_cpu_seconds()
    subprocess.run([sys.executable, "-c", spin, str(cpu)], check=True, timeout=30)
    print(hostload.machine_cpu_seconds() - before)
"""


@pytest.mark.serial
@two_cpus
def test_a_pinned_arena_counts_the_machine_on_its_own_core():
    """A spinner on another core is not what a bot on this core competes with; one on this
    core is."""
    here, other = CPUS[0], CPUS[1]
    done = subprocess.run([sys.executable, "-c", _COUNT, str(here), str(other)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    elsewhere, same = map(float, done.stdout.split())
    assert elsewhere < 0.2, f"{elsewhere:.3f} s counted of a spinner on another core"
    assert same > 0.4, f"only {same:.3f} s counted of a spinner on this core"


@pytest.mark.parametrize("source", ["cpuacct", "/proc/stat"])
def test_the_counters_of_each_cpu_add_up_to_the_machine_s(monkeypatch, source):
    """What a worker pinned to one CPU reads is that CPU's share of the machine's counter,
    from the root cpuacct's per-CPU counters or from /proc/stat's cpuN lines."""
    if source == "/proc/stat":
        monkeypatch.setattr(hostload, "_cpuacct_root", lambda: None)
    elif hostload._cpuacct_root() is None:
        pytest.skip("no cpuacct hierarchy here")
    every = frozenset(range(os.cpu_count()))
    readers = [hostload._counter(frozenset({cpu})) for cpu in sorted(every)]
    whole = hostload._counter(every)
    for _ in range(3):   # readings a moment apart: they may differ by a tick or two
        total, parts = whole(), sum(read() for read in readers)
        if abs(total - parts) < 0.05:
            break
    assert total > 1 and abs(total - parts) < 0.05, (total, parts)
