"""Leagues on a Ray cluster: the Ray transport of the league Dispatcher (arena.league.workers).

`RayPool` deals matches exactly as the local `ProcessPool` does (same Dispatcher: look-ahead,
restarts, replay of unfinished matches), with Ray actors in place of local worker processes:
one actor per worker, each holding its own `SeatSource` (its pool of sandboxed bot processes)
for the whole run and playing matches with `play_spec`. The league process stays the only
writer of the database: actors return `FinishedMatch`es and the parent commits each one, so
resume and determinism work unchanged.

Cluster: with no `--ray-address`, Arena starts a Ray instance of its own for the run
(`address="local"`: never a cluster another program started on this machine, whatever Ray's
current-cluster file or RAY_ADDRESS say) and stops it after. With `--ray-address HOST:PORT` the
league joins that running cluster. Every node must have Arena installed and bubblewrap, and
the bot folders at the same absolute paths as on the machine that runs the league (bot
versions are checked on every node). Each worker needs one CPU of the cluster: a league asking
for more workers than the cluster has CPUs is refused at start, never left waiting.

A kept pool (`keep=True`, the service's) keeps its actors, their bots and Ray across runs,
each run's plan riding along with its matches; an actor that ends gracefully ends its bots
(`LeagueWorker.__ray_shutdown__`), and one killed leaves them to its process's reaper.
"""
from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any

from arena.errors import ArenaError, HostError
from arena.league.config import LeagueError, RunPlan
from arena.league.schedule import MatchSpec
from arena.league.store import FinishedMatch
from arena.league.workers import Died, Dispatcher, Done, SeatSource, Transport, play_spec

log = logging.getLogger(__name__)

STALL_NOTE_SECONDS = 60.0
"""After this long without a finished match, say what the cluster is short of."""
CLOSE_SECONDS = 10.0
"""How long actors get to end their bots when a pool closes, before they are killed."""


def _ray():
    try:
        import ray
    except ImportError:
        raise LeagueError("the Ray executor needs Ray: pip install 'arena[ray]' "
                          "(or leave out --executor ray)") from None
    return ray


def _check_reachable(address: str) -> None:
    """Ray waits minutes for an address that does not answer: fail fast on a plain
    HOST:PORT that refuses or times out."""
    if "://" in address or address == "auto":
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except (OSError, ValueError) as error:
        raise LeagueError(f"cannot reach the Ray cluster at {address} "
                          f"({getattr(error, 'strerror', None) or error}): check --ray-address "
                          "(HOST:PORT of the cluster's head node)") from None


def _local_token() -> str | None:
    """The Ray auth token this process would send, where Ray looks for one."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return os.environ["RAY_AUTH_TOKEN"].strip()
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def _check_token(address: str) -> None:
    """A cluster with token authentication refuses a driver without its token, but Ray says
    only "cannot connect" after 20 s of retries: ask the cluster's GCS once, with the token
    Ray would send, and name the token if it is refused."""
    if "://" in address or address == "auto":
        return
    import grpc   # an Arena dependency anyway (the bot protocol)
    token = _local_token()
    metadata = [("authorization", f"Bearer {token}")] if token else []
    with grpc.insecure_channel(address) as channel:
        ask = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetClusterId",
                                  request_serializer=None, response_deserializer=None)
        try:
            ask(b"", timeout=5, metadata=metadata)
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                raise LeagueError(
                    f"the Ray cluster at {address} needs its auth token"
                    f"{' (the one found here is refused)' if token else ''}: set "
                    "RAY_AUTH_TOKEN to the cluster's token (or put it in ~/.ray/auth_token) "
                    "and run again") from None


class LeagueWorker:
    """What runs in one Ray actor: a worker's bots and the matches handed to it. Its bots end
    with it: `close` or Ray's graceful end of the actor (`__ray_shutdown__`) thaws and ends
    them; when the actor is killed instead, its process's reaper does (arena.sandbox.reaper).
    """

    def __init__(self, plan: RunPlan, index: int):
        self.plan = plan
        self.index = index
        self.source: SeatSource | None = None
        self.failed: ArenaError | None = None
        try:
            self.source = SeatSource(plan)
        except ArenaError as error:
            # Raised by its first match instead: an actor whose creation fails is only seen
            # as dead, and started again and again, the error (a host fault) unsaid.
            self.failed = error

    def pid(self) -> int:
        """The actor's process id (for tests that kill their own actors)."""
        return os.getpid()

    def play(self, spec: MatchSpec, plan: RunPlan | None = None) -> FinishedMatch:
        """Plays one match; `plan` (a kept pool's run) replaces the actor's plan first."""
        if self.failed is not None:
            raise self.failed
        if plan is not None and plan != self.plan:
            self.source.adopt(plan)
            self.plan = plan
        return play_spec(self.source, self.plan, spec, self.index)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()

    def __ray_shutdown__(self) -> None:
        """Ray calls this when the actor ends gracefully (`__ray_terminate__`, its handles
        dropped): its bots end, frozen ones thawed first, while the actor can still remove
        their cgroups (Ray then ends the actor's children, whatever they were doing)."""
        self.close()


class RayPool(Dispatcher):
    """Matches on Ray actors, `workers` of them (default: the cluster's CPUs)."""

    def __init__(self, workers: int | None = None, address: str | None = None,
                 quiet: bool = False, *, keep: bool = False):
        super().__init__(workers, keep=keep)
        self.address = address
        self.quiet = quiet
        self._started_ray = False

    def connect(self, *, stay: bool = False) -> None:
        """Joins the cluster (or starts Arena's own); LeagueError in one line if it cannot,
        or if it has fewer CPUs than workers asked. Called before a league folder is
        created, so a bad address creates nothing.

        `stay`: keep Ray up after each run (a service runs many; Ray stops at exit), rather
        than stopping a local instance this pool started when its run ends."""
        ray = _ray()
        if ray.is_initialized():
            return
        if self.address:
            _check_reachable(self.address)
            _check_token(self.address)
        self._init(ray)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        where = f"the Ray cluster at {self.address}" if self.address else "this machine"
        if cpus < 1 or (self.workers or 1) > cpus:
            self.shutdown()   # a worker that cannot get a CPU would wait forever: say so now
            if cpus < 1:
                raise LeagueError(f"{where} offers no CPU to Ray: each league worker needs "
                                  "one (start the cluster's nodes with CPUs)")
            raise LeagueError(f"--workers {self.workers} but {where} has {cpus} CPUs for Ray "
                              f"(each worker needs one): give --workers {cpus} or fewer, or "
                              "leave --workers out")
        if stay:
            self._started_ray = False   # no run stops it

    def _init(self, ray) -> None:
        if self.address is None:
            # Ray would otherwise read RAY_ADDRESS in the actors it starts for us.
            os.environ.pop("RAY_ADDRESS", None)
        if self.quiet:   # Ray's own start-up lines (its loggers are set up by ray.init)
            for name in ("ray", "ray._private", "ray.worker"):
                logging.getLogger(name).setLevel(logging.ERROR)
        try:
            ray.init(address=self.address or "local", include_dashboard=False,
                     log_to_driver=False, configure_logging=False,
                     logging_level=logging.ERROR if self.quiet else logging.WARNING)
        except ray.exceptions.AuthenticationError:
            raise LeagueError(f"the Ray cluster at {self.address} needs its auth token: set "
                              "RAY_AUTH_TOKEN to the cluster's token and run again") from None
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise LeagueError(f"cannot reach the Ray cluster at {self.address}: {error}; "
                              "check --ray-address") from None
        self._started_ray = True
        log.info("Ray: %s, %d CPUs", f"joined {self.address}" if self.address
                 else "started a local instance", ray.cluster_resources().get("CPU", 0))

    def shutdown(self) -> None:
        if self._started_ray:
            _ray().shutdown()
            self._started_ray = False

    def cpus(self) -> int:
        """The CPUs of the cluster (joined or started first)."""
        self.connect(stay=self.keep)
        return int(_ray().cluster_resources().get("CPU", 0))

    def open(self, plan: RunPlan) -> tuple[Transport, int]:
        self.connect(stay=self.keep)
        ray = _ray()
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        # A kept pool's Ray stays up between runs (it stops at exit); a league's stops after.
        return RayTransport(ray, plan, on_close=(lambda: None) if self.keep
                            else self.shutdown), count


class RayTransport(Transport):
    """One Ray actor per worker; a handed match is a pending `play` call."""

    noun = "Ray league worker"

    def __init__(self, ray, plan: RunPlan, on_close):
        self.ray = ray
        self.plan = plan
        self.on_close = on_close
        # Sync actors run their calls one at a time on one thread that lives as long as the
        # actor: the bot processes it starts live as long as the actor (sandbox rule).
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(LeagueWorker)
        self.actors: dict[int, Any] = {}
        self.in_flight: dict[Any, tuple[int, MatchSpec]] = {}   # ObjectRef -> (worker, spec)
        self.pids: dict[int, Any] = {}   # worker -> ObjectRef of its pid, until logged
        self.plan_ref = None   # the plan of a kept pool's later runs, in Ray's object store

    def start(self, index: int) -> None:
        self.actors[index] = self.actor_class.remote(self.plan, index)
        self.pids[index] = self.actors[index].pid.remote()   # answered before any match

    def use(self, plan: RunPlan) -> None:
        if plan != self.plan:
            self.plan = plan
            self.plan_ref = self.ray.put(plan)   # each play call carries it, sent once

    def hand(self, index: int, spec: MatchSpec) -> None:
        self.in_flight[self.actors[index].play.remote(spec, self.plan_ref)] = (index, spec)

    def next_event(self) -> Done | Died:
        ray = self.ray
        while True:
            ready, _ = ray.wait(list(self.in_flight), num_returns=1, timeout=STALL_NOTE_SECONDS)
            if ready:
                break
            log.warning("no match finished in %.0f s; Ray has %s CPUs free of %s",
                        STALL_NOTE_SECONDS, ray.available_resources().get("CPU", 0),
                        ray.cluster_resources().get("CPU", 0))
        index, _spec = self.in_flight.pop(ready[0])
        try:
            finished = ray.get(ready[0])
            if index in self.pids:
                log.info("%s %d is pid %d", self.noun, index, ray.get(self.pids.pop(index)))
            return Done(index, finished)
        except ray.exceptions.RayActorError as error:
            for ref, (held, _) in list(self.in_flight.items()):
                if held == index:   # the dead actor's other calls fail too: forget them now
                    del self.in_flight[ref]
            return Died(index, str(error).splitlines()[0] if str(error) else "actor died")
        except ray.exceptions.RayTaskError as error:
            cause = error.as_instanceof_cause()
            if isinstance(cause, HostError):
                raise HostError(str(cause).splitlines()[-1]) from None
            if isinstance(cause, ArenaError):   # what the actor could say in one line
                raise LeagueError(str(cause).splitlines()[-1]) from None
            raise

    def close(self, at_once: bool) -> None:
        """Ends the actors: after their matches, each ending its bots (`__ray_shutdown__`),
        or `at_once` with ray.kill (its reaper ends its bots then); one that does not end
        within CLOSE_SECONDS is killed."""
        try:
            if not at_once:
                ending = [actor.__ray_terminate__.remote() for actor in self.actors.values()]
                self.ray.wait(ending, num_returns=len(ending), timeout=CLOSE_SECONDS)
            for actor in self.actors.values():
                self.ray.kill(actor)   # a no-op for an actor that has ended
        finally:
            self.actors.clear()
            self.on_close()
