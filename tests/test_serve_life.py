"""The ladder service over its life: its workers and bot pools live across batches (local
processes and Ray actors) with flat counts of bot processes and actors; nothing of it
outlives `kill -9` or SIGTERM while its bots are frozen mid-match; a host fault pauses a
ladder and its unplayed matches are played later, never charged to a bot; it never plays more
matches at once than there are cores, and warns when the machine's load keeps it from that.

Everything is real: sandboxed bots, worker processes, `arena serve` subprocesses, a Ray
instance of the service's own. Bot processes and cgroups are counted as tests/orphans.py
counts them; only processes these tests started are ever signalled, by pid.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from arena.bench.serve import add_admitted
from arena.bots import BotSpec
from arena.keys import LeagueKey
from arena.serve import capacity
from arena.serve.db import ServiceDB
from arena.serve.player import MatchPlayer
from arena.serve.uploads import pack_folder
from arena.league.workers import ProcessPool
from engine import registry
from orphans import (alive, assert_all_gone, bot_cgroups, members, needs_freezer,
                     ray_folders_of, tree, wait_for_frozen_bots)
from serving import SAMPLES, Service, free_port

pytestmark = pytest.mark.sandbox

LIFECYCLE = Path(__file__).parent / "lifecycle_bots"
CORES = len(os.sched_getaffinity(0))


def ladder_db(folder: Path, bots: dict[str, Path], move_time: float = 2.0):
    """A service database with one mandala:2 ladder and `bots` (name -> folder, copied into
    `folder`) admitted on it, each by an author of its own; returns (db, ladder)."""
    db = ServiceDB.open(folder / "data")
    ladder = db.ensure_ladder("mandala", 2, registry.get("mandala").rules(),
                              {"move_time": move_time})
    for name, source in bots.items():
        copy = folder / "bots" / name
        shutil.copytree(source, copy)
        add_admitted(db, ladder.id, f"author-{name}", name, BotSpec.load(copy).version,
                     str(copy))
    return db, ladder


def bots_of(owners: set[int]) -> set[int]:
    """The live bot processes in the bot cgroups of these arena processes."""
    return alive(members(bot_cgroups(owners)))


# -- a kept executor, in process ---------------------------------------------------------------

@pytest.mark.slow
def test_a_kept_pool_plays_batch_after_batch_on_the_same_workers_with_flat_bots(tmp_path):
    db, ladder = ladder_db(tmp_path, {"random": SAMPLES / "random", "first": SAMPLES / "first",
                                      "greedy": SAMPLES / "greedy"})
    pool = ProcessPool(1, keep=True)
    player = MatchPlayer(db, [ladder], pool, LeagueKey.new(), 1, tmp_path / "logs", seed=3,
                         tables=1)
    workers, counts = [], []
    try:
        for _ in range(12):   # 3 versions, 1 table a batch: the pool meets all three pairs
            assert player.turn(ladder) == 2
            workers.append(sorted(process.pid for process in pool._transport.processes.values()))
            counts.append(len(bot_cgroups(tree(os.getpid()) - {os.getpid()})))   # one a bot
    finally:
        pool.close()
    assert all(pids == workers[0] for pids in workers), workers   # never started again
    assert max(counts) <= player.pool_bots == 8, counts   # capped, whatever the versions
    # Every match on a deal of its own: a version's one process plays either seat.
    assert max(counts) <= 3, counts
    assert db.match_count(ladder.id) == 24
    assert not bot_cgroups(set().union(*map(set, workers)))   # close() ended them all


@pytest.mark.slow
def test_a_kept_worker_killed_between_batches_is_replaced_and_its_bots_end(tmp_path):
    db, ladder = ladder_db(tmp_path, {"random": SAMPLES / "random", "first": SAMPLES / "first"})
    pool = ProcessPool(1, keep=True)
    player = MatchPlayer(db, [ladder], pool, LeagueKey.new(), 1, tmp_path / "logs", seed=5,
                         tables=1)
    try:
        assert player.turn(ladder) == 2
        [worker] = pool.pids()
        pids = members(bot_cgroups({worker}))
        assert pids   # its pool holds the bots between batches
        os.kill(worker, signal.SIGKILL)
        assert_all_gone({worker}, pids)   # its reaper ends them
        assert player.turn(ladder) == 2   # the next batch finds it dead and starts another
        assert pool.pids() != [worker] and pool.restarts == 1
    finally:
        pool.close()
    assert db.match_count(ladder.id) == 4


@pytest.mark.slow
def test_ladders_play_concurrently_in_one_round_on_the_same_workers(tmp_path):
    """Two ladders' batches are dealt together: while one worker plays a match of one
    ladder, the other plays the other's, and both ladders keep the same workers."""
    db, mandala = ladder_db(tmp_path, {"random": SAMPLES / "random",
                                       "first": SAMPLES / "first"})
    flowers = db.ensure_ladder("flowers", 2, registry.get("flowers").rules(),
                               {"move_time": 2.0})
    for version in db.admitted(mandala.id):
        add_admitted(db, flowers.id, f"{version.author}-f", version.name, version.version,
                     version.folder)
    pool = ProcessPool(2, keep=True)
    player = MatchPlayer(db, [mandala, flowers], pool, LeagueKey.new(), 2, tmp_path / "logs",
                         seed=6, tables=1)
    try:
        assert player.turn(mandala, flowers) == 4   # one table each, two seatings
        workers = pool.pids()
        assert player.turn(mandala, flowers) == 4 and pool.pids() == workers
    finally:
        pool.close()
    spans = {ladder: [(start, start + seconds) for start, seconds in db.query(
        "SELECT started, seconds FROM matches WHERE ladder = ?", (ladder,))]
        for ladder in (mandala.id, flowers.id)}
    assert any(a < y and x < b for a, b in spans[mandala.id] for x, y in spans[flowers.id]), \
        spans


def kept_pool(executor: str):
    """A kept pool of one worker: a local process, or an actor of a Ray instance of this
    test's own (stopped by `stop_ray`)."""
    if executor == "local":
        return ProcessPool(1, keep=True)
    from arena.league.ray_pool import RayPool
    return RayPool(1, quiet=True, keep=True)


def stop_ray(executor: str) -> None:
    if executor == "ray":
        import ray
        ray.shutdown()


@pytest.mark.parametrize("executor", [
    "local", pytest.param("ray", marks=[pytest.mark.slow, pytest.mark.ray])])
def test_a_host_fault_pauses_the_ladder_and_its_matches_are_played_later_uncharged(
        tmp_path, caplog, executor):
    db, ladder = ladder_db(tmp_path, {"random": SAMPLES / "random", "first": SAMPLES / "first"})
    pool = kept_pool(executor)
    player = MatchPlayer(db, [ladder], pool, LeagueKey.new(), 1, tmp_path / "logs", seed=4,
                         tables=2)
    player.host_pause = 0.5
    folder = tmp_path / "bots" / "first"
    folder.rename(tmp_path / "moved")   # a real fault: the bot's folder is gone
    caplog.set_level(logging.WARNING, logger="arena")
    try:
        assert player.turn(ladder) == 0
        assert db.match_count(ladder.id) == 0   # nothing stored, nothing charged
        unplayed = [spec.id for spec in player.unplayed[ladder.id].specs]
        assert len(unplayed) == 4
        paused = [record.getMessage() for record in caplog.records if "paused" in
                  record.getMessage()]
        assert len(paused) == 1 and "fault of the host" in paused[0] \
            and "folder" in paused[0] and "4 unplayed matches" in paused[0], paused
        assert player.turn(ladder) == 0   # still paused: nothing is tried
        (tmp_path / "moved").rename(folder)
        time.sleep(0.6)
        assert player.turn(ladder) == 4
    finally:
        pool.close()
        stop_ray(executor)
    stored = db.query("SELECT id, forfeit_seat FROM matches")
    assert sorted(match_id for match_id, _ in stored) == sorted(unplayed)   # the same matches
    assert all(seat is None for _, seat in stored)
    assert any("plays again" in record.getMessage() for record in caplog.records)


class ComesBack(ProcessPool):
    """Local workers that say, when asked between rounds, whether a fault of the host is
    over (as a RayPool does once it joins its lost cluster again)."""
    back = False

    def watch(self) -> bool:
        return self.back


def test_a_ladder_paused_by_a_fault_plays_at_once_when_the_executor_says_it_is_over(
        tmp_path):
    db, ladder = ladder_db(tmp_path, {"random": SAMPLES / "random", "first": SAMPLES / "first"})
    pool = ComesBack(1, keep=True)
    player = MatchPlayer(db, [ladder], pool, LeagueKey.new(), 1, tmp_path / "logs", seed=4,
                         tables=2)
    player.host_pause = 600.0
    folder = tmp_path / "bots" / "first"
    folder.rename(tmp_path / "moved")
    try:
        assert player.turn(ladder) == 0   # paused for ten minutes
        (tmp_path / "moved").rename(folder)
        player.watch_executor()
        assert player.turn(ladder) == 0   # the executor has not said so: still paused
        pool.back = True
        player.watch_executor()
        assert player.turn(ladder) == 4   # at once, the matches it kept
    finally:
        pool.close()
    assert db.query("SELECT COUNT(*) FROM matches WHERE forfeit_seat IS NULL") == [(4,)]


# -- capacity -------------------------------------------------------------------------------------

def test_workers_are_clamped_to_the_cores_with_a_log_line(caplog):
    caplog.set_level(logging.WARNING, logger="arena")
    assert capacity.clamp_workers(None, 4, "on this machine") == 4
    assert capacity.clamp_workers(3, 4, "on this machine") == 3
    assert not caplog.records
    assert capacity.clamp_workers(64, 4, "on this machine") == 4
    assert "--workers 64, but there are 4 cores on this machine: playing 4" in caplog.text


def test_the_load_watch_warns_only_when_the_load_stays_above_the_cores(caplog):
    caplog.set_level(logging.WARNING, logger="arena")
    watch = capacity.LoadWatch(2, cores=2, window=60, repeat=600)
    for second in range(0, 60, 5):   # a minute below or at the cores, then a short burst
        watch.check(2.0, second)
    watch.check(9.0, 60)
    watch.check(1.0, 65)
    assert watch.warnings == 0 and not caplog.records
    for second in range(70, 200, 5):   # above the cores for two minutes: one warning
        watch.check(5.5, second)
    assert watch.warnings == 1
    assert "load (1-minute average 5.5) has stayed above its 2 cores for 60 s" in caplog.text
    for second in range(200, 800, 5):   # and it lasts: one more after REPEAT
        watch.check(5.5, second)
    assert watch.warnings == 2
    watch.check(1.5, 800)
    assert "back within its 2 cores" in caplog.records[-1].getMessage()


def test_the_load_watch_reads_the_machines_real_load():
    load = capacity.load_average()
    assert load >= 0.0 and load == pytest.approx(float(Path("/proc/loadavg").read_text()
                                                        .split()[0]))


# -- arena serve, killed while its bots are frozen -------------------------------------------

@pytest.fixture(scope="module",
                params=["local", pytest.param("ray", marks=[pytest.mark.slow, pytest.mark.ray])])
def frozen_ladder(tmp_path_factory, request):
    """A service whose ladder plays `slow` (thinks 0.1 s a move: its opponent sleeps frozen)
    against `heavy` (holds 500 MiB), admitted already (by two authors: uploads and their
    checks are test_serve*.py's business), with more workers asked for than there are cores;
    on local workers, or on actors of a Ray instance of its own."""
    where = tmp_path_factory.mktemp("frozen")
    ladder_db(where, {"slow": LIFECYCLE / "slow", "heavy": LIFECYCLE / "heavy"}, move_time=5.0)
    running = Service(where / "data", free_port(), where / "serve.log",   # 5 s a move, stored
                      ["--workers", "64", "--executor", request.param])
    running.start()
    yield running
    running.stop()


def kill_while_frozen(service: Service, how: signal.Signals) -> None:
    """Waits for the service's match bots, one frozen mid-match, sends `how` to the service
    and checks that every bot process and bot cgroup of its process tree is gone."""
    owners, groups, pids = wait_for_frozen_bots(service.process, 2, timeout=180)
    assert any(owner != service.process.pid for owner in
               (int(name.partition("-")[0]) for name in groups)), "no worker's bots"
    owners |= tree(service.process.pid)
    service.process.send_signal(how)
    service.process.wait(timeout=60)
    assert_all_gone(owners, pids)


@pytest.mark.slow
@needs_freezer
def test_kill_9_of_the_service_while_bots_are_frozen_leaves_no_bot(frozen_ladder):
    log = frozen_ladder.log.read_text()
    cut = re.search(r"--workers 64, but there are (\d+) cores (on this machine|\(CPUs\) in the "
                    r"Ray cluster): playing (\d+) matches at once", log)
    assert cut and cut[1] == cut[3] and int(cut[1]) <= CORES, log
    kill_while_frozen(frozen_ladder, signal.SIGKILL)


@pytest.mark.slow
@needs_freezer
def test_sigterm_of_the_service_while_bots_are_frozen_leaves_no_bot(frozen_ladder):
    if frozen_ladder.process.poll() is not None:   # killed by the test before
        frozen_ladder.start()   # the same data: both versions are admitted already
    kill_while_frozen(frozen_ladder, signal.SIGTERM)
    # uvicorn stops the service, then raises the signal it caught again: its default action
    # ends the process (-15), or with Ray, Ray's handler exits with status 15
    assert frozen_ladder.process.returncode in (0, -signal.SIGTERM, signal.SIGTERM)
    assert "Traceback" not in frozen_ladder.log.read_text()


# -- on Ray, unpaced ----------------------------------------------------------------------------

def actors(owners: set[int]) -> set[int]:
    """The service's Ray actors that play matches (their process title names the class)."""
    found = set()
    for pid in owners:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::LeagueWorker"):
            found.add(pid)
    return found


def stored_matches(service: Service) -> int:
    conn = sqlite3.connect(f"file:{service.data / 'service.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    finally:
        conn.close()


PLAY_SECONDS = 16.0   # 300-450 matches, some 8 s of rounds after the warm-up: a bot or an actor
# more a round would show. Unpaced: at the tests' pace (PACED) that window held only a few
# rounds. (24 s showed no more; both cores are busy the whole time.)
SAMPLE_EVERY = 2.0
WARM_UP = 8.0


@pytest.mark.slow
@pytest.mark.ray
def test_a_service_on_ray_keeps_its_bots_and_actors_flat_and_leaves_nothing(tmp_path):
    service = Service(tmp_path / "data", free_port(), tmp_path / "serve.log",
                      ["--executor", "ray", "--move-time", "2"])
    for author in ("ann", "ben", "cy"):
        service.add_author(author)
    service.start()   # no --ray-address: a Ray instance of its own (arena.league.ray_pool)
    try:
        for author, bot in (("ann", "random"), ("ben", "greedy"), ("cy", "first")):
            status, answer = service.upload(pack_folder(SAMPLES / bot), service.tokens[author])
            assert status == 202, answer
        deadline = time.monotonic() + 300
        while stored_matches(service) == 0:
            assert time.monotonic() < deadline, service.log.read_text()
            time.sleep(1)
        started, samples = time.monotonic(), []
        first_matches = stored_matches(service)
        while time.monotonic() - started < PLAY_SECONDS:
            owners = tree(service.process.pid)
            samples.append((time.monotonic() - started, len(bots_of(owners)),
                            len(actors(owners))))
            time.sleep(SAMPLE_EVERY)
        played = stored_matches(service) - first_matches
        owners = tree(service.process.pid)
        pids = members(bot_cgroups(owners))
        # Its own Ray writes its sockets and logs (some 230 KB a run) into a folder of the
        # service's: Ray stays up till the service exits (atexit), and the folder goes then.
        ray_folder, = ray_folders_of(service.process.pid)
        assert list(ray_folder.glob("session_*/sockets"))
        service.process.send_signal(signal.SIGTERM)
        service.process.wait(timeout=120)
        assert_all_gone(owners, pids)
        assert not alive(actors(owners))
        assert not ray_folder.exists()
    finally:
        service.stop()
    print(f"ray service: {played} matches in {PLAY_SECONDS:.0f} s; (seconds, bots, actors): "
          f"{samples}")
    steady = [sample for sample in samples if sample[0] >= WARM_UP]
    first = steady[0]
    assert played >= 40, (played, samples)   # many batches, not one long one
    assert max(bots for _, bots, _ in steady) <= first[1] + 2, samples
    assert max(count for _, _, count in steady) <= first[2], samples
    assert first[2] >= 1
    assert not re.search(r"Traceback|paused", service.log.read_text())
