"""`arena bench ismcts`: search iterations per second of the ismcts bot (arena/bench/ismcts.py)."""
from __future__ import annotations

import json

import click
from tabulate import tabulate

from arena.bench import ismcts as ismcts_bench
from arena.cli.root import bench
from arena.cli.bench_engine import per_game_options


@bench.command("ismcts")
@per_game_options("Search time per game and player count.")
def bench_ismcts(seconds: float, game_ids: tuple[str, ...], as_json: bool) -> None:
    """ISMCTS iterations per CPU second on one core, and what a move gets at 0.2 s per move."""
    figures = ismcts_bench.measure_all(list(game_ids), seconds)
    if as_json:
        click.echo(json.dumps({"benchmark": "ismcts", "seconds_per_configuration": seconds,
                               "results": [figure.to_json() for figure in figures]}))
        return
    rows = [(f.game, f.players, f.positions, f.iterations, f"{f.iterations_per_second:,.0f}",
             f"{f.iterations_per_move:,.0f}") for f in figures]
    click.echo(tabulate(rows, headers=("game", "players", "positions", "iterations",
                                       "iterations/s", f"per move at {ismcts_bench.MOVE_TIME} s"),
                        colalign=("left", "right", "right", "right", "right", "right"),
                        disable_numparse=True))
