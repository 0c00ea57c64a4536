"""League workers that fill the machine's cores keep each match on one core: the worker, its
bots (which cannot move off it), and the host's load measured on that core alone."""
from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import hostload
from arena.league.config import LeagueConfig
from arena.league.lifecycle import open_league, run
from arena.league.workers import ProcessPool, pinned_cpus

ROOT = Path(__file__).resolve().parent.parent
PINNED = ROOT / "tests" / "league_bots" / "pinned"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
CPUS = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs")


def test_workers_are_pinned_only_when_they_fill_every_core_of_a_sandboxed_league():
    cores = len(CPUS)
    if cores > 1:
        assert pinned_cpus(cores, sandbox=True) == CPUS
        assert pinned_cpus(cores + 1, sandbox=True) == CPUS
        assert pinned_cpus(cores - 1, sandbox=True) is None        # a core is left to others
        assert pinned_cpus(cores, sandbox=False) is None   # bots could move off it
    assert pinned_cpus(1, sandbox=True) is None   # one worker never fills two cores; one core: moot


def test_a_lone_worker_is_pinned_only_when_asked():
    # `arena bench league` measures a lone worker pinned beside the default one.
    if len(CPUS) > 1:
        assert pinned_cpus(1, sandbox=True, always=True) == CPUS
        assert pinned_cpus(1, sandbox=False, always=True) is None
    else:
        assert pinned_cpus(1, sandbox=True, always=True) is None   # one core: nothing to choose


def pinned_bots(folder: Path) -> list[str]:
    """Three bots that log their CPUs, and whether they could widen them (see PINNED)."""
    bots = []
    for name in ("pa", "pb", "pc"):
        bot = folder / name
        bot.mkdir(parents=True)
        for file in ("bot.py", "bot.toml"):
            text = (PINNED / file).read_text()
            (bot / file).write_text(text.replace('name = "pinned"', f'name = "{name}"'))
        bots.append(str(bot))
    return bots


def cores_of_workers(logs: Path, cpus_each: int = 1) -> list[str]:
    """The CPUs each worker's bots reported, asserting they were `cpus_each` and that the bots
    could not widen them."""
    reports = collections.defaultdict(set)   # worker pid -> the bots' reports
    for log in logs.glob("*.log"):
        for worker, before, after, widened in re.findall(
                r"^(\d+)\.\d+\| pinned: cpus (\[[\d, ]*\]) then (\[[\d, ]*\]), (.*)$",
                log.read_text(), re.MULTILINE):
            reports[worker].add((before, after, widened))
    assert reports, "no bot reported its CPUs"
    cores = []
    for worker, seen in reports.items():
        assert len(seen) == 1, f"worker {worker}'s bots saw {seen}"
        before, after, widened = seen.pop()
        assert before == after and widened == "refused 1"   # EPERM: it stays where it is
        assert len(json.loads(before)) == cpus_each
        cores.append(before)
    return cores


@pytest.mark.slow   # a league: 3-4 s
@pytest.mark.sandbox
@two_cpus
def test_each_worker_and_its_bots_run_on_a_core_of_their_own(tmp_path):
    config = LeagueConfig(game="mandala", bots=tuple(pinned_bots(tmp_path / "bots")), deals=2,
                          seed=3, time_control={"move_time": 2.0})
    with open_league(tmp_path / "league", config, name="pinning") as league:
        played = run(league, ProcessPool(len(CPUS)))
    assert played == 12
    cores = cores_of_workers(tmp_path / "league" / "logs")
    assert len(set(cores)) == len(cores)   # no two workers share one


@pytest.mark.slow   # a league each: 3 s
@pytest.mark.sandbox
@two_cpus
@pytest.mark.parametrize("pin, cpus", [(True, CPUS[:1]), (False, CPUS[1:])],
                         ids=["--pin", "not pinned: kept apart"])
def test_a_lone_worker_keeps_its_bots_on_one_core_with_pin_and_apart_without(tmp_path, pin,
                                                                              cpus):
    """Pinned, the worker and its bots share one core; not pinned, the worker keeps its own
    threads on the first core and its bots on the others (hostload.keep_apart)."""
    done = subprocess.run(
        ARENA + ["league", "run", "--game", "mandala",
         *(arg for bot in pinned_bots(tmp_path / "bots") for arg in ("--bot", bot)),
         "--deals", "1", "--seed", "3", "--move-time", "2", "--workers", "1",
         *(["--pin"] if pin else []), "--skip-check", "--quiet", "--out", str(tmp_path / "league")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert cores_of_workers(tmp_path / "league" / "logs", len(cpus)) == [str(cpus)]


@pytest.mark.sandbox
@two_cpus
def test_arena_play_runs_its_bots_on_cores_apart_from_its_own(tmp_path):
    bots = pinned_bots(tmp_path / "bots")[:2]
    done = subprocess.run(
        ARENA + ["play", "mandala", "--bot", bots[0], "--bot", bots[1], "--seed", "1",
                 "--logs", str(tmp_path / "logs"), "--quiet"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert cores_of_workers(tmp_path / "logs", len(CPUS) - 1) == [str(CPUS[1:])]


@pytest.mark.sandbox
@two_cpus
def test_a_match_played_in_process_gives_the_process_back_every_cpu(tmp_path):
    """`arena play` called in-process (as a test or a notebook would) keeps its bots apart
    during the match only: afterwards every thread of the caller may run anywhere again."""
    from click.testing import CliRunner

    from arena.cli import main
    bots = pinned_bots(tmp_path / "bots")[:2]
    result = CliRunner().invoke(main, ["play", "mandala", "--bot", bots[0], "--bot", bots[1],
                                       "--seed", "1", "--logs", str(tmp_path / "logs"),
                                       "--quiet"])
    assert result.exit_code == 0, result.output
    assert cores_of_workers(tmp_path / "logs", len(CPUS) - 1) == [str(CPUS[1:])]
    for thread in os.listdir("/proc/self/task"):
        try:
            allowed = os.sched_getaffinity(int(thread))
        except ProcessLookupError:   # ended since it was listed (a bot's log drain, say)
            continue
        assert sorted(allowed) == CPUS, thread


@pytest.mark.slow   # it starts the bench's ten floor processes: 2-3 s
@pytest.mark.sandbox
@two_cpus
def test_a_protocol_bench_that_fails_to_start_its_bot_ends_what_it_started(tmp_path):
    """In-process, a bench whose bot cannot start leaves no floor or pipe child behind and
    gives every thread of the caller every CPU back."""
    from arena.bench.protocol import _Paths
    from arena.sandbox.proctree import processes

    def children() -> set[int]:
        return {pid for pid, ppid, _, _ in processes() if ppid == os.getpid()}
    before = children()
    with pytest.raises(Exception, match="no-such-bot"):
        _Paths("mandala", unsafe=False, bot=tmp_path / "no-such-bot")
    assert children() <= before
    for thread in os.listdir("/proc/self/task"):
        try:
            allowed = os.sched_getaffinity(int(thread))
        except ProcessLookupError:   # ended since it was listed
            continue
        assert sorted(allowed) == CPUS, thread


def test_a_bot_allowed_more_cores_than_are_kept_apart_for_bots_gets_every_core(monkeypatch):
    monkeypatch.setattr(hostload, "_apart", frozenset(CPUS[1:]))
    assert hostload.bot_cpus(len(CPUS) - 1) == frozenset(CPUS[1:])
    assert hostload.bot_cpus(len(CPUS)) == frozenset(CPUS)   # never fewer cores than its quota
    monkeypatch.setattr(hostload, "_apart", None)
    assert hostload.bot_cpus(1) is None   # not kept apart: where the arena runs


def test_pin_with_ray_is_refused_in_one_line():
    done = subprocess.run(ARENA + ["league", "run", "--game", "mandala",
                           "--bot", "random", "--bot", "greedy", "--executor", "ray", "--pin"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "arena: error: --pin applies to local workers: drop it, or use --executor local"]


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
    # The parts are read between two readings of the whole: on a busy machine (tests run
    # beside it) the counters go on meanwhile, so the parts' sum lies between the two, give
    # or take the tick or two by which a CPU's counter lags (one reading of the whole
    # against the parts read after it differed by 5 ticks in two CI runs: 10 allowed).
    for _ in range(3):
        before, parts, after = whole(), sum(read() for read in readers), whole()
        if before - 0.1 < parts < after + 0.1:
            break
    assert before > 1 and before - 0.1 < parts < after + 0.1, (before, parts, after)


@pytest.mark.parametrize("others, waited, overrun, voided", [
    (0.40, 0.30, 0.20, True),    # the others held its core; its threads waited past the overrun
    (0.40, 0.10, 0.20, False),   # ... but it waited less than the bot overran: the bot's
    (0.05, 0.30, 0.20, False),   # its own threads kept it busy (a bot calling its server)
    (0.40, None, 0.20, False),   # its wait unknown: never the host's on a guess
    (None, 0.30, 0.20, False),   # not kept apart: the machine's measure alone
])
def test_an_arena_kept_apart_weighs_its_own_core(others, waited, overrun, voided):
    """A timeout of a bot whose own core was free is the host's only when the others held
    the arena's core (under 75% of it left) and the arena's threads waited the overrun."""
    load = hostload.MoveLoad(wall=0.5, bot_cpu=0.01, others_cpu=0.5, cores=2, bot_cores=1.0,
                             waited=0.0, arena_cpu=0.01, arena_others=others,
                             arena_waited=waited, overrun=overrun)
    assert load.share_left == 1.0 and not load.bot_starved
    assert load.starved is voided and load.to_record()["voided"] is voided


def test_the_wait_of_threads_is_read_and_a_thread_that_ended_gives_none():
    import threading
    own = threading.get_native_id()
    first = hostload.threads_run_queue_wait((own,))
    assert first is not None and first >= 0
    assert hostload.threads_run_queue_wait((own,)) >= first   # a counter
    ended: list[int] = []
    thread = threading.Thread(target=lambda: ended.append(threading.get_native_id()))
    thread.start()
    thread.join()
    deadline = time.monotonic() + 5   # its task ends a moment after Python's join
    while os.path.exists(f"/proc/self/task/{ended[0]}") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hostload.threads_run_queue_wait((own, ended[0])) is None
