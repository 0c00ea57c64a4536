"""`arena replay`: a stored match again, move by move as text (as `arena play` prints it)
or as the replay viewer, one self-contained HTML page (`arena.render.replay`), with the bots'
log lines at their plies: a league match's from the league's `logs/`, a record's from --logs."""
from __future__ import annotations

import textwrap
from pathlib import Path

import click

from arena.cli.root import main
from arena.cli.play import print_event
from arena.cli.records import load_record
from arena.actlogs import match_logs, matches_in
from arena.errors import ArenaError, visible
from arena.match import Ended, Forfeited, Moved
from arena.render.replay import render_replay_html, seat_names, seed_note, steps
from engine.core import CHANCE


@main.command()
@click.argument("source", metavar="RECORD|LEAGUE_FOLDER")
@click.option("--match", "match_id", default=None, metavar="ID",
              help="The match of a league (or of a JSON Lines export), e.g. d0003:greedy,random.")
@click.option("--format", "fmt", type=click.Choice(["text", "html"]), default="text",
              show_default=True, help="text: move by move with the table after each; "
                                      "html: one page that steps through the plies.")
@click.option("--logs", "logs", type=click.Path(exists=True, path_type=Path), default=None,
              metavar="FOLDER_OR_FILE",
              help="Bot logs to show at their plies in the html page: a folder of them (as "
                   "`arena play --record` keeps beside the record) or one log. A league "
                   "match's logs are its league's logs/ without this.")
def replay(source: str, match_id: str | None, fmt: str, logs: Path | None) -> None:
    """Replay a stored match through the engine: a record file, or a league's match."""
    if logs is not None and fmt != "html":
        raise ArenaError("--logs shows log lines in the html page: add --format html")
    record = load_record(source, match_id)
    if fmt == "html":
        league = Path(source) if Path(source).is_dir() else None
        if logs is None and league is not None and (league / "logs").is_dir():
            logs = league / "logs"
        lines = None if logs is None else load_logs(
            record, logs, match_id if league is not None else record.get("match"))
        click.echo(render_replay_html(record, logs=lines), nl=False)
        return
    names = seat_names(record)
    click.echo(f"{record['game']}, {len(names)} players, seed {record.get('seed')}")
    for index, name in enumerate(names):
        click.echo(f"  seat {index}: {visible(name)}")
    if seed_note(record):
        click.echo(f"  {visible(seed_note(record))}")
    state = None
    for step in steps(record):
        state = step.state
        if step.ply is None:
            click.echo("start")
            click.echo(textwrap.indent(state.render(), "    "))
            continue
        bot = CHANCE if step.seat == CHANCE else visible(record["players"][step.seat])
        print_event(Moved(step.ply, step.seat, bot, step.move, step.seconds, state))
    result = record.get("result") or {}
    forfeit = result.get("forfeit")
    if forfeit:
        print_event(Forfeited(len(record["moves"]), forfeit["seat"],
                              visible(record["players"][forfeit["seat"]]),
                              visible(forfeit["reason"]),
                              visible(forfeit.get("detail", ""))))
    if result:
        print_event(Ended({**record, "players": [visible(name) for name in record["players"]]},
                          state))


def load_logs(record: dict, logs: Path, match_id: str | None) -> dict:
    """seat -> ply -> lines of the record's match in the bot logs at `logs` (a folder: the
    logs of the record's bots in it, by their names and versions; else that one file).
    Without a match id (a record of `arena play`, which names none), the match is the last
    one the logs hold: a note on standard error names it when they hold several."""
    if logs.is_dir():
        named = [logs / f"{bot.get('name')}-{bot.get('version')}.log"
                 for bot in record.get("bots") or [] if isinstance(bot, dict)]
        paths = [path for path in named if path.is_file()] or sorted(logs.glob("*.log"))
    else:
        paths = [logs]
    if match_id is None:
        found = matches_in(paths)
        if not found:
            click.echo(f"arena: note: no match in the bot logs at {logs}: the page shows "
                       "no log lines", err=True)
            return {}
        match_id = found[-1]
        if len(found) > 1:
            click.echo(f"arena: note: the bot logs at {logs} hold {len(found)} matches; "
                       f"showing the lines of the last, {match_id!r}", err=True)
    return match_logs(paths, match_id)
