"""`arena bench serve`: the ladder service's scheduling, memory and life
(arena/bench/serve.py)."""
from __future__ import annotations

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
@click.option("--seed", type=int, default=1, show_default=True)
def bench_serve(repeats: int, matches: int, batches: int, workers: int, seed: int) -> None:
    """Matches to settle a new bot (adaptive vs round robin, target at most half), the
    service's memory after 2,000 and 20,000 matches (target: flat), and its life: live bot
    processes and memory over an hour of batches of real bots (target: flat) and the share
    of matches voided for the host's load."""
    checkpoints = sorted({min(2_000, matches), matches})
    click.echo(serve_bench.run(repeats=repeats, checkpoints=checkpoints, seed=seed,
                               progress=lambda line: click.echo(line, err=True),
                               batches=batches, workers=workers))
