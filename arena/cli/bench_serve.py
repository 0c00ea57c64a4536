"""`arena bench serve`: the ladder service's scheduling, memory and life
(arena/bench/serve.py)."""
from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import click

from arena.bench import serve as serve_bench
from arena.cli.root import bench


@bench.command("serve")
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True,
              help="Runs of the new-bot comparison per scheduling.")
@click.option("--matches", type=click.IntRange(min=2), default=20_000, show_default=True,
              help="Matches of the memory run (memory is shown after 2,000 and these).")
@click.option("--batches", type=click.IntRange(min=0), default=240, show_default=True,
              help="Short batches of real bots for the service's life (240: an hour of "
                   "batches); 0 leaves that part out.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Kept workers of the service's life (one table each per batch).")
@click.option("--ray-seconds", type=click.IntRange(min=0), default=60, show_default=True,
              help="Seconds of batches on a Ray cluster of one node, then of two (each node "
                   "one CPU, started here); 0 leaves that part out.")
@click.option("--seed", type=int, default=1, show_default=True)
def bench_serve(repeats: int, matches: int, batches: int, workers: int, ray_seconds: int,
                seed: int) -> None:
    """Matches to settle a new bot (adaptive vs round robin, target at most half), the
    service's memory after 2,000 and 20,000 matches (target: flat), its life: live bot
    processes and memory over an hour of batches of real bots (target: flat) and the share
    of matches voided for the host's load, and its matches per minute on one Ray node and
    on two (target: at least 1.7x) with its actors and bots as batches go by (flat)."""
    def progress(line: str) -> None:
        click.echo(line, err=True)

    checkpoints = sorted({min(2_000, matches), matches})
    click.echo(serve_bench.run(repeats=repeats, checkpoints=checkpoints, seed=seed,
                               progress=progress, batches=batches, workers=workers))
    if ray_seconds:
        # Not imported here: Ray reads the cluster's token when it is imported (serve_ray).
        if importlib.util.find_spec("ray") is None:
            click.echo("\nThe service on Ray: left out (Ray is not installed: pip install "
                       "'arena[ray]')")
            return
        from arena.bench import serve_ray
        with tempfile.TemporaryDirectory(prefix="arena-bench-ray-") as scratch:
            click.echo("\n" + serve_ray.run(Path(scratch), ray_seconds, seed, progress))
