"""`arena league run` / `resume` / `export` / `matches`, `arena bench league`.

A league comes from flags, from a TOML file (`--config`; its keys: arena.league.settings), or
both (flags win). Opening, checking and playing it is arena.league.lifecycle's.
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import click
from tabulate import tabulate

from arena.bots.manifest import resolution_help
from arena.cli.root import bench, main
from arena.cli.options import (bot_checker, executor_from, output_option, rule_option,
                               run_options, sandbox_option, seed_option, timing_options)
from arena.cli.progress import Progress, stopped_cleanly
from arena.keys import random_seed
from arena.league.config import LeagueError
from arena.league.lifecycle import League, named_folder, open_league, run
from arena.league.schedule import DEFAULT_MAX_TABLES, DEFAULT_SEATING, SEATINGS
from arena.league.settings import config_from_settings, read_config_file
from arena.league.store import (export_lines, read_match_rows, read_missing_protections,
                                read_outcomes, write_export)
from arena.league.workers import Executor
from arena.stats.ratings import Outcome
from arena.stats.report import (Leader, ladder_text, missing_protections_footer,
                                order_effect_footer)


@main.group()
def league() -> None:
    """Leagues: many matches among bots, fair schedules, stored results, resume."""


@league.command("run")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="A TOML file with the league's settings (flags override it).")
@click.option("--bot", "bots", multiple=True, metavar="FOLDER",
              help="A bot folder or a built-in bot; repeat for each bot. " + resolution_help())
@click.option("--game", default=None, help="The game id (see `arena games`).")
@rule_option
@click.option("--players", type=int, default=None, help="Players per match (default 2).")
@click.option("--deals", type=int, default=None,
              help="Rounds: in each, every table plays every seating once (default 10).")
@seed_option("league")
@timing_options()
@click.option("--gauntlet", default=None, metavar="BOT",
              help="Only matches of this bot (name or folder) against the others.")
@click.option("--tables", type=int, default=None,
              help=f"With 3-4 players, the most groups of bots to play (a balanced sample "
                   f"when there are more; default {DEFAULT_MAX_TABLES}).")
@click.option("--seating", type=click.Choice(SEATINGS), default=None,
              help=f"independent: every match a deal of its own, so no bot meets a deal "
                   f"twice (for bots you do not trust); mirrored: each table's deal in every "
                   f"seating (trusted bots: a bot's processes could pass the deal on). "
                   f"Default {DEFAULT_SEATING}; see `arena bench seating`.")
@click.option("--name", default=None, help="League name: its folder is results/NAME.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="League folder, instead of results/NAME.")
@sandbox_option()
@run_options
def run_command(config_path, bots, game, option_pairs, players, deals, seed, move_time, tc,
                startup_time, gauntlet, tables, seating, name, out, unsafe_no_sandbox, workers,
                executor, ray_address, pin, fresh_bots, quiet, skip_check):
    """Run a new league and print its ladder."""
    settings = read_config_file(config_path) if config_path else {}
    flags = {"game": game, "players": players, "deals": deals, "seed": seed,
             "move_time": move_time, "tc": tc, "startup_time": startup_time,
             "gauntlet": gauntlet, "tables": tables, "seating": seating, "name": name,
             # The flag can only turn it on: left out, the config file's value holds.
             "unsafe_no_sandbox": unsafe_no_sandbox or None, "bots": list(bots) or None}
    settings.update({key: value for key, value in flags.items() if value is not None})
    if "seed" not in settings:
        settings["seed"] = random_seed()
    config = config_from_settings(settings, option_pairs)
    pool = executor_from(workers, executor, ray_address, quiet, pin=pin)
    if out is None:
        out = named_folder(settings.get("name") or (
            f"{config.game}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}"))
    # Every check, the bots' short matches last, before the league folder is created.
    with open_league(out, config, check_bots=bot_checker(skip_check, quiet)) as opened:
        if not quiet:
            config = opened.config
            click.echo(f"league {out}: {config.game}, {config.players} players, "
                       f"{len(opened.bots)} bots, {len(opened.specs)} matches "
                       f"({config.seating} deals), "
                       f"seed {config.seed}, {config.timing().describe()}", err=True)
        _play(opened, pool, fresh_bots, quiet)


@league.command("resume")
@click.argument("folder", type=click.Path(path_type=Path))
@run_options
def resume_command(folder, workers, executor, ray_address, pin, fresh_bots, quiet,
                   skip_check):
    """Finish a stopped or killed league (results/NAME): plays only the missing matches."""
    pool = executor_from(workers, executor, ray_address, quiet, pin=pin)
    with open_league(folder, check_bots=bot_checker(skip_check, quiet)) as opened:
        if not quiet:
            click.echo(f"league {folder}: {len(opened.missing())} of {len(opened.specs)} "
                       "matches to play", err=True)
        _play(opened, pool, fresh_bots, quiet)


def _play(opened: League, pool: Executor, fresh_bots: bool, quiet: bool) -> None:
    """Runs the league's missing matches with a progress bar, then prints the ladder."""
    leader = Leader(read_outcomes(opened.folder))
    bar = Progress(len(opened.specs), opened.done(), unit="matches", status=leader.text,
                   stream=None if quiet else sys.stderr)

    def on_match(outcome: Outcome) -> None:
        leader.add(outcome)
        bar.advance()

    with stopped_cleanly(lambda: f"stopped: {opened.done()} of {len(opened.specs)} matches "
                                 f"stored in {opened.folder}; finish with `arena league "
                                 f"resume {opened.folder}`"), bar:
        run(opened, pool, fresh_bots=fresh_bots, on_match=on_match)
    outcomes = read_outcomes(opened.folder)
    if outcomes:
        click.echo(ladder_text(outcomes))
        missing = {str(opened.folder): read_missing_protections(opened.folder)}
        for line in missing_protections_footer(missing) + order_effect_footer(outcomes):
            click.echo(line)


@bench.command("league")
@click.option("--deals", type=int, default=20,
              help="Deals per league (default 20: 240 matches).")
@click.option("--repeats", type=int, default=3,
              help="Runs of each configuration (1 worker, 1 pinned, 2), alternating "
                   "(default 3).")
@click.option("--move-time", type=float, default=1.0, help="Per-move limit in seconds.")
def bench_league(deals, repeats, move_time):
    """Matches per second of a 4-bot mandala league of sample bots, 1 worker vs 2 (and vs 1
    pinned to a core, as each of 2 workers on 2 cores is)."""
    from arena.bench.league import measure, render
    click.echo(render(measure(deals=deals, move_time=move_time, repeats=repeats)))


@league.command("export")
@click.argument("folder", type=click.Path(path_type=Path))
@output_option("Write to this file")
def export_command(folder, output):
    """Write a league's match records as JSON Lines: one arena-record/1 per line, in schedule
    order, each with its league match id as key `match` (for `arena replay --match`)."""
    if output is None:
        for line in export_lines(folder):
            click.echo(line)
        return
    count = write_export(folder, output)
    click.echo(f"{count} records of {folder} written to {output}", err=True)


@league.command("matches")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--forfeits", is_flag=True, help="Only the matches that ended in a forfeit.")
@click.option("--bot", "bot_name", default=None, metavar="NAME",
              help="Only the matches this bot (its name, or NAME@VERSION) played.")
def matches_command(folder, forfeits, bot_name):
    """List a league's stored matches as a table: id, seats, scores and ranks, and for a
    forfeit its seat, reason and ply (for `arena replay` and `arena debug`)."""
    rows = read_match_rows(folder)
    if bot_name is not None:
        known = {bot for row in rows for bot in row.bots}
        names = known | {bot.split("@")[0] for bot in known}
        if bot_name not in names:
            raise LeagueError(f"no bot {bot_name!r} played in {folder} (its bots: "
                              f"{', '.join(sorted(known)) or 'none yet'})")
        rows = [row for row in rows if any(bot_name in (bot, bot.split("@")[0])
                                           for bot in row.bots)]
    if forfeits:
        rows = [row for row in rows if row.end == "forfeit"]
    table = [(row.match_id, "\n".join(f"{seat} {bot}" for seat, bot in enumerate(row.bots)),
              " ".join(map(str, row.scores)), " ".join(map(str, row.ranks)), row.end,
              row.forfeit_text) for row in rows]
    if table:
        click.echo(tabulate(table, headers=("match", "seats", "scores", "ranks", "end",
                                            "forfeit"),
                            tablefmt="simple", maxcolwidths=[None, None, None, None, None, 70]))
    count = sum(row.end == "forfeit" for row in rows)
    click.echo(f"{len(rows)} match(es), {count} forfeit(s)"
               + (f"; see one: arena replay {folder} --match ID, or arena debug {folder} "
                  "--match ID --ply PLY --bot FOLDER" if rows else ""))
