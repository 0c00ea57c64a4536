"""`arena bench serve`: the ladder service's scheduling and memory (arena/bench/serve.py)."""
from __future__ import annotations

import click

from arena.bench import serve as serve_bench
from arena.cli import bench


@bench.command("serve")
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True,
              help="Runs of the new-bot comparison per scheduling.")
@click.option("--matches", type=click.IntRange(min=2), default=20_000, show_default=True,
              help="Matches of the memory run (memory is shown after 2,000 and these).")
@click.option("--seed", type=int, default=1, show_default=True)
def bench_serve(repeats: int, matches: int, seed: int) -> None:
    """Matches to settle a new bot (adaptive vs round robin, target at most half) and the
    service's memory after 2,000 and 20,000 matches (target: flat)."""
    checkpoints = sorted({min(2_000, matches), matches})
    click.echo(serve_bench.run(repeats=repeats, checkpoints=checkpoints, seed=seed,
                               progress=lambda line: click.echo(line, err=True)))
