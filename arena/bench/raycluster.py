"""A Ray cluster of several nodes on this machine, for the bench and the tests: each node a
`ray start` of its own (its own temporary folder, CPUs and ARENA_NODE_DATA, as on separate
machines), ended by the process groups this code started, never by name.

The cluster asks for a token of its own (Ray's token authentication), so that no driver but
those given `cluster.auth` joins it, and so that a token another cluster left in
~/.ray/auth_token does not lock this one's drivers out.

    with LocalCluster(folder, nodes=2) as cluster:
        ... RayPool(address=cluster.address), with cluster.auth in the environment ...
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.bench.serve import descendants
from arena.errors import ArenaError
from arena.league.bundles import NODE_DATA_ENV

START_SECONDS = 120.0
STOP_SECONDS = 5.0

_WAIT_FOR_NODES = """
import sys, time, ray
ray.init(address=sys.argv[1], include_dashboard=False, log_to_driver=False,
         logging_level="ERROR")
deadline = time.monotonic() + float(sys.argv[3])
while sum(node["Alive"] for node in ray.nodes()) < int(sys.argv[2]):
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.2)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalCluster:
    """`nodes` Ray nodes of `cpus` CPUs each; node i keeps its data in `folder/node-i`."""

    def __init__(self, folder: Path, nodes: int = 2, cpus: int = 1, token: str | None = None,
                 pin: bool = False, port: int | None = None):
        """`token`: the cluster's auth token (default: a new one). Ray reads the token of a
        driver once, when it is imported: a process that joins clusters one after another
        gives them all the same token, and sets `auth` in its environment before `import
        ray`. `port`: the head's (default: a free one; a lost cluster's, to start it again
        where its drivers look for it). `pin`: node i and everything it starts (actors,
        bots) run on this machine's core i only, as on a machine of its own: `--num-cpus`
        only counts CPUs, it does not keep a node's bots off the other cores."""
        self.folder = folder
        self.nodes = nodes
        self.cpus = cpus
        self.port = port or _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []   # each `ray start --block`, a group leader
        self.cores = sorted(os.sched_getaffinity(0)) if pin else []
        # Ray's sockets live in its temporary folder, whose path must stay short.
        self.temp = Path(tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp"))
        self.auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token or secrets.token_hex(16)}
        """The environment a driver needs to join (Ray reads it, and so does RayPool)."""

    def node_data(self, index: int) -> Path:
        return self.folder / f"node-{index}"

    def start(self) -> "LocalCluster":
        ray_cli = Path(sys.executable).with_name("ray")
        if not ray_cli.exists():
            ray_cli = Path(shutil.which("ray") or "ray")
        for index in range(self.nodes):
            where = ["--head", "--port", str(self.port), "--include-dashboard", "false"] \
                if index == 0 else ["--address", self.address]
            env = {**os.environ, **self.auth, NODE_DATA_ENV: str(self.node_data(index))}
            env.pop("RAY_ADDRESS", None)
            self.processes.append(subprocess.Popen(
                [str(ray_cli), "start", "--block", *where, "--num-cpus", str(self.cpus),
                 "--temp-dir", str(self.temp / f"n{index}"), "--node-ip-address", "127.0.0.1",
                 "--disable-usage-stats"],
                env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, preexec_fn=self._pin(index)))
            if index == 0:
                self._wait_for_head()
        done = subprocess.run([sys.executable, "-c", _WAIT_FOR_NODES, self.address,
                               str(self.nodes), str(START_SECONDS)],
                              env={**os.environ, **self.auth}, capture_output=True,
                              timeout=START_SECONDS + 30)
        if done.returncode != 0:
            self.stop()
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise ArenaError(f"the {self.nodes} Ray nodes did not all start in "
                             f"{START_SECONDS:.0f} s ({said[-1] if said else 'no message'})")
        return self

    def _pin(self, index: int):
        """What runs in node `index`'s `ray start` before it starts: its core, if pinned."""
        if not self.cores:
            return None
        core = self.cores[index % len(self.cores)]
        return lambda: os.sched_setaffinity(0, {core})

    def _wait_for_head(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.processes[0].poll() is not None:
                self.stop()
                raise ArenaError("the Ray head node did not start (`ray start --head`)")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise ArenaError("the Ray head node did not answer") from None
                time.sleep(0.2)

    def members(self, node: int | None = None) -> set[int]:
        """Every live process of the nodes (or of node `node`): those of the sessions their
        `ray start` leads (Ray puts each worker in a process group of its own), and what
        those started (Ray's workers, its actors among them, and their bots)."""
        chosen = self.processes if node is None else self.processes[node:node + 1]
        leaders = _in_sessions({process.pid for process in chosen})
        return leaders | descendants(leaders)

    def lose(self, node: int) -> None:
        """Node `node` dies at once, as a machine that loses its power: SIGKILL to every
        process of its session. What it started outside the session (sandboxed bots) dies
        with its parent or its reaper, as on a machine whose arena processes are killed."""
        _kill(_in_sessions({self.processes[node].pid}), signal.SIGKILL)

    def lose_head(self) -> int:
        """The head's GCS dies (as by the OOM killer), the rest of its node lives on: its
        raylet, and the drivers and actors attached to it. Returns the GCS server's pid."""
        gcs, = (pid for pid in self.members(0) if program(pid) == "gcs_server")
        os.kill(gcs, signal.SIGKILL)
        return gcs

    def stop(self) -> None:
        """Ends the nodes, the last started first: SIGTERM to each `ray start` group, SIGKILL
        to what is left of its session after STOP_SECONDS (a worker in a group of its own,
        still starting, would outlive the group and write into the folder removed here);
        then removes Ray's temporary folder."""
        for process in reversed(self.processes):
            for sig, wait in ((signal.SIGTERM, STOP_SECONDS), (signal.SIGKILL, 10.0)):
                left = _in_sessions({process.pid})
                if not left:
                    break
                if sig == signal.SIGTERM:
                    try:
                        os.killpg(process.pid, sig)
                    except ProcessLookupError:
                        pass
                else:
                    _kill(left, sig)
                deadline = time.monotonic() + wait
                while _in_sessions({process.pid}) and time.monotonic() < deadline:
                    time.sleep(0.2)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.processes.clear()
        shutil.rmtree(self.temp, ignore_errors=True)

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _in_sessions(leaders: set[int]) -> set[int]:
    """The running processes (zombies aside) of the sessions `leaders` lead."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit():
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) in leaders and fields[0] != "Z":
                found.add(int(entry.name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def program(pid: int) -> str:
    """The file name of the program a process runs ('' if it is gone)."""
    try:
        return Path(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()).name
    except OSError:
        return ""


def _kill(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:   # ended meanwhile
            pass
