"""A host fault is the host's: a bot is never charged a forfeit for what the machine did.

- A bot's cgroup that cannot be made stops the match with HostError (no record, no forfeit),
  and the other bot's process, which saw the deal, is ended.
- A league whose bot cannot be started (its folder gone) stops with one line and stores no
  forfeit; resumed once the folder is back, it finishes.
- A bot that computes within its time on an idle machine, but times out while spinning
  processes outside the arena hold the cores, is voided (HostOverloaded, with what was
  measured), not charged; a bot that overruns its time (it sleeps) is charged on a loaded
  machine and on an idle one, and the record keeps what was measured.
- So is a bot that starts within its start-up budget on an idle machine but not under the
  spinners: its start-up is voided, not a forfeit.
- A bot that keeps the arena's own process busy (calling its server in a loop) while it spins
  to its deadline, on a worker pinned to one core or kept apart from its bots, is charged:
  the arena's work is not the host's load.
- A bot that answers in time, but whose arena (kept apart from its bots, as `arena play` and
  a lone league worker run) is kept from reading the reply by high-priority spinners on the
  arena's own core, is voided, never charged.
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots import BotHost, BotSpec
from arena.clock import TimeControl
from arena.hostload import STARVED_SHARE, WAIT_SHARE
from arena.errors import HostError, HostOverloaded
from arena.match import play_match
from arena.sandbox import cgroups, reaper

pytestmark = pytest.mark.sandbox

HERE = Path(__file__).parent
RANDOM = HERE.parent / "sample_bots" / "random"
HUNGRY = HERE / "lifecycle_bots" / "hungry"
PUNCTUAL = HERE / "lifecycle_bots" / "punctual"
LATE = HERE / "misbehaving_bots" / "late"
SERVER_SPAMMER = HERE / "hostile_bots" / "server_spammer"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
QUICK = TimeControl(move_time=0.5, startup=20.0)


def spec(folder: Path) -> BotSpec:
    return BotSpec.load(str(folder))


class Spinners:
    """Busy processes outside the arena, eight per core: an overloaded machine. Ended by pid."""

    def __init__(self, per_core: int = 8):
        self.count = per_core * (os.cpu_count() or 1)
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> "Spinners":
        # Each in a session of its own: with the kernel's autogroups, processes of one
        # session share one CPU weight, and 16 spinners of one would take no more than a bot.
        self.processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                           start_new_session=True)
                          for _ in range(self.count)]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()


def test_a_bot_cgroup_that_cannot_be_made_is_the_hosts_fault_not_a_forfeit(host, monkeypatch):
    if not cgroups.placement().folders:
        pytest.skip(f"no cgroups for bots here: {cgroups.placement().missing}")
    with host.seat(spec(RANDOM), lane=0) as a, host.seat(spec(RANDOM), lane=1) as b:
        play_match("mandala", 2, {}, 1, [a, b], QUICK)   # a process for lane 0 in the pool
    # The next bot cgroup's name is taken already: its mkdir fails for real (EEXIST).
    number = 10**9
    monkeypatch.setattr(cgroups, "_names", itertools.count(number))
    _, folder = next(iter(cgroups.placement().folders.values()))
    taken = folder / reaper.bot_cgroup_name(os.getpid(), number)
    taken.mkdir()
    try:
        first = host.seat(spec(RANDOM), lane=0)    # the pooled process: it starts at once
        second = host.seat(spec(RANDOM), lane=7)   # a new process: its cgroup fails
        with pytest.raises(HostError, match="not the bot's fault") as caught:
            play_match("mandala", 2, {}, 2, [first, second], QUICK)
        assert "cannot make the bot's cgroups" in str(caught.value)
        # The seat that started saw the deal: its process is ended, not pooled for reuse.
        assert first.process is not None and first.process.broken
        first.close()
        second.close()
    finally:
        taken.rmdir()


@pytest.mark.slow
def test_a_league_whose_bot_cannot_start_stops_in_one_line_and_resumes(tmp_path):
    bot = tmp_path / "bot"
    shutil.copytree(RANDOM, bot)
    league = tmp_path / "lg"
    argv = [*ARENA, "league", "run", "--game", "mandala", "--bot", str(bot),
            "--bot", "builtin:greedy", "--deals", "6", "--seed", "3", "--workers", "1",
            "--fresh-bots", "--quiet", "--skip-check", "--out", str(league)]
    running = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    database = league / "league.sqlite"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and running.poll() is None:
        if database.exists() and stored(database) >= 1:   # one match stored: the folder goes
            break
        time.sleep(0.02)
    bot.rename(tmp_path / "gone")
    out, err = running.communicate(timeout=300)
    assert running.returncode != 0, out
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "could not start bot" in lines[0], err
    assert "Traceback" not in err
    assert forfeits(database) == []   # nothing charged to the bot
    (tmp_path / "gone").rename(bot)
    done = subprocess.run([*ARENA, "league", "resume", str(league), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert stored(database) == 12 and forfeits(database) == []


def stored(database: Path) -> int:
    try:
        with sqlite3.connect(database) as connection:
            return connection.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    except sqlite3.Error:
        return 0


def forfeits(database: Path) -> list:
    with sqlite3.connect(database) as connection:
        records = [json.loads(row[0]) for row in connection.execute("SELECT record FROM matches")]
    return [record["result"]["forfeit"] for record in records if "forfeit" in record["result"]]


@pytest.mark.slow
@pytest.mark.serial   # the machine's load is what it measures
def test_a_timeout_while_spinners_hold_the_cores_is_voided_not_charged(host):
    quick = TimeControl(move_time=0.25, startup=20.0)   # hungry computes 0.1 s a move
    idle = play_match("mandala", 2, {}, 5, [host.seat(spec(HUNGRY), lane=0),
                                           host.seat(spec(RANDOM), lane=1)], quick)
    assert idle["result"]["end"] == "normal", idle["result"]   # it is on time with its core
    voided = []
    with Spinners():
        for seed in range(6, 9):   # the scheduler may let a match or two through on time
            try:
                record = play_match("mandala", 2, {}, seed, [host.seat(spec(HUNGRY), lane=0),
                                                             host.seat(spec(RANDOM), lane=1)],
                                    quick)
            except HostOverloaded as error:
                voided.append(error)
                break
            assert record["result"]["end"] == "normal", record["result"]   # never charged
    assert voided, "no match was voided under the spinners"
    measure = voided[0].measure
    assert measure["seat"] == 0 and measure["voided"] is True
    assert measure["share_left"] < 0.75 and measure["others_cpu"] > measure["bot_cpu"]
    assert "voided, not the bot's loss" in str(voided[0])


@pytest.mark.serial   # the machine's load is what it measures
def test_a_start_up_the_spinners_hold_past_its_budget_is_voided_not_charged():
    tight = TimeControl(move_time=0.5, startup=1.0)   # the random bot starts in ~0.3 s idle
    with BotHost(fresh_per_match=True) as fresh:
        def play(seed: int) -> dict:
            return play_match("mandala", 2, {}, seed, [fresh.seat(spec(RANDOM), lane=0),
                                                       fresh.seat(spec(RANDOM), lane=1)], tight)
        assert play(5)["result"]["end"] == "normal"   # both start in time with their cores
        with Spinners(), pytest.raises(HostOverloaded) as voided:
            play(6)
    measure = voided.value.measure
    assert measure["start_up"] is True and measure["voided"] is True and measure["wall"] == 1.0
    assert measure["share_left"] < 0.75 and measure["others_cpu"] > measure["bot_cpu"]
    assert "did not start within 1 s" in str(voided.value)
    assert "not the bot's fault" in str(voided.value)


@pytest.mark.serial   # the machine's load is what it measures
@pytest.mark.parametrize("loaded", [False, True], ids=["idle machine", "loaded machine"])
def test_a_bot_that_overruns_its_time_is_charged_with_what_was_measured(host, loaded):
    seats = [host.seat(spec(LATE), lane=0), host.seat(spec(RANDOM), lane=1)]
    if loaded:
        with Spinners():
            record = play_match("mandala", 2, {}, 7, seats, QUICK)
    else:
        record = play_match("mandala", 2, {}, 7, seats, QUICK)
    assert record["result"]["forfeit"]["seat"] == 0
    assert record["result"]["forfeit"]["reason"] == "timeout"
    load = record["host_load"]
    assert load["seat"] == 0 and load["voided"] is False
    assert load["waited"] is not None, load
    if load["share_left"] < STARVED_SHARE:   # it slept: it waited less than half of what a
        expected = (1 - load["share_left"]) * load["wall"]   # bot runnable all along would
        assert load["waited"] < WAIT_SHARE * expected, load
    else:
        assert load["waited"] < 0.25 * load["wall"], load
    assert "other processes used" in record["result"]["forfeit"]["detail"]


_PLACED_MATCH = """
import json, sys
from pathlib import Path
from arena import hostload
from arena.bots import BotHost, BotSpec
from arena.clock import TimeControl
from arena.errors import HostOverloaded
from arena.match import play_match
placement, log_dir, move_time, *bots = sys.argv[1:]
if placement == "pinned":   # as a league worker that fills the cores: bots included
    hostload.pin(min(hostload.cpus()))
else:   # as `arena play` and a lone worker: its threads on the first CPU, its bots apart
    assert hostload.keep_apart()
with BotHost(log_dir=log_dir) as host:
    seats = [host.seat(BotSpec.load(folder), lane=lane) for lane, folder in enumerate(bots)]
    try:
        record = play_match("mandala", 2, {}, 5, seats, TimeControl(move_time=float(move_time)))
        print(json.dumps({"result": record["result"], "host_load": record.get("host_load")}))
    except HostOverloaded as error:
        print(json.dumps({"voided": str(error), "measure": error.measure}))
"""


def placed_match(placement: str, log_dir: Path, move_time: float, *bots: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _PLACED_MATCH, placement, str(log_dir),
                           str(move_time), *map(str, bots)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.serial   # the machine's load is what it measures
@pytest.mark.parametrize("placement", [
    "pinned", pytest.param("apart", marks=pytest.mark.skipif(
        len(os.sched_getaffinity(0)) < 2, reason="keeping bots apart needs two CPUs"))])
def test_a_bot_that_keeps_the_arena_busy_cannot_pass_that_off_as_the_hosts_load(tmp_path,
                                                                                  placement):
    outcome = placed_match(placement, tmp_path, 1.0, SERVER_SPAMMER, RANDOM)
    assert "voided" not in outcome, outcome   # its own doing: never the host's
    assert outcome["result"]["forfeit"]["seat"] == 0, outcome
    assert outcome["result"]["forfeit"]["reason"] == "timeout", outcome
    load = outcome["host_load"]
    assert load["voided"] is False and load["share_left"] >= STARVED_SHARE, load
    # It did make the arena work: about a quarter of the core here, which counted as the
    # others' voided this timeout in 1 of 2 runs (its many threads wait long enough).
    assert load["arena_cpu"] >= 0.15 * load["wall"], load
    log = next(tmp_path.glob("server_spammer-*.log")).read_text()
    assert "handshakes refused" in log, log


def core_hog(cpu: int) -> str:
    """The code of a spinner on `cpu` alone at the highest priority (nice -20): in the session
    of the process that starts it (with the kernel's autogroups, nice counts only within a
    session), whatever of that session runs there gets next to nothing."""
    return f"import os; os.sched_setaffinity(0, {{{cpu}}}); os.nice(-20)\nwhile True: pass"


_HELD_CORE_MATCHES = """
import json, subprocess, sys, time
from arena import hostload
from arena.bots import BotHost, BotSpec
from arena.clock import TimeControl
from arena.errors import HostOverloaded
from arena.match import play_match
log_dir, hog, *bots = sys.argv[1:]
assert hostload.keep_apart()   # as `arena play` and a lone worker: bots off the arena's core
outcomes = []
with BotHost(log_dir=log_dir) as host:
    for seed, held in ((5, False), (6, True)):   # the second with the pooled processes
        seats = [host.seat(BotSpec.load(folder), lane=lane) for lane, folder in enumerate(bots)]
        hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(2 if held else 0)]
        time.sleep(0.3 if held else 0)
        try:
            record = play_match("mandala", 2, {}, seed, seats, TimeControl(move_time=0.3))
            outcomes.append({"result": record["result"]})
        except HostOverloaded as error:
            outcomes.append({"voided": str(error), "measure": error.measure})
        finally:
            for process in hogs:
                process.kill()
                process.wait()
            for seat in seats:
                seat.close()
print(json.dumps(outcomes))
"""


@pytest.mark.slow
@pytest.mark.serial   # the machine's load is what it measures
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="keeping bots apart needs two CPUs")
@pytest.mark.skipif(os.geteuid() != 0, reason="spinners at nice -20 need root")
def test_an_arena_kept_from_reading_a_reply_in_time_voids_the_timeout(tmp_path):
    # `punctual` sleeps 85% of its first moves' time: on time with the arena's core free (the
    # first match); in the second, two nice -20 spinners hold that core (started by the arena
    # process, in its session: with the kernel's autogroups nice counts only within one) and
    # its replies are read late (its first move: about 0.5 s of 0.3), while the bot's core
    # and wait show nothing. The arena's core and wait do.
    hog = core_hog(min(os.sched_getaffinity(0)))
    done = subprocess.run([sys.executable, "-c", _HELD_CORE_MATCHES, str(tmp_path), hog,
                           str(PUNCTUAL), str(RANDOM)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    assert done.returncode == 0, done.stderr
    idle, held = json.loads(done.stdout)
    assert idle["result"]["end"] == "normal", idle
    assert "voided" in held, held   # charged a timeout before the arena's core was weighed
    measure = held["measure"]
    assert measure["voided"] is True and measure["seat"] == 0, measure
    # The bot's own measure could not void it: its threads hardly waited for a CPU.
    expected = (1 - measure["share_left"]) * measure["wall"]
    assert (measure["share_left"] >= STARVED_SHARE
            or measure["waited"] < WAIT_SHARE * expected), measure
    assert measure["arena_others"] > 0.25 * measure["wall"], measure
    assert measure["arena_waited"] >= measure["overrun"] > 0, measure
    assert measure["bot_cpu"] < 0.1 * measure["wall"], measure   # it slept
    assert "of the arena's own core" in held["voided"]
