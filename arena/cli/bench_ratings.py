"""`arena bench ratings`: Elo fit and intervals on simulated matches (arena/bench/ratings.py)."""
from __future__ import annotations

import click

from arena.bench import ratings as ratings_bench
from arena.cli.root import bench


@bench.command("ratings")
@click.option("--matches", type=click.IntRange(min=2), default=100_000, show_default=True,
              help="Simulated 2-player matches (seat-swapped pairs of deals).")
@click.option("--bots", type=click.IntRange(min=2), default=20, show_default=True,
              help="Bots in the simulated league.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the true ratings and the simulated results.")
def bench_ratings(matches: int, bots: int, seed: int) -> None:
    """Seconds to fit maximum-likelihood Elo with intervals (target: 100,000 matches < 2 s)."""
    for line in ratings_bench.run(matches=matches, bots=bots, seed=seed):
        click.echo(line)
