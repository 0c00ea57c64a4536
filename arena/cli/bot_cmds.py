"""`arena bot check FOLDER`: the compliance run of one bot folder, as a table; `arena bot new
NAME --lang LANG`: a starter bot folder in one of the supported languages."""
from __future__ import annotations

from pathlib import Path

import click
from tabulate import tabulate

from arena.botcheck import CheckRow, check_bot
from arena.cli.root import main
from arena.cli.options import sandbox_option, timing_options
from arena.clock import TimeControl
from arena.starters import LANGUAGES, new_bot
from engine import registry


@main.group()
def bot() -> None:
    """Bot authors' tools: start a bot from a template, check a bot folder before a league."""


@bot.command("check")
@click.argument("folder", type=click.Path(path_type=str))
@click.option("--game", "games", multiple=True, metavar="GAME",
              help="Check only this game (repeatable; default: every game the bot declares).")
@timing_options()
@sandbox_option("the bot")
@click.option("--keep", "keep", type=click.Path(file_okay=False, path_type=str), default=None,
              metavar="DIR", help="Keep the bot's logs and every check match's record in DIR "
                                  "(made if missing), for `arena replay` and `arena debug`.")
@click.pass_context
def check_command(ctx, folder, games, move_time, tc, startup_time, unsafe_no_sandbox, keep):
    """Validate FOLDER's manifest, start the bot in the sandbox, and play short matches in
    every game and player count it declares (against `random` and itself); exit 0 only when
    every check passes."""
    time_control = TimeControl.from_cli(move_time, tc, startup_time)
    for game in games:
        registry.get(game)   # an unknown game is a usage error (exit 2), not a failed check
    report = check_bot(folder, list(games) or None, unsafe_no_sandbox=unsafe_no_sandbox,
                       time_control=time_control, on_row=_progress, keep=keep,
                       warn_slow_start=True)
    click.echo(tabulate([(row.check, row.result, row.detail) for row in report.rows],
                        headers=("check", "result", "detail"), tablefmt="simple",
                        maxcolwidths=[None, None, 90]))
    if not report.passed:
        click.echo(f"\nbot log (stderr):\n{report.log_excerpt}")
        # The logs went with the check's temporary folder: say how to keep them.
        if keep is None and report.log_excerpt:
            click.echo("\n(the logs were temporary: --keep DIR keeps them and every check "
                       "match's record)")
    if keep is not None:
        click.echo(f"\nthe records and logs of the check are kept in {keep}")
    failed = sum(row.result == "FAIL" for row in report.rows)
    click.echo(f"\n{report.bot or folder}: "
               + ("all checks passed" if report.passed else f"{failed} check(s) failed"))
    ctx.exit(0 if report.passed else 1)


def _progress(row: CheckRow) -> None:
    click.echo(f"  {row.check}: {row.result}", err=True)


@bot.command("new")
@click.argument("name")
@click.option("--lang", required=True, metavar="LANG",
              help="The bot's language: " + "|".join(LANGUAGES) + ".")
@click.option("--dir", "parent", default=".", show_default=True, metavar="DIR",
              type=click.Path(path_type=Path), help="The folder to make the bot's folder NAME in.")
def new_command(name, lang, parent):
    """Make the folder DIR/NAME: a starter bot in LANG that plays a random legal move in every
    game and passes `arena bot check` once built; its README says how to build it and what
    to edit."""
    folder = new_bot(name, lang, parent)
    readme = folder / "README.md"
    click.echo(f"made {folder} ({lang}); next: read {readme}, build it if it says so, then "
               f"`arena bot check {folder}`")
