"""`arena bench serve --ray-seconds`: the service's matches per minute on one Ray node and on
two, each node given one CPU (`--num-cpus 1`) and pinned to a core of its own (so two nodes
share this machine's two cores fairly, and one node cannot spread its bots over both), and
its live actors and bot processes as the batches go by (they must stay flat). The service's
own process (its database, refits, scheduling) is not pinned; Ray's servers of a node run on
its core, as they would on its machine.

Each run starts a cluster of its own on this machine (arena.bench.raycluster: one `ray start`
per node, each with its own temporary and data folders), then runs the service's match thread
(`MatchPlayer`, its default batch sizes) on a portable RayPool joined to it, one actor per
node, with real sandboxed sample bots: bots go to the nodes through Ray's object store, logs
come back with the matches. Matches are counted from the first one stored (start-up, Ray's
and the bots', is not timed).
"""
from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tabulate import tabulate

from arena.bench.raycluster import LocalCluster
from arena.bench.serve import add_admitted
from arena.bots import BotSpec
from arena.keys import LeagueKey
from arena.sandbox import cgroups
from arena.serve.db import ServiceDB
from arena.serve.player import MatchPlayer
from engine import registry

BOTS = ("random", "first", "greedy")
TARGET_RATIO = 1.7


@dataclass
class RayRun:
    nodes: int
    matches: int
    seconds: float
    batches: int
    nodes_used: int
    samples: list[tuple[int, int, int, int]]
    """(batches, live actors, live bots, bot processes) as the batches go by."""

    @property
    def per_minute(self) -> float:
        return self.matches * 60 / self.seconds


def _actors(pids: set[int]) -> int:
    """The service's match actors among `pids` (their process title names the class)."""
    count = 0
    for pid in pids:
        try:
            count += Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::LeagueWorker")
        except OSError:
            pass
    return count


def ray_run(folder: Path, nodes: int, seconds: float, seed: int, token: str,
            progress: Callable[[str], None] = lambda line: None) -> RayRun:
    """Plays the service's batches for `seconds` on a cluster of `nodes` one-CPU nodes,
    joined with `token` (in this process's environment before Ray is imported)."""

    from arena.league.ray_pool import RayPool
    from sample_bots import sample_bot
    db = ServiceDB.open(folder / "data")
    ladder = db.ensure_ladder("mandala", 2, registry.get("mandala").rules(), {"move_time": 1.0})
    for name in BOTS:
        source = sample_bot(name)
        add_admitted(db, ladder.id, f"author-{name}", name, BotSpec.load(source).version,
                     str(source))
    progress(f"ray: starting {nodes} node(s) of 1 CPU ...")
    with LocalCluster(folder / "cluster", nodes=nodes, cpus=1, token=token,
                      pin=True) as cluster:
        os.environ.update(cluster.auth)   # this process is the cluster's driver
        import ray
        pool = RayPool(nodes, cluster.address, quiet=True, keep=True, portable=True)
        pool.connect(stay=True)
        player = MatchPlayer(db, [ladder], pool, LeagueKey.new(), nodes,
                             folder / "data" / "logs", seed=seed)
        try:
            while not player.turn(ladder):   # start-up: the actors and their first bots
                time.sleep(0.5)
            first, started, batches, samples = db.match_count(ladder.id), time.monotonic(), 0, []
            while time.monotonic() - started < seconds:
                if player.turn(ladder):
                    batches += 1
                    if batches % 10 == 0:
                        members = cluster.members()
                        samples.append((batches, _actors(members), *cgroups.bots_of(members)))
            elapsed = time.monotonic() - started
            matches = db.match_count(ladder.id) - first
            used = db.one("SELECT COUNT(DISTINCT node) FROM matches")[0]
        finally:
            pool.close()
            ray.shutdown()
    progress(f"ray: {nodes} node(s): {matches} matches in {elapsed:.0f} s")
    return RayRun(nodes, matches, elapsed, batches, used, samples)


def ray_table(runs: list[RayRun]) -> str:
    rows = [[run.nodes, run.matches, f"{run.seconds:.0f}", f"{run.per_minute:.0f}",
             run.batches, run.nodes_used,
             " ".join(f"{actors}/{bots}/{processes}" for _, actors, bots, processes
                      in run.samples[::max(1, len(run.samples) // 6)])]
            for run in runs]
    table = tabulate(rows, headers=["nodes (1 CPU, 1 core each)", "matches", "seconds",
                                    "matches/min", "batches", "nodes that played",
                                    "actors/bots/bot processes every 10 batches"],
                     tablefmt="simple")
    if len(runs) == 2 and runs[0].per_minute:
        ratio = runs[1].per_minute / runs[0].per_minute
        table += (f"\ntwo nodes / one node: {ratio:.2f}x (target >= {TARGET_RATIO}x)")
    return table


def run(folder: Path, seconds: float, seed: int,
        progress: Callable[[str], None] = lambda line: None) -> str:
    token = secrets.token_hex(16)   # one for both clusters: Ray reads it once
    runs = [ray_run(folder / f"nodes-{nodes}", nodes, seconds, seed, token, progress)
            for nodes in (1, 2)]
    return (f"The service on Ray: matches per minute over {seconds:.0f} s of batches of real "
            f"sandboxed bots ({', '.join(BOTS)}), one actor per node\n{ray_table(runs)}")
