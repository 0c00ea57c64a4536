"""`arena sprt NEW OLD`: is NEW stronger than OLD? Duplicate pairs until the SPRT decides
(arena.league.ab_test plays them, arena.stats.sprt does the math)."""
from __future__ import annotations

import sys

import click
from tabulate import tabulate

from arena.bots.manifest import resolution_help
from arena.cli.root import main
from arena.cli.options import (bot_checker, executor_from, rule_option, run_options,
                               sandbox_option, seed_option, timing_options)
from arena.cli.progress import Progress, stopped_cleanly
from arena.keys import random_seed
from arena.league.ab_test import (ABTest, Hypotheses, Standing, default_folder, play,
                                  standing_of)
from arena.league.lifecycle import open_league
from arena.league.settings import config_from_settings
from arena.stats import sprt


@main.command("sprt")
@click.argument("new")
@click.argument("old")
@click.option("--game", required=True, help="The game id (see `arena games`).")
@click.option("--players", type=int, default=None,
              help="Players per match (default 2); 3-4 need --field bots.")
@click.option("--field", "field", multiple=True, metavar="BOT",
              help="A bot for the other seats with 3-4 players (repeatable). "
                   + resolution_help())
@rule_option
@click.option("--elo0", type=float, default=0.0, show_default=True,
              help="H0: NEW is this many Elo stronger (or less).")
@click.option("--elo1", type=float, default=5.0, show_default=True,
              help="H1: NEW is at least this many Elo stronger.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Chance of accepting H1 when H0 holds.")
@click.option("--beta", type=float, default=0.05, show_default=True,
              help="Chance of accepting H0 when H1 holds.")
@click.option("--elo-model", type=click.Choice(["logistic", "normalized"]), default="logistic",
              show_default=True, help="What the Elo bounds mean (see arena/stats/sprt.py).")
@click.option("--max-pairs", type=int, default=10_000, show_default=True,
              help="Stop undecided after this many pairs.")
@seed_option("test")
@timing_options()
@click.option("--name", default=None,
              help="Test name: its folder is results/NAME; the same command again continues it.")
@sandbox_option()
@run_options
def sprt_command(new, old, game, players, field, option_pairs, elo0, elo1, alpha, beta,
                 elo_model, max_pairs, seed, move_time, tc, startup_time, name,
                 unsafe_no_sandbox, workers, executor, ray_address, pin, fresh_bots, quiet,
                 skip_check):
    """A/B test: play NEW against OLD on duplicate deal pairs (both seatings; with 3-4
    players every rotation, the field in the other seats) until the SPRT accepts H0 or H1."""
    settings = {"game": game, "bots": [new, old, *field], "deals": max_pairs,
                "seed": random_seed() if seed is None else seed,
                "unsafe_no_sandbox": unsafe_no_sandbox}
    for key, value in (("players", players), ("move_time", move_time), ("tc", tc),
                       ("startup_time", startup_time)):
        if value is not None:
            settings[key] = value
    config = config_from_settings(settings, option_pairs)
    hypotheses = Hypotheses(elo0, elo1, alpha, beta, elo_model, max_pairs)
    pool = executor_from(workers, executor, ray_address, quiet, pin=pin)
    folder = default_folder(name, new, old)
    kind = ABTest(hypotheses, seed_given=seed is not None)
    # Like a league: everything checked, a broken bot refused, before the first pair.
    with open_league(folder, config, kind=kind, check_bots=bot_checker(skip_check, quiet)) \
            as test:
        if not quiet:
            click.echo(f"sprt {folder}: {test.bots[0].name} vs {test.bots[1].name}, "
                       f"{config.game} {config.players}p, H0 {elo0:g} / H1 {elo1:g} Elo "
                       f"({elo_model}), alpha {alpha:g} beta {beta:g}, "
                       f"{test.config.timing().describe()}", err=True)
        standing = standing_of(test, hypotheses)
        bar = Progress(max_pairs, standing.tally.pairs, unit="pairs",
                       status=lambda: _status(standing), stream=None if quiet else sys.stderr)
        with stopped_cleanly(lambda: f"stopped: the pairs played are stored in {folder}; "
                                     "run the same command again to continue"), bar:
            play(test, standing, pool, fresh_bots=fresh_bots, on_pair=bar.advance)
    click.echo(result_table(standing))


def _status(standing: Standing) -> str:
    """The progress bar's status: the LLR within its bounds, the Elo estimate so far."""
    h = standing.hypotheses
    lower, upper = sprt.bounds(h.alpha, h.beta)
    estimate = sprt.estimate(standing.tally.pentanomial)
    return (f"LLR {standing.llr():+.2f} [{lower:.2f}, {upper:.2f}]  Elo {estimate.elo:+.1f} "
            f"({estimate.elo_low:+.1f} to {estimate.elo_high:+.1f})")


def result_table(standing: Standing) -> str:
    """The test's result: decision, pairs, counts, Elo with its interval, pairing's gain."""
    h, tally = standing.hypotheses, standing.tally
    lower, upper = sprt.bounds(h.alpha, h.beta)
    decision = standing.decision()
    verdict = {sprt.H1: f"H1 accepted: {standing.new} is stronger by {h.elo1:g} Elo or more",
               sprt.H0: f"H0 accepted: {standing.new} is not stronger by {h.elo1:g} Elo",
               None: "no decision (max pairs reached)" if tally.pairs >= h.max_pairs
               else "no decision yet"}[decision]
    estimate = sprt.estimate(tally.pentanomial)
    ratio = sprt.variance_ratio(tally.pentanomial, tally.trinomial)
    rows = [
        ("result", verdict),
        ("pairs", f"{tally.pairs} ({2 * tally.pairs} games)"),
        ("LLR", f"{standing.llr():+.3f} (bounds {lower:.3f}, {upper:.3f}; {h.model} Elo "
                f"{h.elo0:g} / {h.elo1:g})"),
        ("pentanomial 0-0.25-0.5-0.75-1", " ".join(map(str, tally.pentanomial))),
        ("games lost-drawn-won", " ".join(map(str, tally.trinomial))),
        ("Elo (95% interval)", f"{estimate.elo:+.1f} ({estimate.elo_low:+.1f} to "
                               f"{estimate.elo_high:+.1f}); normalised {estimate.nelo:+.1f}"),
        ("pairing", "no variance yet" if ratio is None else
         f"a pair's variance is {ratio:.2f} of two independent games' "
         f"({1 - ratio:.0%} less: pairs worth {1 / ratio:.1f}x as many games)" if ratio > 0
         else "every pair split: no variance left"),
    ]
    return tabulate(rows, tablefmt="plain")
