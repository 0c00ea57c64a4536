"""`arena bench seating`: what mirrored deals buy, per game and player count
(arena/bench/seating.py)."""
from __future__ import annotations

import json
import math

import click
from tabulate import tabulate

from arena.bench import seating as seating_bench
from arena.cli.root import bench
from engine import registry


@bench.command("seating")
@click.option("--deals", type=click.IntRange(min=3), default=300, show_default=True,
              help="Deals per game, player count and pairing (each in every seating).")
@click.option("--game", "game_ids", multiple=True, metavar="GAME",
              help="Only this game (repeatable); default: every game a league plays.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(sorted(seating_bench.PAIRINGS)),
              help="Only this pairing (repeatable); default: close and distant (search, "
                   "ismcts against greedy, is slow: asked for by name).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def bench_seating(deals: int, game_ids: tuple[str, ...], kinds: tuple[str, ...], seed: int,
                  as_json: bool) -> None:
    """Variance of a mirrored set of games (one deal in every seating) against as many
    independent games (a deal each), for close bots (greedy against greedy with some random
    moves) and distant ones (greedy against random), played in process."""
    for game_id in game_ids:
        registry.get(game_id)   # an unknown game is refused in one line, naming the known
    configurations = [config for config in seating_bench.CONFIGURATIONS
                      if not game_ids or config[0] in game_ids]
    figures = seating_bench.measure_all(configurations, kinds or seating_bench.DEFAULT_KINDS,
                                        deals, seed)
    if as_json:
        click.echo(json.dumps({"benchmark": "seating", "deals": deals, "seed": seed,
                               "results": [figure.to_json() for figure in figures]}))
        return
    rows = [(f.game, f.players, f.kind, f"{f.bot_a} vs {f.bot_b}", f"{f.a_mean:.3f}",
             f"{f.independent_variance:.4f}", f"{f.mirrored_variance:.4f}",
             _ratio(f), "-" if not math.isfinite(f.worth) else f"{f.worth:.1f}")
            for f in figures]
    click.echo(tabulate(rows, headers=("game", "players", "kind", "bots", "A's result",
                                       "var independent", "var mirrored",
                                       "ratio (90% interval)", "set worth (games)"),
                        colalign=("left", "right", "left", "left", "right", "right", "right",
                                  "right", "right"),
                        disable_numparse=True))
    click.echo(f"{deals} deals each; a set is one deal in every seating (players games; with "
               "1 player, A and B on one shared deal): its mean result's variance, against "
               "the same games each on a deal of its own. ratio = independent / mirrored; "
               "worth = games x ratio. A's result: share of pairwise points (1 player: A's "
               "score minus B's).")


def _ratio(figure: seating_bench.Figure) -> str:
    if not math.isfinite(figure.ratio):
        return "- (no spread)"   # A won every game: nothing for mirroring to cancel
    return f"{figure.ratio:.2f} ({figure.ratio_low:.2f}-{figure.ratio_high:.2f})"
