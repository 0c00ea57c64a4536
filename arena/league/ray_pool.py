"""Leagues on a Ray cluster: the Ray transport of the league Dispatcher (arena.league.workers).

`RayPool` deals matches exactly as the local `ProcessPool` does (same Dispatcher: look-ahead,
restarts, replay of unfinished matches), with Ray actors in place of local worker processes:
one actor per worker, each holding its own `SeatSource` (its pool of sandboxed bot processes)
for the whole run and playing matches with `play_spec`. The league process stays the only
writer of the database: actors return `FinishedMatch`es and the parent commits each one, so
resume and determinism work unchanged.

Cluster: with no `--ray-address`, Arena starts a Ray instance of its own for the run
(`address="local"`: never a cluster another program started on this machine, whatever Ray's
current-cluster file or RAY_ADDRESS say) and stops it after; Ray's files (sockets, logs) go
to a temporary folder of the league process's (arena.sandbox.scratch), removed with Ray;
a reaper ends whatever of it is left when that process is killed (arena.sandbox.reaper).
With `--ray-address HOST:PORT` the league joins that running cluster. Every node must have
Arena installed and bubblewrap, and the bot folders at the same absolute paths as on the
machine that runs the league (bot versions are checked on every node). Each worker needs one
CPU of the cluster: a league asking for more workers than the cluster has CPUs is refused at
start, never left waiting.

A portable pool (`portable=True`, the service's) shares nothing with its nodes but Ray: each
bot version goes into Ray's object store once, packed by content hash, and each actor plays
it from its node's cache (arena.league.bundles), checked against the hash; its bots log into
a folder of the node's, and each match comes back with the lines they gained
(arena.league.nodelogs) and the id of the node that played it. Its actors also run the
service's admission checks between their matches (`RayPool.check_on_worker`).

A kept pool (`keep=True`, the service's) keeps its actors, their bots and Ray across runs,
each run's plan riding along with its matches; an actor that ends gracefully ends its bots
(`LeagueWorker.__ray_shutdown__`), and one killed leaves them to its process's reaper.

A lost head (arena.league.ray_cluster) makes the pool leave Ray (`leave`) before Ray's core
ends the process for it: a league stops with one line (HostError), and a kept pool joins the
cluster again on its next run, or as soon as its head answers (`watch`, between runs).
"""
from __future__ import annotations

import atexit
import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from arena.bots.manifest import is_builtin
from arena.errors import ArenaError, HostError
from arena.league.bundles import NodeCache, node_data, pack_version
from arena.league.config import LeagueError, RunPlan
from arena.league.nodelogs import LogShipper
from arena.league.ray_cluster import (HEAD_CHECK_SECONDS, Head, check_reachable, check_token,
                                      connect_error, plain, ray_module, why)
from arena.league.schedule import MatchSpec
from arena.league.store import FinishedMatch
from arena.league.workers import (Died, Dispatcher, Done, Ready, SeatSource, Transport,
                                  play_spec)
from arena.sandbox import reaper, scratch

log = logging.getLogger(__name__)

STALL_NOTE_SECONDS = 60.0
"""After this long without a finished match, say what the cluster is short of."""
CLOSE_SECONDS = 10.0
"""How long actors get to end their bots when a pool closes, before they are killed."""
CHECK_SECONDS = 900.0
"""The longest an admission check on an actor may take, waiting for its matches included."""
SHIPMENTS = 16
"""Plans a pool keeps put in Ray's object store (one per ladder a service serves, at most)."""
KEPT_BUNDLES = 256
"""Versions a portable pool keeps in Ray's object store (the most recently played): a
version played again after that is packed and put again."""


def _died(index: int, error: Exception) -> Died:
    """Worker `index`'s actor died, in the first line of Ray's words."""
    return Died(index, str(error).splitlines()[0] if str(error) else "actor died")


class LeagueWorker:
    """What runs in one Ray actor: a worker's bots and the matches handed to it. Its bots end
    with it: `close` or Ray's graceful end of the actor (`__ray_shutdown__`) thaws and ends
    them; when the actor is killed instead, its process's reaper does (arena.sandbox.reaper).

    With `bundles` (a portable pool: version -> its packed folder in Ray's object store),
    the actor plays each bot from its node's cache and logs into a folder of the node's.
    """

    def __init__(self, plan: RunPlan, index: int, bundles: Mapping[str, Any] | None = None):
        self.asked = self.plan = plan   # the plan as the pool sent it, and as played here
        self.index = index
        self.source: SeatSource | None = None
        self.failed: ArenaError | None = None
        self.cache: NodeCache | None = None
        self.logs: LogShipper | None = None
        try:
            if bundles is not None:
                data = node_data()
                self.cache, self.logs = NodeCache(data), LogShipper(data)
                self.plan = self.localize(plan, bundles)
            self.source = SeatSource(self.plan)
        except ArenaError as error:
            # Raised by its first match instead: an actor whose creation fails is only seen
            # as dead, and started again and again, the error (a host fault) unsaid.
            self.failed = error

    def localize(self, plan: RunPlan, bundles: Mapping[str, Any]) -> RunPlan:
        """`plan` with its bots played from this node's cache (each version checked against
        its hash, fetched from the object store if missing or damaged) and its bots' logs
        in this actor's log folder."""
        import ray

        def fetch(version: str):
            if version not in bundles:
                raise HostError(f"bot version {version} was not shipped to this node")
            return lambda: ray.get(bundles[version])
        bots = tuple(bot if is_builtin(bot.source) else replace(
            bot, source=str(self.cache.folder(bot.version, fetch(bot.version))))
            for bot in plan.bots)
        return replace(plan, bots=bots, log_dir=str(self.logs.folder))

    def pid(self) -> int:
        """The actor's process id (for tests that kill their own actors)."""
        return os.getpid()

    def play(self, spec: MatchSpec, shipment: tuple) -> FinishedMatch:
        """Plays one match of `shipment`'s plan (with the bundles of its versions, or None),
        adopted first if it is not the actor's (a kept pool's next run, another ladder).
        The match comes back with the node that played it and, from a portable pool, its
        bots' new log lines."""
        import ray
        if self.failed is not None:
            raise self.failed
        if shipment[0] != self.asked:
            plan, bundles = shipment
            local = plan if self.cache is None else self.localize(plan, bundles)
            self.source.adopt(local)
            self.asked, self.plan = plan, local
        finished = play_spec(self.source, self.plan, spec, self.index)
        return replace(finished, node=ray.get_runtime_context().get_node_id(),
                       logs=self.logs.collect() if self.logs is not None else {})

    def check(self, check: Callable[[Path, Any, Path], Any], version: str, bundle: list,
              *args: Any) -> tuple[Any, dict[str, bytes], str]:
        """Runs an admission check, `check(folder, *args, log_dir)`, of bot `version` here,
        between this actor's matches (on its CPU, its own bots idle): the version from the
        node's cache (`bundle`: [its ObjectRef], in a list so that Ray does not fetch it
        when the cache holds it), the check's logs in a folder of the node's, returned with
        the verdict and the node's id."""
        import ray
        if self.cache is None:
            raise HostError("only a portable pool's actors run checks")
        folder = self.cache.folder(version, lambda: ray.get(bundle[0]))
        # Named as the actor's log folder is: removed by the next actor if this one dies.
        with tempfile.TemporaryDirectory(prefix=f"actor-{os.getpid()}-check-",
                                         dir=self.logs.folder.parent) as scratch:
            verdict = check(folder, *args, Path(scratch))
            logs = {path.relative_to(scratch).as_posix(): path.read_bytes()
                    for path in Path(scratch).rglob("*") if path.is_file()}
        return verdict, logs, ray.get_runtime_context().get_node_id()

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
        if self.logs is not None:
            self.logs.close()

    def __ray_shutdown__(self) -> None:
        """Ray calls this when the actor ends gracefully (`__ray_terminate__`, its handles
        dropped): its bots end, frozen ones thawed first, while the actor can still remove
        their cgroups (Ray then ends the actor's children, whatever they were doing)."""
        self.close()


def _too_many_workers(workers: int | None, cpus: int, where: str) -> LeagueError:
    return LeagueError(f"--workers {workers} but {where} has {cpus} CPUs for Ray (each "
                       f"worker needs one): give --workers {cpus} or fewer, or leave "
                       "--workers out")


class RayPool(Dispatcher):
    """Matches on Ray actors, `workers` of them (default: the cluster's CPUs)."""

    def __init__(self, workers: int | None = None, address: str | None = None,
                 quiet: bool = False, *, keep: bool = False, portable: bool = False):
        """`portable`: ship bot versions through Ray and bring logs back (see the module
        docstring), so that nodes need none of this machine's folders."""
        super().__init__(workers, keep=keep)
        self.address = address
        self.quiet = quiet
        self.portable = portable
        self._started_ray = False
        self._temp: Path | None = None   # Ray's folder, when this pool started Ray
        self._next_checker = itertools.count()
        self._head: Head | None = None   # the joined cluster's, while joined
        self._lost = False   # its head was lost since (`leave`): the next run joins again
        self._retry_due = 0.0   # when `watch` next tries to join a lost cluster again
        self._checks = 0     # admission checks waiting on Ray now (another thread's)
        self._checks_over = threading.Condition()

    def connect(self, *, stay: bool = False) -> None:
        """Joins the cluster (or starts Arena's own); LeagueError in one line if it cannot,
        or if it has fewer CPUs than workers asked. Called before a league folder is
        created, so a bad address creates nothing. After the cluster's head was lost
        (`leave`), joins it again, or raises HostError while it does not answer.

        `stay`: keep Ray up after each run (a service runs many; Ray stops at exit), rather
        than stopping a local instance this pool started when its run ends."""
        ray = ray_module()
        if ray.is_initialized():
            if self._head is None:   # joined by someone else in this process (a test)
                self._head = Head(ray.get_runtime_context().gcs_address, self._then())
            return
        if not self._lost:
            self._join(ray, stay)
            return
        error = connect_error(self.address) if self.address and plain(self.address) else None
        if error is not None:
            raise HostError(f"the Ray cluster at {self.address} still does not answer "
                            f"({why(error)}) since its head was lost: {self._then()}")
        try:
            self._join(ray, stay, rejoin=True)
        except LeagueError as error:   # a cluster back, but not as it was
            raise HostError(f"{error} (joining the Ray cluster again, its head lost before)"
                            ) from None
        self._lost = False
        log.warning("Ray: joined %s again after losing its head",
                    f"the cluster at {self.address}" if self.address else "a new local instance")

    def _join(self, ray, stay: bool, rejoin: bool = False) -> None:
        """`rejoin`: a lost cluster back (its head answered just now), perhaps with fewer
        CPUs than workers for now (its other nodes coming back later): the workers without
        one wait for it, handed no match meanwhile (`wait_to_start`)."""
        if self.address:
            if not rejoin:   # a rejoin has just asked it (`connect`)
                check_reachable(self.address)
            if check_token(self.address) and os.environ.get("RAY_AUTH_MODE") != "token":
                # Ray's driver sends the token only in token mode; without it, Ray retries
                # for 20 s and then reports the cluster unreachable.
                raise LeagueError(f"the Ray cluster at {self.address} takes this token, but "
                                  "Ray sends it only in token mode: set RAY_AUTH_MODE=token "
                                  "too and run again")
        elif (self.workers or 1) > (os.cpu_count() or 1):
            # Arena's own instance cannot offer more than the machine's CPUs: refused before
            # Ray starts (seconds of wall time and of CPU) rather than after.
            raise _too_many_workers(self.workers, os.cpu_count() or 1, "this machine")
        self._init(ray)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        where = f"the Ray cluster at {self.address}" if self.address else "this machine"
        if cpus < 1 or ((self.workers or 1) > cpus and not rejoin):
            self.shutdown()   # a worker that cannot get a CPU would wait forever: say so now
            if cpus < 1:
                raise LeagueError(f"{where} offers no CPU to Ray: each league worker needs "
                                  "one (start the cluster's nodes with CPUs)")
            raise _too_many_workers(self.workers, cpus, where)
        if stay:
            self._started_ray = False   # no run stops it

    def _then(self) -> str:
        """What comes once a lost cluster is back."""
        return ("its ladders play again once the cluster is back" if self.keep
                else "resume the league once the cluster is back")

    def leave(self) -> None:
        """Leaves a cluster whose head is lost, before Ray's core ends this process for it
        (a minute after the loss): the actors and their bots end with their nodes (a raylet
        gives up on a lost head within a minute), and the next run joins the cluster again
        (`connect`). Waits for the admission checks on Ray to give up first (a
        HEAD_CHECK_SECONDS or so): Ray must not shut down under another thread's call."""
        self._transport = None   # its actors are out of reach
        with self._checks_over:
            self._lost = True   # no new check starts on Ray
            self._checks_over.wait_for(lambda: self._checks == 0,
                                       timeout=2 * HEAD_CHECK_SECONDS)
        head, self._head = self._head, None
        self._stop_ray()   # seconds, even with the head gone
        # A league stops with the lost head's error line; a service goes on, and says so.
        log.log(logging.WARNING if self.keep else logging.INFO,
                "Ray: left the cluster whose head (GCS at %s) was lost; %s",
                head.address if head else "?", self._then())

    def watch(self) -> bool:
        """Between runs of a kept pool (the service idle, or its ladders paused): leaves the
        cluster once its head is lost (no run asks it meanwhile), and joins it again once
        its head answers. True when it has just joined again."""
        if not self._lost:
            if self._head is not None and self._head.lost():
                log.warning("%s", self._head.error())
                self.leave()
            return False
        if time.monotonic() < self._retry_due:
            return False
        self._retry_due = time.monotonic() + HEAD_CHECK_SECONDS
        try:
            self.connect(stay=self.keep)
        except ArenaError:   # not back yet: the next run (or look) tries again
            return False
        return True

    def _init(self, ray) -> None:
        if self.address is None:
            # Ray would otherwise read RAY_ADDRESS in the actors it starts for us.
            os.environ.pop("RAY_ADDRESS", None)
        if self.quiet:   # Ray's own start-up lines (its loggers are set up by ray.init)
            for name in ("ray", "ray._private", "ray.worker"):
                logging.getLogger(name).setLevel(logging.ERROR)
        where: dict[str, str] = {}
        if self.address is None:
            # Ray's own files (its sockets, its logs: some 230 KB a run) go to a folder of
            # this process's, not /tmp/ray: removed when Ray stops, or at exit; after a
            # kill -9, by a reaper that ends the processes holding files there first.
            self._temp = scratch.folder_of_this_process("arena-ray-")
            atexit.register(self._end_at_exit)
            reaper.watch_folder(str(self._temp))   # kill -9: ends Ray's agents at once
            where["_temp_dir"] = str(self._temp)
        # Joined again from the match thread (`connect`), Ray says it cannot set its SIGTERM
        # handler there: the one it set the first time, from the main thread, stays.
        hush = _NotMainThread()
        logging.getLogger("ray._private.worker").addFilter(hush)
        try:
            ray.init(address=self.address or "local", include_dashboard=False,
                     log_to_driver=False, configure_logging=False,
                     logging_level=logging.ERROR if self.quiet else logging.WARNING, **where)
        except ray.exceptions.AuthenticationError:
            raise LeagueError(f"the Ray cluster at {self.address} needs its auth token: set "
                              "RAY_AUTH_TOKEN to the cluster's token and run again") from None
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise LeagueError(f"cannot reach the Ray cluster at {self.address}: {error}; "
                              "check --ray-address") from None
        finally:
            logging.getLogger("ray._private.worker").removeFilter(hush)
        self._started_ray = True
        self._head = Head(ray.get_runtime_context().gcs_address, self._then())
        log.info("Ray: %s, %d CPUs", f"joined {self.address}" if self.address
                 else "started a local instance", ray.cluster_resources().get("CPU", 0))

    def check_on_worker(self, check: Callable[..., Any], folder: str, version: str,
                        *args: Any) -> tuple[Any, dict[str, bytes], str] | None:
        """Runs `LeagueWorker.check` on one of this portable pool's actors (in turns), the
        version shipped through the object store; None when no actor is up yet (no batch
        played so far). HostError when the actor or its node fails meanwhile."""
        with self._checks_over:
            transport, head = self._transport, self._head
            if self._lost or head is None or not (
                    self.portable and isinstance(transport, RayTransport)):
                return None
            actors = list(transport.running().values())   # not one waiting for a CPU to run
            if not actors:
                return None
            self._checks += 1   # Ray stays joined until it is over (`leave`)
        actor = actors[next(self._next_checker) % len(actors)]
        ray = ray_module()
        try:
            bundle = [transport.bundle(folder, version)]
            call = actor.check.remote(check, version, bundle, *args)
            deadline = time.monotonic() + CHECK_SECONDS
            while not ray.wait([call], timeout=HEAD_CHECK_SECONDS)[0]:
                if self._lost or not head.answers():
                    raise head.error()
                if time.monotonic() >= deadline:
                    raise HostError(f"the Ray actor checking it did not answer within "
                                    f"{CHECK_SECONDS:.0f} s")
            return ray.get(call)
        except ray.exceptions.RayActorError as error:
            raise HostError(f"the Ray actor checking it failed: {error}".splitlines()[0]) \
                from None
        except ray.exceptions.RayTaskError as error:
            raise HostError(str(error.as_instanceof_cause()).splitlines()[-1]) from None
        finally:
            with self._checks_over:
                self._checks -= 1
                self._checks_over.notify_all()

    def shutdown(self) -> None:
        if self._started_ray:
            self._stop_ray()

    def _stop_ray(self) -> None:
        ray_module().shutdown()
        self._started_ray = False
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None

    def _end_at_exit(self) -> None:
        """Stops the Ray this pool started, kept up for the process's life (`stay`), and
        removes its folder. Before Ray's own exit handler (registered when Ray was imported,
        so run after this), which would write its files again into a folder removed first."""
        if self._temp is not None:
            self._stop_ray()

    def cpus(self) -> int:
        """The CPUs of the cluster (joined or started first)."""
        self.connect(stay=self.keep)
        return int(ray_module().cluster_resources().get("CPU", 0))

    def open(self, plan: RunPlan) -> tuple[Transport, int]:
        self.connect(stay=self.keep)
        ray = ray_module()
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        # A kept pool's Ray stays up between runs (it stops at exit); a league's stops after.
        return RayTransport(ray, plan, self._head, on_close=(lambda: None) if self.keep
                            else self.shutdown, on_lost=self.leave,
                            portable=self.portable), count


class _NotMainThread(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "not the main thread" not in record.getMessage()


class RayTransport(Transport):
    """One Ray actor per worker; a handed match is a pending `play` call."""

    noun = "Ray league worker"
    wait_to_start = True   # an actor waits for a free CPU: for ever, if its node was lost

    def __init__(self, ray, plan: RunPlan, head: Head, on_close: Callable[[], None],
                 on_lost: Callable[[], None], portable: bool = False):
        """`on_lost`: leaves Ray, once its head is lost (`RayPool.leave`)."""
        self.ray = ray
        self.plan = plan
        self.head = head
        self.on_close = on_close
        self.on_lost = on_lost
        self.kept: OrderedDict[str, Any] | None = OrderedDict() if portable else None
        """A portable pool's bundles: version -> ObjectRef, the most recently played last."""
        self.lock = threading.Lock()   # the match thread and the admission thread ship
        self.shipments: list[tuple[RunPlan, Any]] = []
        """The latest plans (a service's ladders), each with the ObjectRef of (plan, bundles):
        put once, carried by every play call of that plan."""
        # Sync actors run their calls one at a time on one thread that lives as long as the
        # actor: the bot processes it starts live as long as the actor (sandbox rule).
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(LeagueWorker)
        self.actors: dict[int, Any] = {}
        self.in_flight: dict[Any, tuple[int, MatchSpec]] = {}   # ObjectRef -> (worker, spec)
        self.starting: dict[Any, int] = {}   # ObjectRef of a new actor's pid -> its worker

    def ship(self, plan: RunPlan) -> dict[str, Any] | None:
        """The bundles of `plan`'s bot versions, each packed and put into the object store
        the first time it is played (None: not a portable pool). Actors hold the references
        they were sent, so a bundle dropped here stays while a match still needs it."""
        if self.kept is None:
            return None
        return {bot.version: self.bundle(bot.source, bot.version, bot.name)
                for bot in plan.bots if not is_builtin(bot.source)}

    def bundle(self, folder: str, version: str, name: str = "") -> Any:
        """The ObjectRef of a version's packed folder, put the first time it is asked for."""
        with self.lock:
            if version not in self.kept:
                if not Path(folder).is_dir():
                    raise HostError(f"the host could not ship bot {name or version}: its "
                                    f"folder {folder} is gone (not the bot's fault: its "
                                    "matches are not played; restore the folder)")
                self.kept[version] = self.ray.put(pack_version(folder))
            self.kept.move_to_end(version)
            ref = self.kept[version]
            while len(self.kept) > KEPT_BUNDLES:
                self.kept.popitem(last=False)
            return ref

    def shipment(self, plan: RunPlan) -> Any:
        """The ObjectRef of (plan, its bundles), put the first time the plan is handed."""
        for known, ref in self.shipments:
            if known == plan:
                return ref
        ref = self.ray.put((plan, self.ship(plan)))
        self.shipments = [*self.shipments[-(SHIPMENTS - 1):], (plan, ref)]
        return ref

    def start(self, index: int) -> None:
        self.actors[index] = self.actor_class.remote(self.plan, index, self.ship(self.plan))
        # Answered once the actor runs: until then it is handed nothing (Ready).
        self.starting[self.actors[index].pid.remote()] = index

    def use(self, plan: RunPlan) -> None:
        self.plan = plan

    def hand(self, index: int, spec: MatchSpec, plan: RunPlan) -> None:
        call = self.actors[index].play.remote(spec, self.shipment(plan))
        self.in_flight[call] = (index, spec)

    def next_event(self) -> Done | Died | Ready:
        ray = self.ray
        quiet_since = time.monotonic()
        while True:
            # Its head is asked whatever comes back (nodes that live on without it may go on
            # finishing matches until Ray ends this process), before a wait: what is ready
            # by then is taken.
            if self.head.lost():
                raise self.head.error()
            ready, _ = ray.wait([*self.in_flight, *self.starting], num_returns=1,
                                timeout=max(0.0, self.head.due - time.monotonic()))
            if ready:
                break
            if time.monotonic() - quiet_since >= STALL_NOTE_SECONDS:
                quiet_since = time.monotonic()
                waiting = f"; {len(self.starting)} worker(s) wait for one" \
                    if self.starting else ""
                log.warning("no match finished in %.0f s; Ray has %s CPUs free of %s%s",
                            STALL_NOTE_SECONDS, ray.available_resources().get("CPU", 0),
                            ray.cluster_resources().get("CPU", 0), waiting)
        if ready[0] in self.starting:
            index = self.starting.pop(ready[0])
            try:
                log.info("%s %d is pid %d", self.noun, index, ray.get(ready[0]))
                return Ready(index)
            except ray.exceptions.RayActorError as error:
                return _died(index, error)
        index, _spec = self.in_flight.pop(ready[0])
        try:
            return Done(index, ray.get(ready[0]))
        except ray.exceptions.RayActorError as error:
            for ref, (held, _) in list(self.in_flight.items()):
                if held == index:   # the dead actor's other calls fail too: forget them now
                    del self.in_flight[ref]
            return _died(index, error)
        except ray.exceptions.RayTaskError as error:
            cause = error.as_instanceof_cause()
            if isinstance(cause, HostError):
                raise HostError(str(cause).splitlines()[-1]) from None
            if isinstance(cause, ArenaError):   # what the actor could say in one line
                raise LeagueError(str(cause).splitlines()[-1]) from None
            raise

    def running(self) -> dict[int, Any]:
        """Worker -> its actor, for the actors that run (not waiting for a CPU). Read by the
        service's admission thread too: the copies are taken in C, under the GIL."""
        waiting = set(self.starting.values())
        return {index: actor for index, actor in list(self.actors.items())
                if index not in waiting}

    def close(self, at_once: bool) -> None:
        """Ends the actors: after their matches, each ending its bots (`__ray_shutdown__`),
        or `at_once` with ray.kill (its reaper ends its bots then); one that does not end
        within CLOSE_SECONDS is killed."""
        try:
            if not self.head.answers():   # each call below would wait for it in vain
                log.warning("the Ray cluster's head (GCS at %s) does not answer: its actors "
                            "and their bots end when their nodes give it up (within a "
                            "minute)", self.head.address)
                self.on_lost()
                return
            if not at_once:   # not an actor still waiting to run: it never would
                ending = [actor.__ray_terminate__.remote() for actor in self.running().values()]
                self.ray.wait(ending, num_returns=len(ending), timeout=CLOSE_SECONDS)
            for actor in self.actors.values():
                self.ray.kill(actor)   # a no-op for an actor that has ended
        finally:
            self.actors.clear()
            self.starting.clear()
            self.on_close()
