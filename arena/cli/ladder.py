"""`arena ladder`: the Elo ladder of one league, or of several leagues of one game merged.

Reads only what the league store holds, so it works on a league that is still running.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import click

from arena.cli.options import STDOUT
from arena.cli.progress import Progress
from arena.cli.root import main
from arena.errors import ArenaError
from arena.league.merge import match_prefix, read_leagues
from arena.league.store import read_match_facts, read_missing_protections
from arena.render.ladder_page import ladder_page
from arena.render.ladder_site import LeagueMatches, check_target, write_site
from arena.stats.botstats import bot_stats
from arena.stats.ratings import Outcome
from arena.stats.report import (FORMATS, history_text, ladder_text, missing_protections_footer,
                                order_effect_footer, rated)


def parse_anchor(text: str | None) -> tuple[str, float] | None:
    """`BOT=RATING` -> (bot, rating); ArenaError naming the expected form."""
    if text is None:
        return None
    bot, sep, rating = text.partition("=")
    try:
        value = float(rating)
    except ValueError:
        value = None
    if not sep or not bot or value is None:
        raise ArenaError(f"--anchor wants BOT=RATING, e.g. greedy=1500, not {text!r}")
    return bot, value


@main.command()
@click.argument("leagues", nargs=-1, required=True, metavar="RESULTS/NAME...")
@click.option("--format", "fmt", type=click.Choice(FORMATS + ("html",)), default="table",
              show_default=True,
              help="How to print the table; html: one page with the ladder, the statistics, "
                   "the matrix and the charts.")
@click.option("--output", metavar="DIR", default=None,
              help="With --format html: write a site into DIR instead (index.html, a page "
                   "per bot listing its matches, a replay per match with every bot's log "
                   "lines); `-`: the page to standard output. A site written before in DIR "
                   "is replaced.")
@click.option("--matrix", is_flag=True,
              help="Print the pairwise score matrix instead of the ladder.")
@click.option("--anchor", metavar="BOT=RATING", default=None,
              help="Pin one bot's rating (default: ratings average 0).")
@click.option("--stats", is_flag=True,
              help="Print per-bot statistics instead: points (mean, sd), results as first "
                   "mover and in later seats, move times, forfeits by reason.")
@click.option("--history", is_flag=True,
              help="Print running Elo after every match instead (classic Elo in match order).")
@click.option("--k-factor", type=click.FloatRange(min=0.0, min_open=True), default=16.0,
              show_default=True, help="K of running Elo (with --history).")
def ladder(leagues: tuple[str, ...], fmt: str, output: str | None, matrix: bool,
           anchor: str | None, stats: bool, history: bool, k_factor: float) -> None:
    """Elo ladder (maximum likelihood, 95% intervals, LOS) of one or more leagues.

    Several leagues of the same game are merged into one ladder; a league still running
    is rated on the matches stored so far.
    """
    if matrix + history + stats > 1:
        raise ArenaError("--matrix, --stats and --history are different tables: give one of "
                         "them")
    if history and anchor is not None:
        raise ArenaError("--anchor sets the scale of the ladder; running Elo (--history) "
                         "starts every bot at 0: give one of them")
    given = click.get_current_context().get_parameter_source("k_factor")
    if not history and given is not click.core.ParameterSource.DEFAULT:
        raise ArenaError("--k-factor is the K of running Elo: use it with --history")
    if output is not None and fmt != "html":
        raise ArenaError("--output writes the html ladder: give it with --format html")
    if fmt == "html" and (matrix or stats or history):
        raise ArenaError("--format html shows the ladder, the statistics, the matrix and "
                         "running Elo together: leave out --matrix, --stats and --history")
    anchor_pair = parse_anchor(anchor)
    outcomes, rules = read_leagues(leagues)
    if fmt == "html":
        html_ladder(leagues, outcomes, rules, anchor_pair,
                    None if output in (None, STDOUT) else Path(output))
    elif history:
        click.echo(history_text(outcomes, fmt, k=k_factor))
    else:
        facts = ([fact for folder in leagues for fact in read_match_facts(folder)]
                 if stats else None)
        click.echo(ladder_text(outcomes, fmt, anchor=anchor_pair, matrix=matrix, facts=facts,
                               stats=stats))
        if fmt in ("table", "markdown"):
            missing = {folder: read_missing_protections(folder) for folder in leagues}
            for line in missing_protections_footer(missing) + order_effect_footer(outcomes):
                click.echo(line)


def html_ladder(leagues: Sequence[str], outcomes: list[Outcome], rules: str,
                anchor: tuple[str, float] | None, site: Path | None) -> None:
    """The ladder page on standard output, or (`site`) the whole site written there."""
    table = rated(outcomes, anchor)
    title = f"Arena ladder: {', '.join(Path(folder).name for folder in leagues)} ({rules})"
    facts = [fact for folder in leagues for fact in read_match_facts(folder)]
    stats = bot_stats(facts, [row.bot for row in table.rows])
    if site is None:
        click.echo(ladder_page(table, outcomes, title=title, stats=stats))
        return
    check_target(site)   # before the progress bar: a refusal is one line
    sources = [LeagueMatches(match_prefix(folder, leagues), folder) for folder in leagues]
    with Progress(len(outcomes), 0, unit="replays", stream=sys.stderr,
                  label="Writing match replays") as bar:
        written = write_site(site, sources, table=table, outcomes=outcomes, title=title,
                             stats=stats, done=bar.advance)
    click.echo(f"Wrote the ladder, {written.bots} bot pages and {written.matches} match "
               f"replays: open {written.where / 'index.html'}")

