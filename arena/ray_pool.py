"""Leagues on a Ray cluster: the executor that takes a league past one machine.

`RayPool` is an `arena.workers.Executor`, like `ProcessPool`, with Ray in place of local worker
processes: one Ray actor per worker, each holding its own `SeatSource` (its pool of sandboxed
bot processes) for the whole run and playing matches with `play_spec`, exactly as a local
worker does. The league process stays the only writer of the database: actors return
`FinishedMatch`es and the parent commits each one, so resume and determinism work unchanged.

Each actor is kept at most `AHEAD` matches ahead (one playing, one waiting), so fast actors take
more matches and a stopped league loses at most that many per actor. An actor that dies (its
node lost, killed, out of memory) is replaced and its unfinished matches are played again.

Cluster: with no address, Ray starts a local instance for the run (all cores of this machine)
and stops it after; with `--ray-address` (or RAY_ADDRESS) the league joins a running cluster.
Every node must have Arena installed and bubblewrap, and the bot folders at the same absolute
paths as on the machine that runs the league (bot versions are checked on every node).
"""
from __future__ import annotations

import logging
import socket
import sys
from typing import Iterator, Sequence

from arena.league_config import LeagueError, RunPlan
from arena.workers import Executor, SeatSource, play_spec
from arena.schedule import MatchSpec
from arena.store import FinishedMatch

AHEAD = 2
MAX_RESTARTS = 5


def _ray():
    try:
        import ray
    except ImportError:
        raise LeagueError("the Ray executor needs Ray: pip install 'arena[ray]' "
                          "(or leave out --executor ray)") from None
    return ray


def _check_reachable(address: str | None) -> None:
    """Ray waits minutes for an address that does not answer: fail fast on a plain
    HOST:PORT that refuses or times out."""
    if not address or "://" in address or address == "auto":
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except (OSError, ValueError) as error:
        raise LeagueError(f"cannot reach the Ray cluster at {address} "
                          f"({getattr(error, 'strerror', None) or error}): check --ray-address "
                          "(HOST:PORT of the cluster's head node)") from None


class LeagueWorker:
    """What runs in one Ray actor: a worker's bots and the matches handed to it."""

    def __init__(self, plan: RunPlan, index: int):
        self.plan = plan
        self.index = index
        self.source = SeatSource(plan)

    def play(self, spec: MatchSpec) -> FinishedMatch:
        return play_spec(self.source, self.plan, spec, self.index)

    def close(self) -> None:
        self.source.close()


class RayPool(Executor):
    """Matches on Ray actors, `workers` of them (default: the cluster's CPUs)."""

    def __init__(self, workers: int | None = None, address: str | None = None):
        if workers is not None and workers < 1:
            raise LeagueError(f"--workers must be at least 1, not {workers}")
        self.workers = workers
        self.address = address
        self.restarts = 0
        self._started_ray = False

    def connect(self, *, stay: bool = False) -> None:
        """Joins the cluster (or starts a local one); LeagueError in one line if it cannot.
        Called before a league folder is created, so a bad address creates nothing.

        `stay`: keep Ray up after each run (a service runs many; Ray stops at exit), rather
        than stopping a local instance this pool started when its run ends."""
        ray = _ray()
        if ray.is_initialized():
            return
        _check_reachable(self.address)
        try:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise LeagueError(f"cannot reach the Ray cluster at {self.address}: {error}; "
                              "check --ray-address (or RAY_ADDRESS)") from None
        self._started_ray = not stay

    def run(self, plan: RunPlan, specs: Sequence[MatchSpec]) -> Iterator[FinishedMatch]:
        if not specs:
            return
        self.connect()
        ray = _ray()
        # Sync actors run their calls one at a time on one thread that lives as long as the
        # actor: the bot processes it starts live as long as the actor (sandbox rule).
        actor_class = ray.remote(num_cpus=1, max_restarts=0)(LeagueWorker)
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        todo = list(reversed(specs))   # pop() from the end keeps schedule order
        actors = {index: actor_class.remote(plan, index) for index in range(min(count,
                                                                              len(specs)))}
        in_flight: dict = {}   # ObjectRef -> (actor index, spec)
        try:
            for index in actors:
                for _ in range(AHEAD):
                    self._hand(actors, index, todo, in_flight)
            while in_flight:
                [ref], _ = ray.wait(list(in_flight), num_returns=1)
                index, spec = in_flight.pop(ref)
                try:
                    finished = ray.get(ref)
                except ray.exceptions.RayActorError as error:
                    actors[index] = self._replace(ray, actor_class, plan, index, spec,
                                                  in_flight, todo, error)
                    for _ in range(AHEAD - self._held(index, in_flight)):
                        self._hand(actors, index, todo, in_flight)
                    continue
                except ray.exceptions.RayTaskError as error:
                    cause = error.as_instanceof_cause()
                    if isinstance(cause, LeagueError):
                        raise LeagueError(str(cause).splitlines()[-1]) from None
                    raise
                self._hand(actors, index, todo, in_flight)
                yield finished
        finally:
            for actor in actors.values():
                ray.kill(actor)   # ends the actor's process, and its bots with it
            if self._started_ray:
                ray.shutdown()
                self._started_ray = False

    @staticmethod
    def _hand(actors: dict, index: int, todo: list, in_flight: dict) -> None:
        if todo:
            spec = todo.pop()
            in_flight[actors[index].play.remote(spec)] = (index, spec)

    @staticmethod
    def _held(index: int, in_flight: dict) -> int:
        return sum(1 for held, _ in in_flight.values() if held == index)

    def _replace(self, ray, actor_class, plan: RunPlan, index: int, spec: MatchSpec,
                 in_flight: dict, todo: list, error: Exception):
        """A new actor in place of a dead one; its unfinished matches go back to `todo`."""
        self.restarts += 1
        if self.restarts > MAX_RESTARTS:
            raise LeagueError(f"Ray league workers died {self.restarts} times (the last: "
                              f"{error}): finished matches are stored; resume the league")
        lost = [spec]
        for ref, (held, held_spec) in list(in_flight.items()):
            if held == index:   # the dead actor's other matches fail too: take them back now
                del in_flight[ref]
                lost.append(held_spec)
        todo.extend(sorted(lost, key=lambda lost_spec: lost_spec.order, reverse=True))
        print(f"arena: Ray league worker {index} died; playing its {len(lost)} unfinished "
              "matches again", file=sys.stderr)
        return actor_class.remote(plan, index)
