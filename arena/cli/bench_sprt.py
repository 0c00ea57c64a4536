"""`arena bench sprt`: pairs to a decision, pentanomial against trinomial (arena/bench/sprt.py)."""
from __future__ import annotations

import json

import click
from tabulate import tabulate

from arena.bench import sprt as sprt_bench
from arena.cli.root import bench


@bench.command("sprt")
@click.option("--runs", type=click.IntRange(min=1), default=200, show_default=True,
              help="Simulated tests (each on its own stream of pairs).")
@click.option("--elo", "true_elo", type=float, default=20.0, show_default=True,
              help="NEW's true logistic Elo advantage.")
@click.option("--elo0", type=float, default=0.0, show_default=True)
@click.option("--elo1", type=float, default=20.0, show_default=True)
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True)
@click.option("--beta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def bench_sprt(runs: int, true_elo: float, elo0: float, elo1: float, alpha: float,
               beta: float, seed: int, as_json: bool) -> None:
    """Average pairs to a decision of the SPRT on simulated duplicate pairs: the pentanomial
    test (pairs) against the trinomial one (games as if independent) on the same games."""
    figures = sprt_bench.measure(runs, true_elo, elo0, elo1, alpha, beta, seed=seed)
    if as_json:
        click.echo(json.dumps({"benchmark": "sprt", "true_elo": true_elo, "elo0": elo0,
                               "elo1": elo1, "alpha": alpha, "beta": beta,
                               "results": [vars(f) for f in figures]}))
        return
    click.echo(f"true Elo {true_elo:g}, H0 {elo0:g} / H1 {elo1:g}, alpha {alpha:g}, "
               f"beta {beta:g}; deals favour a seat by {sprt_bench.DEAL_ELO:g} Elo, "
               f"{sprt_bench.DRAW:.0%} draws")
    pent, tri = figures
    rows = [(f.test, f.runs, f"{f.mean_pairs:,.0f}", f"{f.accepted_h1:.1%}", f.undecided)
            for f in figures]
    click.echo(tabulate(rows, headers=("test", "runs", "mean pairs to decide", "accepted H1",
                                       "undecided"),
                        colalign=("left", "right", "right", "right", "right")))
    click.echo(f"pentanomial needs {pent.mean_pairs / tri.mean_pairs:.0%} of the trinomial's "
               "pairs")
