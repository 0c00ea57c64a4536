"""`arena sprt NEW OLD`: is NEW stronger than OLD? Duplicate pairs until the SPRT decides
(arena.league.ab_test plays them, arena.stats.sprt does the math)."""
from __future__ import annotations

import signal
import sys
import time

import click
from tabulate import tabulate

from arena.stats import sprt
from arena.league.ab_test import Hypotheses, Standing, default_folder, open_test, play
from arena.bots.manifest import resolution_help
from arena.cli import main
from arena.cli.league import _check_bots, _executor, _interrupt, _workers_option
from arena.keys import random_seed
from arena.league.config import config_from_settings


@main.command("sprt")
@click.argument("new")
@click.argument("old")
@click.option("--game", required=True, help="The game id (see `arena games`).")
@click.option("--players", type=int, default=None,
              help="Players per match (default 2); 3-4 need --field bots.")
@click.option("--field", "field", multiple=True, metavar="BOT",
              help="A bot for the other seats with 3-4 players (repeatable). "
                   + resolution_help())
@click.option("--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A rule option of the game (repeatable).")
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
@click.option("--seed", type=int, default=None,
              help="Test seed (with this installation's key it fixes the deals).")
@click.option("--move-time", type=float, default=None,
              help="Per-move limit in seconds (default 1.0 when no --tc).")
@click.option("--tc", default=None, metavar="BANK+INC", help="Time bank and increment.")
@click.option("--name", default=None,
              help="Test name: its folder is results/NAME; the same command again continues it.")
@click.option("--unsafe-no-sandbox", is_flag=True, default=None,
              help="Run bot folders without the bubblewrap sandbox (trusted bots only).")
@_workers_option
def sprt_command(new, old, game, players, field, option_pairs, elo0, elo1, alpha, beta,
                 elo_model, max_pairs, seed, move_time, tc, name, unsafe_no_sandbox, workers,
                 executor, ray_address, fresh_bots, quiet, skip_check):
    """A/B test: play NEW against OLD on duplicate deal pairs (both seatings; with 3-4
    players every rotation, the field in the other seats) until the SPRT accepts H0 or H1."""
    settings = {"game": game, "bots": [new, old, *field], "deals": max_pairs,
                "seed": random_seed() if seed is None else seed,
                "unsafe_no_sandbox": unsafe_no_sandbox}
    for key, value in (("players", players), ("move_time", move_time), ("tc", tc)):
        if value is not None:
            settings[key] = value
    config = config_from_settings(settings, option_pairs)
    hypotheses = Hypotheses(elo0, elo1, alpha, beta, elo_model, max_pairs)
    pool = _executor(workers, executor, ray_address, quiet)
    folder = default_folder(name, new, old)
    test, hypotheses = open_test(folder, config, hypotheses, seed_given=seed is not None)
    with test:
        if not skip_check:   # like a league: a broken bot is refused before the first pair
            _check_bots(test.config, [bot.source for bot in test.bots], quiet)
        lower, upper = sprt.bounds(alpha, beta)
        line = _ProgressLine(None if quiet else sys.stderr, lower, upper, max_pairs)
        if not quiet:
            click.echo(f"sprt {folder}: {test.bots[0].name} vs {test.bots[1].name}, "
                       f"{config.game} {config.players}p, H0 {elo0:g} / H1 {elo1:g} Elo "
                       f"({elo_model}), alpha {alpha:g} beta {beta:g}, "
                       f"{config.timing().describe()}", err=True)
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            standing = play(test, hypotheses, pool, fresh_bots=fresh_bots, on_pair=line.show)
        except KeyboardInterrupt:
            line.end()
            click.echo(f"stopped: the pairs played are stored in {folder}; run the same "
                       "command again to continue", err=True)
            sys.exit(130)
        finally:
            signal.signal(signal.SIGTERM, previous)
        line.end()
    click.echo(result_table(standing))


class _ProgressLine:
    """LLR and its bounds after each pair: redrawn on a terminal, every 25 pairs elsewhere."""

    def __init__(self, stream, lower: float, upper: float, max_pairs: int):
        self.stream, self.lower, self.upper, self.max_pairs = stream, lower, upper, max_pairs
        self.live = bool(stream is not None and stream.isatty())
        self.drawn_at = 0.0

    def show(self, standing: Standing) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        pairs = standing.tally.pairs
        if self.live and (now - self.drawn_at >= 0.2 or standing.over()):
            self.drawn_at = now
            self.stream.write("\r" + self.text(standing) + "\033[K")
        elif not self.live and (pairs % 25 == 0 or standing.over()):
            self.stream.write(self.text(standing) + "\n")
        self.stream.flush()

    def text(self, standing: Standing) -> str:
        estimate = sprt.estimate(standing.tally.pentanomial)
        return (f"pairs {standing.tally.pairs}/{self.max_pairs}  LLR {standing.llr():+.2f} "
                f"[{self.lower:.2f}, {self.upper:.2f}]  Elo {estimate.elo:+.1f} "
                f"({estimate.elo_low:+.1f} to {estimate.elo_high:+.1f})")

    def end(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


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
