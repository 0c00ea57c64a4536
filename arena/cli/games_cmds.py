"""`arena games` (what can be played) and `arena verify` (replay records through the engine)."""
from __future__ import annotations

import json
import sys

import click
from tabulate import tabulate

from arena.cli.root import main
from engine import records, registry
from engine.core import Game, Option


@main.command("games")
def games_command() -> None:
    """List the games: id, title, player counts and rule options (default, allowed values)."""
    rows = [(game.id, game.title, _player_span(game), _options_text(game.options))
            for game in registry.games().values()]
    click.echo(tabulate(rows, headers=("id", "title", "players", "options (default)"),
                        tablefmt="simple"))
    helps = [f"  {game.id} {option.key}: {option.help}"
             for game in registry.games().values() for option in game.options]
    if helps:
        click.echo("\nOptions (arena play GAME --option KEY=VALUE):")
        click.echo("\n".join(helps))


def _player_span(game: Game) -> str:
    if game.min_players == game.max_players:
        return str(game.min_players)
    return f"{game.min_players}-{game.max_players}"


def _options_text(options: tuple[Option, ...]) -> str:
    if not options:
        return "none"
    lines = []
    for option in options:
        line = f"{option.key}={option.default} ({option.kind})"
        if option.choices:
            line += f" one of: {', '.join(map(str, option.choices))}"
        lines.append(line)
    return "\n".join(lines)


@main.command("verify")
# Plain strings, not click.Path: a bad path is a record that cannot be read (a JSON line),
# not a usage error that would hide the verdicts of the other records.
@click.argument("record_files", metavar="RECORD.json|RECORDS.jsonl...", nargs=-1, required=True)
@click.pass_context
def verify_command(ctx: click.Context, record_files: tuple[str, ...]) -> None:
    """Replay each match record through the engine; print one JSON line per record.

    A file holds one record (JSON) or many (JSON Lines, one record per line, as `arena league
    export` writes); "-" reads standard input. A line is {"ok": true, "scores": [...],
    "ranks": [...], ...} or {"ok": false, "ply": K, "error": "..."} with K the first failing
    move (null: the record cannot be read); each line also names its "source" (the file) and
    "match" (the record's league match id, null when it has none). Exit status: 0 all verify,
    1 a move or result fails, 2 a record cannot be read (the highest over all records).
    """
    status = records.VERIFIED
    for path in record_files:
        for verdict, match_id in _verify_file(path):
            # Which file and match: with many files and JSON Lines, a bare verdict is lost.
            click.echo(json.dumps({**verdict, "source": path, "match": match_id}))
            status = max(status, records.exit_status(verdict))
    ctx.exit(status)


def _verify_file(path: str) -> list[tuple[dict, str | None]]:
    """(verdict, match id) per record in the file: JSON Lines when its first line is a whole
    JSON object (a pretty-printed record's first line is only "{"), else one record."""
    try:
        if path == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as file:
                text = file.read()
    except OSError as error:
        return [({"ok": False, "ply": None,
                  "error": f"record cannot be read: {path}: {error.strerror or error}"}, None)]
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and _is_json_object(lines[0]):
        return [_verdict(line) for line in lines]
    return [_verdict(text)]


def _verdict(text: bytes) -> tuple[dict, str | None]:
    """The verdict of one record's text and its `match` key (parsed once, for both)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):   # the verdict says why, as for any bad record
        return records.verify(text), None
    match_id = data.get("match") if isinstance(data, dict) else None
    return records.verify(data), match_id if isinstance(match_id, str) else None


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
