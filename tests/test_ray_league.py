"""Leagues on Ray (`--executor ray`): a real local Ray instance, real sandboxed sample bots.

The Ray executor must give exactly the results of local workers (same seed, deterministic
bots), survive a worker (actor) killed mid-league, leave no bot behind, and refuse a bad
address in one line without creating the league.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.bench.raycluster import program
from arena.league.store import DB_NAME, Store
from orphans import assert_all_gone, bot_cgroups, members

pytestmark = [pytest.mark.sandbox, pytest.mark.ray,
              pytest.mark.slow]   # Ray starts in seconds, each league: full suite only

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
LEAGUE = ["league", "run", "--game", "mandala", "--deals", "6", "--seed", "11", "--quiet",
          "--move-time", "10",  # no forfeit on time however loaded the machine
          "--workers", "2"]


@pytest.fixture(scope="module")
def bots(tmp_path_factory) -> Path:
    """The sample bots, copied to a folder of this module's own, so that finding their
    processes cannot mistake another test run's bots for them."""
    folder = tmp_path_factory.mktemp("bots")
    for name in ("greedy", "random", "first"):
        shutil.copytree(SAMPLE_BOTS / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def league(bots) -> list[str]:
    return LEAGUE + [arg for bot in sorted(bots.iterdir()) for arg in ("--bot", str(bot))]


def arena(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def stored(folder: Path) -> list[tuple]:
    with Store.open(folder) as store:
        return [(record["players"], record["seed"], record["moves"], record["result"])
                for record in store.records()]


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def local_league(tmp_path_factory, league) -> Path:
    folder = tmp_path_factory.mktemp("local") / "league"
    done = arena(*league, "--out", folder)
    assert done.returncode == 0, done.stderr
    return folder


class RunningLeague:
    """A league run with -v, its stderr read as it comes: the pids of its workers come from
    Ray, via its log lines, never from scanning the machine for a process name."""

    def __init__(self, argv: list[str], env: dict | None = None):
        self.process = subprocess.Popen([*ARENA, "-v", *map(str, argv)], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.log: list[str] = []
        self.reader = threading.Thread(target=lambda: self.log.extend(self.process.stderr),
                                       daemon=True)
        self.reader.start()

    def worker_pids(self, count: int, timeout: float = 120) -> dict[int, int]:
        """{worker: pid} once `count` workers are named; the league must still be playing."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            named = dict(map(int, match.groups()) for line in list(self.log)
                         if (match := re.search(r"Ray league worker (\d+) is pid (\d+)", line)))
            if len(named) >= count:
                assert self.process.poll() is None, \
                    "the league ended before the fault: make it longer"
                return named
            time.sleep(0.05)
        raise AssertionError(f"the league never named {count} workers:\n{''.join(self.log)}")

    def finish(self, timeout: float = 300, code: int = 0) -> str:
        """Waits for its end, with exit status `code`; its stderr."""
        try:
            self.process.wait(timeout=timeout)
            self.reader.join(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the league did not end within {timeout:.0f} s:\n"
                                 f"{''.join(self.log)[-3000:]}") from None
        finally:
            self.process.kill()
        err = "".join(self.log)
        assert self.process.returncode == code, err
        return err


def test_a_ray_worker_killed_mid_league_is_replaced_and_nothing_is_lost(local_league, league,
                                                                        tmp_path):
    # The worker is an actor, killed by its pid as any process: its bots (the one waiting
    # for its turn frozen) end all the same, by its reaper, which is no child of the actor,
    # so Ray does not end it; or by the sweep of the actor that replaces it.
    folder = tmp_path / "ray-killed"
    running = RunningLeague([*league, "--executor", "ray", "--out", folder])
    try:
        worker, pid = next(iter(running.worker_pids(1).items()))   # the first that runs
        bots = bots_of({pid})
        assert bots   # a match in play: it holds matches to replay
        os.kill(pid, signal.SIGKILL)
        assert_all_gone({pid}, bots)
    finally:
        err = running.finish()
    assert re.search(rf"Ray league worker {worker} died \(.*\); playing its [12] unfinished",
                     err), err
    assert stored(folder) == stored(local_league)


@contextlib.contextmanager
def league_on_cluster(tmp_path: Path, league: list[str], folder: Path, nodes: int,
                      cpus: int) -> Iterator[tuple[Any, RunningLeague]]:
    """A league running on a Ray cluster of `nodes` nodes started here for it."""
    from arena.bench.raycluster import LocalCluster
    with LocalCluster(tmp_path / "cluster", nodes=nodes, cpus=cpus) as cluster:
        running = RunningLeague([*league, "--executor", "ray", "--ray-address",
                                 cluster.address, "--out", folder],
                                env={**os.environ, **cluster.auth})
        try:
            yield cluster, running
        finally:
            running.process.kill()


def bots_of(actors: set[int], timeout: float = 60) -> set[int]:
    """The processes of the bots these actors run, once there are some (a match started)."""
    deadline = time.monotonic() + timeout
    while not members(bot_cgroups(actors)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return members(bot_cgroups(actors))


def test_a_league_whose_ray_node_is_lost_finishes_on_the_node_left_and_loses_nothing(
        local_league, league, tmp_path):
    # A node lost for good (its machine's power cut) takes its actor with it, and the
    # cluster has no CPU left to start that worker again: its matches go to the worker left,
    # none waits on the actor that never runs, and nothing of the node lives on.
    folder = tmp_path / "node-lost"
    with league_on_cluster(tmp_path, league, folder, nodes=2, cpus=1) as (cluster, running):
        pids = running.worker_pids(2)
        lost = next(worker for worker, pid in pids.items() if pid in cluster.members(1))
        bots = bots_of({pids[lost]})   # lost with it too
        on_node = cluster.members(1)
        assert bots and pids[lost] in on_node
        cluster.lose(1)
        err = running.finish(timeout=120)   # it takes seconds; without the fix, for ever
        assert_all_gone({pids[lost]}, bots | on_node)
    assert re.search(rf"Ray league worker {lost} died \(.*\); playing its [12] unfinished",
                     err), err
    assert "no match finished" not in err   # no wait on the worker that could not start
    assert stored(folder) == stored(local_league)   # all played, as if nothing happened


def test_a_league_whose_ray_head_is_lost_stops_in_one_line_and_resumes_elsewhere(
        local_league, league, tmp_path):
    # The head's GCS lost (killed, as by the OOM killer), and the workers with it: none can
    # start again without it. The league says so in one line within seconds (Ray would end
    # it a minute later with a line of its own), keeps what it stored, and resumes on local
    # workers. The node's raylet stays: the league's own node, whose loss Ray ends a driver
    # for at once, whatever the driver does.
    folder = tmp_path / "head-lost"
    with league_on_cluster(tmp_path, league, folder, nodes=1, cpus=2) as (cluster, running):
        actors = set(running.worker_pids(2).values())
        assert bots_of(actors)
        cluster.lose_head()   # the cluster's own GCS, one of the processes it started
        for pid in actors:
            os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        err = running.finish(timeout=120, code=2)
        took = time.monotonic() - started
    errors = [line for line in err.splitlines() if line.startswith("arena: error:")]
    assert len(errors) == 1 and "lost the Ray cluster: its head (GCS at" in errors[0], err
    assert "resume the league" in errors[0] and "Traceback" not in err
    assert took < 50, took   # before Ray's own minute is up
    assert len(stored(folder)) < len(stored(local_league))
    resumed = arena("league", "resume", folder)
    assert resumed.returncode == 0, resumed.stderr
    assert stored(folder) == stored(local_league)


def test_a_head_answers_when_it_takes_a_connection_ipv4_or_ipv6():
    from arena.league.ray_cluster import Head
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            server = socket.create_server((host, 0), family=family)
        except OSError:   # a machine without IPv6
            assert family == socket.AF_INET6
            continue
        with server:
            port = server.getsockname()[1]
            head = Head(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", "wait")
            assert head.answers()
        assert not head.answers()   # closed: nothing takes it now


def test_a_bad_ray_address_is_one_line_and_creates_nothing(league, tmp_path):
    folder = tmp_path / "never"
    refused = arena(*league, "--executor", "ray", "--ray-address", "127.0.0.1:1",
                    "--out", folder)
    assert refused.returncode == 2
    assert refused.stderr.startswith("arena: error: cannot reach the Ray cluster at 127.0.0.1:1")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not folder.exists()

    wrong = arena(*league, "--ray-address", "127.0.0.1:1", "--out", folder)
    assert wrong.returncode == 2
    assert "--ray-address needs --executor ray" in wrong.stderr
    assert not folder.exists()


def test_more_workers_than_the_machine_has_cpus_is_refused_before_ray_starts(league, tmp_path):
    folder = tmp_path / "never"
    refused = arena(*league, "--executor", "ray", "--workers", "1000", "--out", folder)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("arena: error: --workers 1000 but this machine has "), \
        refused.stderr
    assert "CPUs for Ray" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not folder.exists()


# -- a Ray cluster that another program started on this machine -----------------------------

@dataclass
class ForeignCluster:
    address: str
    process: subprocess.Popen   # `ray start --block`, leader of its own process group
    temp_dir: Path
    token: str                  # its auth token

    def members(self) -> set[int]:
        """The live processes of the cluster: those in the group its `ray start` leads (a
        zombie has ended: it waits only for its parent to collect its status)."""
        self.process.poll()   # collects `ray start` itself once it has ended
        found = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                state, _, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            except (OSError, IndexError, ValueError):   # gone meanwhile
                continue
            if state != "Z" and int(group) == self.process.pid:
                found.add(int(entry.name))
        return found

    def core(self) -> set[int]:
        """Its long-lived servers (GCS, raylet): what a league joining it would be seen by."""
        return {pid for pid in self.members() if program(pid) in ("gcs_server", "raylet")}

    def drivers_logged(self) -> list[Path]:
        return list(self.temp_dir.glob("session_*/logs/python-core-driver-*"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def foreign_cluster():
    """A 1-CPU Ray cluster with token authentication and a temp dir of its own, as another
    user's program would start it; at the end this fixture ends exactly the process group
    it started, and removes its temp dir."""
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip("the `ray` command is not installed beside this Python")
    temp_dir = Path(tempfile.mkdtemp(prefix="arena-foreign-ray-", dir="/tmp"))  # short: sockets
    port = free_port()
    token = secrets.token_hex(16)
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token,
           "HOME": str(temp_dir)}
    env.pop("RAY_ADDRESS", None)
    process = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", "--port", str(port), "--num-cpus", "1",
         "--temp-dir", str(temp_dir / "ray"), "--include-dashboard", "false",
         "--disable-usage-stats"],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster = ForeignCluster(f"127.0.0.1:{port}", process, temp_dir / "ray", token)
    try:
        deadline = time.monotonic() + 120
        while len(cluster.core()) < 2:
            assert process.poll() is None, "the foreign Ray cluster did not start"
            assert time.monotonic() < deadline, "the foreign Ray cluster took too long"
            time.sleep(0.2)
        yield cluster
    finally:
        # SIGKILL at once: on SIGTERM, `ray start --block` and its monitor take some 20 s to
        # stop; everything the cluster keeps is in its temp dir (its HOME too), removed here.
        os.killpg(process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while cluster.members() and time.monotonic() < deadline:
            time.sleep(0.1)
        process.wait(timeout=10)
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_a_league_on_its_own_ray_stores_what_local_workers_store_and_joins_no_other(
        foreign_cluster, league, local_league, bots, tmp_path):
    # Without --ray-address a league starts a Ray instance of its own, even where RAY_ADDRESS
    # points at another program's cluster, as it would in that user's shell.
    core_before = foreign_cluster.core()
    folder = tmp_path / "own-ray"
    done = subprocess.run([*ARENA, *league, "--executor", "ray", "--out", str(folder)],
                          env={**os.environ, "RAY_ADDRESS": foreign_cluster.address},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Elo" in done.stdout
    assert done.stderr == ""   # --quiet: not a line of Ray's start-up chatter either
    assert stored(folder) == stored(local_league)
    workers = {row[0] for row in sqlite3.connect(folder / DB_NAME).execute(
        "SELECT worker FROM matches")}
    assert workers == {0, 1}
    deadline = time.monotonic() + 10   # every bot ends with its actor, a moment later
    while processes_with(str(bots)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(str(bots)) == []
    # The other cluster is untouched: all still running (a raylet may be forking a worker,
    # a `raylet` too until it execs), and no driver ever connected to it.
    assert core_before <= foreign_cluster.core()
    assert foreign_cluster.drivers_logged() == []


def test_a_cluster_that_needs_a_token_is_named_and_nothing_is_created(foreign_cluster, league,
                                                                     tmp_path):
    folder = tmp_path / "never"
    home = tmp_path / "home"   # no ~/.ray/auth_token here
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    refused = subprocess.run([*ARENA, *league, "--executor", "ray", "--ray-address",
                              foreign_cluster.address, "--out", str(folder)],
                             env={**env, "HOME": str(home)}, capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith(f"arena: error: the Ray cluster at "
                                     f"{foreign_cluster.address} needs its auth token"), \
        refused.stderr
    assert "RAY_AUTH_TOKEN" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not folder.exists()


def test_more_workers_than_a_clusters_cpus_is_refused_once_joined(foreign_cluster, league,
                                                                   tmp_path):
    # (after the tests above: joining it is what they check no league does by itself)
    folder = tmp_path / "never"
    argv = [*ARENA, *league, "--executor", "ray", "--ray-address", foreign_cluster.address,
            "--workers", "2", "--out", str(folder)]
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    env["RAY_AUTH_TOKEN"] = foreign_cluster.token
    # The right token without Ray's token mode: Ray would not send it, and say only, 20 s
    # later, that it cannot connect.
    refused = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr == (f"arena: error: the Ray cluster at {foreign_cluster.address} "
                              "takes this token, but Ray sends it only in token mode: set "
                              "RAY_AUTH_MODE=token too and run again\n")
    refused = subprocess.run(argv, env={**env, "RAY_AUTH_MODE": "token"}, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith(f"arena: error: --workers 2 but the Ray cluster at "
                                     f"{foreign_cluster.address} has 1 CPUs for Ray"), \
        refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not folder.exists()
