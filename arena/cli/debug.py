"""`arena debug RECORD --ply K --bot FOLDER`: a bot's answer to one recorded position
(`arena.debug`), printed for its author."""
from __future__ import annotations

import json
import textwrap

import click

from arena.cli.options import sandbox_option
from arena.cli.root import main
from arena.cli.records import load_record
from arena.debug import DEBUG_BOT_SEED, debug_position


@main.command("debug")
@click.argument("source", metavar="RECORD|LEAGUE_FOLDER")
@click.option("--ply", type=int, required=True,
              help="The record entry to stop at (0-based, chance moves count, as `arena "
                   "replay` numbers them); after the last move of a forfeited match, the "
                   "forfeit's ply.")
@click.option("--bot", "folder", required=True, metavar="FOLDER",
              help="The bot folder to ask: it plays the seat to move at that ply.")
@click.option("--match", "match_id", default=None, metavar="ID",
              help="The match of a league (or of a JSON Lines export).")
@click.option("--move-time", type=float, default=None,
              help="Per-move limit in seconds (default: the record's time control).")
@click.option("--bot-seed", type=int, default=DEBUG_BOT_SEED, show_default=True,
              help="The bot's rng_seed (a match's own is secret, not in its record).")
@sandbox_option("the bot")
@click.pass_context
def debug_command(ctx, source, ply, folder, match_id, move_time, bot_seed, unsafe_no_sandbox):
    """Show what a bot sees at one ply of a recorded match and what it answers now.

    The record is replayed to the ply; the bot is started sandboxed, told the match (game,
    options, seat, players, time control) and sent that one position. Printed: the
    observation as the bot receives it, the legal moves, the move recorded then, the bot's
    move now and its log lines. Exit status 0 when the bot answers a legal move, 1 when it
    does not (the forfeit it would get is printed)."""
    record = load_record(source, match_id)
    result = debug_position(record, ply, folder, move_time=move_time, bot_seed=bot_seed,
                            unsafe_no_sandbox=unsafe_no_sandbox)
    click.echo(f"{result.game}, ply {result.ply}: seat {result.seat} to move "
               f"(in the record: {result.recorded_bot}); asking {result.bot}, "
               f"{result.time_control.describe()}")
    click.echo("observation (as the bot receives it):")
    click.echo(textwrap.indent(readable_json(result.observation), "  "))
    click.echo(f"legal moves ({len(result.legal_moves)}): {', '.join(result.legal_moves)}")
    click.echo(f"clock: {_clock_text(result.clock)}")
    click.echo(f"recorded then: {result.recorded}")
    took = "" if result.seconds is None else f"  [{result.seconds * 1000:.1f} ms]"
    if result.legal:
        same = " (the same)" if result.move == result.recorded else ""
        click.echo(f"bot's move now: {result.move}{same}{took}")
    else:
        click.echo(f"bot's move now: none, {result.error}{took}")
    click.echo(f"bot log for this act ({len(result.log_lines)} lines):")
    for line in result.log_lines:
        click.echo(f"  {line}")
    ctx.exit(0 if result.legal else 1)


def _clock_text(clock) -> str:
    """The act's clock as the bot's SDK gives it (seconds; "none" where there is no limit)."""
    def seconds(value) -> str:
        return "none" if value is None or value == float("inf") else f"{value:.3f} s"
    return (f"allowed {seconds(clock.allowed)}, move limit {seconds(clock.move_limit)}, "
            f"bank left {seconds(clock.remaining)}")


def readable_json(value, indent: str = "") -> str:
    """JSON with one key per line but each list of plain values on one line: a hand of
    cards reads as a hand, not as a column."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(key)}: {readable_json(item, inner)}"
                 for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        items = [inner + readable_json(item, inner) for item in value]
        return "[\n" + ",\n".join(items) + f"\n{indent}]"
    return json.dumps(value)
