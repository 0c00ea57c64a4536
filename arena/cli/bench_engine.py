"""`arena bench engine`: random-playout speed per game and player count (arena/bench/engine.py)."""
from __future__ import annotations

import json

import click
from tabulate import tabulate

from arena.bench import engine as engine_bench
from arena.cli.root import bench


def per_game_options(seconds_help: str):
    """The options of a benchmark timed per game and player count: --seconds (whose meaning
    `seconds_help` says), --game (repeatable) and --json."""
    def decorate(command):
        command = click.option("--json", "as_json", is_flag=True,
                               help="Print the figures as one JSON object.")(command)
        command = click.option("--game", "game_ids", multiple=True, metavar="GAME",
                               help="Only this game (repeatable); default: every registered "
                                    "game.")(command)
        return click.option("--seconds", type=click.FloatRange(min=0.0, min_open=True),
                            default=2.0, show_default=True, help=seconds_help)(command)
    return decorate


@bench.command("engine")
@per_game_options("Wall time of random playouts per game and player count.")
def bench_engine(seconds: float, game_ids: tuple[str, ...], as_json: bool) -> None:
    """Random-playout speed: plies and games per second on one core, next to the targets
    and, for mandala and 4-player flowers-mandala, to a plain implementation of the same
    rules measured in turns beside it (the ratio should be at least 5).

    Rates are per CPU second of the playouts, so other load on the machine barely moves them.
    """
    configs = engine_bench.configurations(list(game_ids))
    figures = [engine_bench.measure(game_id, players, seconds) for game_id, players in configs]
    if as_json:
        click.echo(json.dumps({"benchmark": "engine", "seconds_per_configuration": seconds,
                               "results": [figure.to_json() for figure in figures]}))
        return
    click.echo(tabulate([_row(figure) for figure in figures], headers=_HEADERS,
                        colalign=_ALIGN, disable_numparse=True))


_HEADERS = ("game", "players", "games", "plies", "plies/s", "target plies/s", "met",
            "plain plies/s", "x plain", f"{engine_bench.SPEEDUP_TARGET}x met", "games/s")
_ALIGN = ("left", "right", "right", "right", "right", "right", "left", "right", "right", "left",
          "right")
_MET = {None: "", True: "yes", False: "NO"}


def _row(f: engine_bench.Figure) -> tuple:
    target = "" if f.target_plies_per_second is None else f"{f.target_plies_per_second:,}"
    plain = "" if f.plain_plies_per_second is None else f"{f.plain_plies_per_second:,.0f}"
    speedup = "" if f.speedup is None else f"{f.speedup:.1f}"
    return (f.game, f.players, f.games, f.plies, f"{f.plies_per_second:,.0f}", target,
            _MET[f.meets_target], plain, speedup, _MET[f.meets_speedup],
            f"{f.games_per_second:,.1f}")
