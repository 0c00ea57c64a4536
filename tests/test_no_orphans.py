"""Nothing of an arena outlives it: however an arena process ends (normal end, SIGTERM, kill -9
of `arena play` or of a league, kill -9 of one of its workers, the end of a league on Ray;
the service's are in test_serve_life.py), its bot processes, frozen or not, and
their cgroups are gone within seconds, ended by the process's reaper; and if the reaper is
killed too, the next arena command ends them and says so in one line.

Bot processes and cgroups are counted for real (tests/orphans.py): the bot cgroups named after
the arena's own pids (`<pid>-<n>` under the `arena` folders), and the pids that were in them.
"""
from __future__ import annotations

import os
import signal
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.bots import BotHost
from arena.sandbox import proctree, reaper, scratch
from orphans import (GONE_WITHIN, alive, assert_all_gone, bot_cgroups, folders_of,
                     needs_freezer, ray_folders_of, tree, wait_for_frozen_bots)

pytestmark = pytest.mark.sandbox

HERE = Path(__file__).parent
SLOW = HERE / "lifecycle_bots" / "slow"
HEAVY = HERE / "lifecycle_bots" / "heavy"
RANDOM = HERE.parent / "sample_bots" / "random"


def start(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from arena.cli import main; main()", *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def play(tmp_path: Path, *bots: Path) -> subprocess.Popen:
    argv = ["play", "mandala", "--move-time", "5", "--quiet", "--record",
            str(tmp_path / "match.json")]
    for bot in bots:
        argv += ["--bot", str(bot)]
    return start(*argv)


@needs_freezer
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill -9", "SIGTERM"])
def test_arena_play_killed_while_a_bot_is_frozen_leaves_no_bot(tmp_path, how):
    arena = play(tmp_path, SLOW, HEAVY)
    owners, groups, pids = wait_for_frozen_bots(arena, 2)
    arena.send_signal(how)
    arena.wait(timeout=30)
    assert_all_gone(owners, pids)


@needs_freezer
@pytest.mark.serial   # another test's arena would remove them first
def test_the_temporary_folders_of_a_killed_arena_are_removed_by_the_next(tmp_path):
    arena = play(tmp_path, SLOW, HEAVY)
    owners, groups, pids = wait_for_frozen_bots(arena, 2)
    arena.kill()
    arena.wait(timeout=30)
    assert_all_gone(owners, pids)
    left = folders_of(arena.pid)   # its bots' sockets and its sandbox's /etc
    assert len(left) == 2 and any(name.startswith("arena-etc-") for name in left), left
    with BotHost():   # the next arena's: no bot started, its own folders removed at close
        pass
    assert folders_of(arena.pid) == []


@pytest.mark.slow
@needs_freezer
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill -9", "SIGTERM"])
def test_a_league_killed_leaves_no_bot(tmp_path, how):
    arena = start("league", "run", "--game", "mandala", "--bot", str(SLOW), "--bot", str(HEAVY),
                  "--bot", str(RANDOM), "--deals", "4", "--seed", "1", "--workers", "2",
                  "--move-time", "5", "--quiet", "--skip-check", "--out", str(tmp_path / "lg"))
    owners, groups, pids = wait_for_frozen_bots(arena, 4)
    arena.send_signal(how)
    arena.wait(timeout=30)
    assert_all_gone(owners | tree(arena.pid), pids)


@pytest.mark.slow
@needs_freezer
def test_a_league_worker_killed_with_kill_9_leaves_no_bot_and_the_league_goes_on(tmp_path):
    """(A Ray actor killed so: test_ray_league.py, which checks what the league stores too.)"""
    # One deal, both seatings: the kill lands in the first match, the new worker plays both.
    arena = start("league", "run", "--game", "mandala", "--bot", str(SLOW), "--bot", str(RANDOM),
                  "--deals", "1", "--seed", "1", "--workers", "1", "--move-time", "5",
                  "--quiet", "--skip-check", "--out", str(tmp_path / "lg"))
    try:
        owners, groups, pids = wait_for_frozen_bots(arena, 2, timeout=180)
        worker = next(int(name.partition("-")[0]) for name in groups)
        assert worker != arena.pid   # the bots belong to the worker process
        assert worker in tree(arena.pid)   # the league's own
        os.kill(worker, signal.SIGKILL)
        assert_all_gone({worker}, pids)
        assert arena.wait(timeout=300) == 0, arena.stderr.read()
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()


def reaper_of(arena_pid: int) -> int:
    found = reaper.reapers().get(arena_pid)
    assert found is not None, f"arena process {arena_pid} has no reaper"
    assert found not in tree(arena_pid)   # no child of the arena: it survives what ends those
    return found


@needs_freezer
@pytest.mark.serial   # any other arena command would end these bots first
def test_bots_left_when_the_reaper_dies_too_are_ended_by_the_next_command(tmp_path):
    arena = play(tmp_path, SLOW, HEAVY)
    owners, groups, pids = wait_for_frozen_bots(arena, 2)
    os.kill(reaper_of(arena.pid), signal.SIGKILL)
    # A held bot (1 ms of CPU a second) dies of its sandbox's end by itself, slowly (as
    # slowly as freeing its memory takes at that rate); a frozen one never does: the bots are
    # frozen here, as the arena freezes them where there is no cpu cgroup.
    for folders in groups.values():
        for folder in folders:
            if (folder / "freezer.state").exists():
                (folder / "freezer.state").write_text("FROZEN")
    arena.kill()
    arena.wait(timeout=30)
    time.sleep(0.3)
    # The control: with neither the arena nor its reaper, the frozen bot stays (until any
    # arena command starts: none of this test's does, but another's on this machine might).
    assert alive(pids) and bot_cgroups(owners), "the frozen bots died without the reaper"
    doctor = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()",
                             "doctor"], capture_output=True, text=True, timeout=120)
    assert_all_gone(owners, pids, within=0.5)   # already gone when the command is done
    swept = [line for line in doctor.stderr.splitlines() if "left by arena process" in line]
    assert len(swept) == 1, doctor.stderr
    assert str(arena.pid) in swept[0] and "which are gone" in swept[0]
    assert "leftover bots: ended" in doctor.stdout and str(arena.pid) in doctor.stdout


def test_a_match_that_ends_normally_leaves_no_bot_and_its_reaper_ends(tmp_path):
    arena = play(tmp_path, RANDOM, RANDOM)
    deadline = time.monotonic() + 60
    watcher = None
    while watcher is None and time.monotonic() < deadline and arena.poll() is None:
        try:
            watcher = reaper_of(arena.pid)
        except AssertionError:
            time.sleep(0.02)
    assert arena.wait(timeout=120) == 0, arena.stderr.read()
    assert_all_gone({arena.pid}, set())
    if watcher is not None:   # it watched the arena, and ends with it
        deadline = time.monotonic() + GONE_WITHIN
        while proctree.running(watcher) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not proctree.running(watcher)


@needs_freezer
@pytest.mark.slow   # Ray starts in seconds
@pytest.mark.ray
def test_the_end_of_a_league_on_ray_leaves_no_bot_and_no_ray_folder(tmp_path):
    """The actors (in the league's process tree: its own Ray instance) end their bots when
    the run ends, frozen ones included; Ray's files went to a folder of the league's, which
    goes with it."""
    arena = start("league", "run", "--game", "mandala", "--bot", str(SLOW), "--bot", str(HEAVY),
                  "--deals", "1", "--seed", "1", "--workers", "1", "--move-time", "5",
                  "--quiet", "--skip-check", "--executor", "ray", "--out", str(tmp_path / "lg"))
    try:
        owners, groups, pids = wait_for_frozen_bots(arena, 2, timeout=180)
        assert arena.pid not in {int(name.partition("-")[0]) for name in groups}   # an actor's
        owners |= tree(arena.pid)
        ray_folders = ray_folders_of(arena.pid)
        assert len(ray_folders) == 1 and list(ray_folders[0].glob("session_*/sockets")), \
            folders_of(arena.pid)   # Ray's sockets and logs are there, not in /tmp/ray
        assert arena.wait(timeout=600) == 0, arena.stderr.read()
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
    assert_all_gone(owners, pids)
    assert not ray_folders[0].exists()


@needs_freezer
@pytest.mark.slow   # Ray starts in seconds
@pytest.mark.ray
def test_a_league_on_ray_killed_with_kill_9_leaves_no_ray_process_and_no_bot(tmp_path):
    """Ray ends most of its processes with the league that started it; its agents would
    outlive it by up to a minute (they first tell its GCS, gone too): the league's reaper
    of Ray's folder ends every process holding a file there, and removes it."""
    arena = start("league", "run", "--game", "mandala", "--bot", str(SLOW), "--bot", str(HEAVY),
                  "--deals", "1", "--seed", "1", "--workers", "1", "--move-time", "5",
                  "--quiet", "--skip-check", "--executor", "ray", "--out", str(tmp_path / "lg"))
    try:
        owners, groups, pids = wait_for_frozen_bots(arena, 2, timeout=180)
        ray_processes = tree(arena.pid) - {arena.pid}   # GCS, raylet, agents, the actor
        owners |= ray_processes
        folder, = ray_folders_of(arena.pid)
        arena.kill()
        arena.wait(timeout=30)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
    assert_all_gone(owners, pids | ray_processes)
    deadline = time.monotonic() + GONE_WITHIN   # removed once the reaper's scan finds none
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not folder.exists()


# An arena stand-in that, like the sandbox's spawn, hands a process its bot cgroup as a
# descriptor of `cgroup.procs` (the in-sandbox init would write itself into it): until then
# that process is in no bot cgroup, as bwrap and its child are while a sandbox starts.
STARTING_SANDBOX = """
import os, subprocess, sys, time
from arena.sandbox import reaper
folder = sys.argv[1]
group = os.path.join(folder, f"{os.getpid()}-0")
os.mkdir(group)
reaper.watch([folder])
descriptor = os.open(os.path.join(group, "cgroup.procs"), os.O_WRONLY)
starting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                            pass_fds=[descriptor], start_new_session=True)
os.close(descriptor)
print(starting.pid, flush=True)
time.sleep(120)
"""

# A bystander that holds a file open for reading (and works in its folder) while a reaper
# scans for what writes there: a sweep counting a bot's processes, another arena removing a
# dead arena's folder (seen 2026-12-06: such a league's workers were killed mid-league).
READING = """
import os, sys, time
descriptor = os.open(sys.argv[1], os.O_RDONLY)
os.chdir(os.path.dirname(sys.argv[1]))
print("reading", flush=True)
time.sleep(120)
"""


def reader_of(path: Path) -> subprocess.Popen:
    reader = subprocess.Popen([sys.executable, "-c", READING, str(path)],
                              stdout=subprocess.PIPE, text=True)
    assert reader.stdout.readline() == "reading\n"
    return reader


def test_a_sandbox_still_starting_when_its_arena_is_killed_is_ended_by_its_reaper():
    # Seen once: a bwrap child stuck in its start-up when its arena (a Ray actor) was
    # killed slept on for hours, outside every cgroup, holding the bot's cgroups.
    from arena.sandbox import cgroups
    if not cgroups.placement().folders:
        pytest.skip(f"no cgroups for bots here: {cgroups.placement().missing}")
    _, folder = next(iter(cgroups.placement().folders.values()))
    arena = subprocess.Popen([sys.executable, "-c", STARTING_SANDBOX, str(folder)],
                             stdout=subprocess.PIPE, text=True)
    starting = int(arena.stdout.readline())
    group = folder / f"{arena.pid}-0"
    reader = reader_of(group / "cgroup.procs")   # counting the bot's processes
    try:
        assert alive({starting}) and str(starting) not in (group / "cgroup.procs").read_text()
        assert_reaped_but_the_reader(arena, starting, group, reader)
    finally:
        end_own(reader, starting)
        if group.exists():
            group.rmdir()


def assert_reaped_but_the_reader(arena: subprocess.Popen, process: int, made: Path,
                                 reader: subprocess.Popen) -> None:
    """Kills an arena stand-in: within GONE_WITHIN its reaper ends `process` (the arena's)
    and removes `made` (its cgroup or folder), and leaves `reader` be (it only reads there)."""
    arena.kill()
    arena.wait()
    deadline = time.monotonic() + GONE_WITHIN
    while (alive({process}) or made.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive({process}), "a process of the arena's outlived it"
    assert not made.exists()
    assert reader.poll() is None, f"the reaper killed a process reading {made}"


def end_own(reader: subprocess.Popen, process: int) -> None:
    """Ends what a test started, by pid: the reader, and `process` if it is still alive."""
    reader.kill()
    reader.wait()
    if alive({process}):
        os.kill(process, signal.SIGKILL)


# An arena stand-in with a folder of its own, watched as one for its Ray (`watch_folder`):
# a child of its writes a log there, as Ray's processes do.
WATCHING_A_FOLDER = """
import subprocess, sys, time
from arena.sandbox import reaper, scratch
folder = scratch.folder_of_this_process("arena-ray-")
reaper.watch_folder(str(folder))
(folder / "log").write_text("")
writing = subprocess.Popen([sys.executable, "-c", "import sys, time; log = open(sys.argv[1], 'a');"
                            " print(flush=True); time.sleep(120)", str(folder / "log")],
                           stdout=subprocess.PIPE, start_new_session=True)
writing.stdout.readline()   # its log is open
print(folder, writing.pid, flush=True)
time.sleep(120)
"""


def test_a_killed_arenas_ray_folder_reaper_ends_what_writes_there_not_what_reads_it():
    arena = subprocess.Popen([sys.executable, "-c", WATCHING_A_FOLDER], stdout=subprocess.PIPE,
                             text=True)
    folder, writing = arena.stdout.readline().split()
    folder, writing = Path(folder), int(writing)
    reader = reader_of(folder / "log")   # another arena sweeping the folder, an operator
    try:
        assert_reaped_but_the_reader(arena, writing, folder, reader)
    finally:
        end_own(reader, writing)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def starting_for_a_gone_arena():
    """(the gone arena's pid, its bot cgroup, a process still starting a sandbox in it): the
    process holds the cgroup's `cgroup.procs`, as bwrap's child does before its init joins."""
    from arena.sandbox import cgroups
    if not cgroups.placement().folders:
        pytest.skip(f"no cgroups for bots here: {cgroups.placement().missing}")
    _, folder = next(iter(cgroups.placement().folders.values()))
    gone = subprocess.Popen(["true"])   # an arena process that is gone
    gone.wait()
    group = folder / f"{gone.pid}-0"
    group.mkdir()
    descriptor = os.open(group / "cgroup.procs", os.O_WRONLY)
    starting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                pass_fds=[descriptor], start_new_session=True)
    os.close(descriptor)
    yield gone.pid, group, starting
    if starting.poll() is None:
        starting.kill()   # by pid: the test's own
        starting.wait()
    if group.exists():
        group.rmdir()


@pytest.mark.serial   # sweeps what dead arenas left: alone, so no other test's arena
@pytest.mark.parametrize("cgroups_left", [True, False], ids=["its cgroups left",
                                                            "its cgroups removed"])
def test_a_sandbox_still_starting_for_a_gone_arena_is_ended_by_the_next_sweep(
        starting_for_a_gone_arena, cgroups_left):
    """Its arena died with its reaper (cgroups left), or its reaper removed the cgroups but
    missed it. Seen 2026-12-05: bwrap's pid 1, made just after the reaper's scan for
    processes still starting a sandbox, slept on with no cgroup left to lead sweeps to it."""
    from arena.sandbox import cgroups
    gone, group, starting = starting_for_a_gone_arena
    reader = reader_of(group / "cgroup.procs") if cgroups_left else None
    try:
        if not cgroups_left:
            group.rmdir()
        sweep = cgroups.sweep_orphans()
        assert starting.wait(timeout=GONE_WITHIN) == -signal.SIGKILL
        assert gone in sweep.owners and sweep.processes >= 1 and not group.exists()
        assert sweep.cgroups == (1 if cgroups_left else 0)
        assert reader is None or reader.poll() is None, "the sweep killed a reader"
    finally:
        if reader is not None:
            reader.kill()   # by pid: the test's own
            reader.wait()


@pytest.mark.serial   # sweeps what dead arenas left: alone, so no other test's arena
def test_a_sandbox_starting_for_a_gone_arena_whose_reaper_is_at_work_is_left_to_it(
        starting_for_a_gone_arena):
    """Another arena command's sweep must not race the reaper: what the reaper ends as
    designed is no news (seen 2026-12-05: a parallel test's `arena bot new` printed that it
    had ended a bot left by a gone arena, a test's arena just killed, reaper at work)."""
    from arena.sandbox import cgroups
    gone, group, starting = starting_for_a_gone_arena
    # A stand-in for its reaper at work: what `reaper.reapers()` knows a reaper by is its
    # command line, the script's path then the arena's pid.
    at_work = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)",
                                os.path.abspath(reaper.__file__), str(gone)])
    try:
        deadline = time.monotonic() + GONE_WITHIN
        while reaper.reapers().get(gone) != at_work.pid and time.monotonic() < deadline:
            time.sleep(0.01)
        assert reaper.reapers().get(gone) == at_work.pid
        sweep = cgroups.sweep_orphans()
        assert gone not in sweep.owners
        assert starting.poll() is None and group.exists()   # the reaper's to end
    finally:
        at_work.kill()   # by pid: the test's own
        at_work.wait()


@pytest.mark.serial   # sweeps what dead arenas left: alone, so no other test's arena
def test_an_empty_folder_whose_arena_died_before_naming_its_owner_is_removed_in_time():
    # Killed between making its folder and writing the owner file (or while removing it), an
    # arena leaves an empty folder that names nobody (seen after a test's kill -9). Once no
    # arena can still be making it, the next sweep removes it; nothing else without an owner.
    def folder(prefix: str, age: float, content: bool = False) -> Path:
        made = Path(tempfile.mkdtemp(prefix=prefix))
        if content:
            (made / "kept").write_text("")
        then = time.time() - age
        os.utime(made, (then, then))
        return made
    old = [folder("arena-etc-", scratch.UNOWNED_GRACE + 5), folder("arena-", 3600)]
    kept = [folder("arena-etc-", 1.0),                               # being made, maybe
            folder("arena-etc-", 3600, content=True),                # not empty
            folder("arena-notes-of-mine-", 3600)]                    # not a name we make
    try:
        scratch.remove_orphans()
        assert not any(made.exists() for made in old)
        assert all(made.exists() for made in kept)
    finally:
        for made in old + kept:
            shutil.rmtree(made, ignore_errors=True)


@pytest.mark.serial   # sweeps what dead arenas left: alone, so no other test's arena
def test_an_earlier_versions_etc_folder_of_a_gone_arena_is_removed_a_live_ones_kept():
    # Named `arena-etc-PID-XXXXXXXX`, without an owner file: its pid says whose it is.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    old = Path(tempfile.mkdtemp(prefix=f"arena-etc-{gone.pid}-"))
    live = Path(tempfile.mkdtemp(prefix=f"arena-etc-{os.getpid()}-"))
    try:
        scratch.remove_orphans()
        assert not old.exists() and live.exists()
    finally:
        for folder in (old, live):
            if folder.exists():
                os.rmdir(folder)
