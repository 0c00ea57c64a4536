"""`arena bench fairness`: CPU theft by a spinning bot, and what fair play costs a league."""
from __future__ import annotations

import click

from arena.bench import fairness
from arena.cli.root import bench


@bench.command("fairness")
@click.option("--matches", type=click.IntRange(min=2), default=8, show_default=True,
              help="Matches of the fixed-work bot against each opponent (a round each).")
@click.option("--deals", type=click.IntRange(min=1), default=20, show_default=True,
              help="Deals of the league whose throughput is compared.")
@click.option("--repeats", type=click.IntRange(min=1), default=2, show_default=True,
              help="League runs of each kind (alternated; the best of each is compared).")
def bench_fairness(matches: int, deals: int, repeats: int):
    """A fixed-work bot's median move time against a quiet bot and against a CPU thief
    (target <= 1.2x), and league throughput with fair play against before (target >= 0.8x)."""
    from arena import sandbox
    sandbox.require()
    for line in fairness.run(matches, deals, repeats):
        click.echo(line)
