"""`arena play`: one match between built-in bots and/or bot folders, with a move-by-move log."""
from __future__ import annotations

import shlex
import textwrap
from contextlib import ExitStack, closing
from pathlib import Path

import click

from arena import hostload
from arena.bots.manifest import BuiltinBot, resolution_help, resolve_bot
from arena.clock import TimeControl
from arena.cli.root import main
from arena.cli.options import STDOUT, rule_option, sandbox_option, timing_options
from arena.cli.records import load_record
from arena.errors import ArenaError
from arena.keys import installation_key, random_seed
from arena.match import Ended, Forfeited, Moved, Seat, StrategySeat, play_match
from arena.sandbox import log_lines
from engine import records, registry
from engine.core import CHANCE


FORFEIT_LOG_LINES = 20


@main.command()
@click.argument("game")
@click.option("--bot", "bots", multiple=True, required=True, metavar="BOT",
              help="A bot folder or a built-in bot, once per seat, in seat order. "
                   + resolution_help())
@click.option("--players", type=int, default=None,
              help="Player count (default: the number of --bot).")
@click.option("--seed", type=int, default=None,
              help="Seed of the match: with this installation's secret key it fixes the deal, "
                   "chance moves and bots' own seeds, so the same seed replays the same match "
                   "here (default: 64 random bits, printed in the log).")
@rule_option
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the match record (arena-record/1 JSON) to this file (`-`: standard "
                   "output, and the move log goes to standard error).")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the bots' stderr logs in this folder (default: beside --record, as "
                   "RECORD.logs; without --record they are temporary, and a forfeiting bot's "
                   "log is printed before they go).")
@click.option("--quiet", is_flag=True, help="Print only the result.")
@timing_options()
@sandbox_option()
@click.option("--setup-from", "setup_source", default=None, metavar="RECORD|LEAGUE_FOLDER",
              help="Deal the cards of this recorded match (its setup and options; its chance "
                   "outcomes too where they fit the new play), to try other bots on it.")
@click.option("--setup-match", default=None, metavar="ID",
              help="With --setup-from a league folder or JSON Lines export: the match.")
def play(game, bots, players, seed, option_pairs, record_path, logs_dir, quiet, move_time, tc,
         startup_time, unsafe_no_sandbox, setup_source, setup_match):
    """Play one match of GAME and print a move-by-move log and the result."""
    game_obj = registry.get(game)
    players = len(bots) if players is None else players
    if players != len(bots):
        raise ArenaError(f"--players {players} but {len(bots)} --bot given: "
                         "give one --bot per seat")
    deal = None if setup_source is None else recorded_deal(setup_source, setup_match, game,
                                                            players, option_pairs)
    if deal is None:
        options = game_obj.resolve_options(game_obj.parse_options(option_pairs), players)
    else:
        options = deal.options
    time_control = TimeControl.from_cli(move_time, tc, startup_time)
    to_stdout = record_path is not None and str(record_path) == STDOUT
    if record_path is not None and not to_stdout and not record_path.parent.is_dir():
        raise ArenaError(f"cannot write the record to {record_path}: "   # before the match
                         f"folder {record_path.parent} does not exist")
    if logs_dir is None and record_path is not None and not to_stdout:
        logs_dir = record_path.with_name(record_path.stem + ".logs")
    if seed is None:
        seed = random_seed()
    # Keyed: a bot that guesses the seed typed here still cannot rebuild the deal.
    seeds = installation_key().match_seeds(f"play:{seed}", players)
    # With the record on standard output, the log goes to stderr: stdout is the record alone.
    say = (lambda text: click.echo(text, err=True)) if to_stdout else click.echo
    # Bot folders and the deal's record by whole path: the command replays the match from
    # any folder, and the record keeps it (`arena replay` shows it beside the derived seed).
    command = replay_command(game, seed, [lasting(bot, bot=True) for bot in bots], move_time, tc,
                             startup_time, option_pairs, setup_source and lasting(setup_source),
                             setup_match, unsafe_no_sandbox)
    with ExitStack() as stack:
        hosts: list = []   # at most one BotHost, started only when a bot folder is given
        seats = [make_seat(bot, game, stack, hosts, unsafe_no_sandbox, lane, logs_dir)
                 for lane, bot in enumerate(bots)]
        if not quiet:
            say(f"{game}, {players} players, {time_control.describe()}")
            for index, seat in enumerate(seats):
                say(f"  seat {index}: {seat.name} ({seat.version})")
            if deal is not None:
                say(f"  the deal of {setup_source}"
                    + (f" match {setup_match}" if setup_match else ""))
            if hosts:
                say(f"  bot logs in {hosts[0].log_dir}" + (
                    " (temporary: --logs FOLDER or --record keeps them)"
                    if hosts[0].temporary_logs else ""))
            say(seed_story(seed, seeds.deal, deal is not None, command))
        record = play_match(game, players, options, seeds.deal, seats, time_control,
                            on_event=None if quiet else (lambda event: print_event(event,
                                                                                   to_stdout)),
                            bot_seeds=seeds.bots, label=f"play seed {seed}",
                            setup=None if deal is None else deal.setup,
                            chance_moves=() if deal is None else
                            [move for seat, move in deal.moves if seat == CHANCE])
        if hosts and hosts[0].temporary_logs:
            show_forfeiter_log(record, seats, hosts[0])
    record["replay"] = {"seed": seed, "command": command}   # a key readers may ignore
    result = record["result"]
    if quiet:
        say(f"scores {result['scores']} ranks {result['ranks']} end {result['end']}")
    if to_stdout:
        click.echo(records.to_json(record), nl=False)
    elif record_path is not None:
        try:
            record_path.write_text(records.to_json(record))
        except OSError as error:
            raise ArenaError(f"cannot write the record to {record_path}: "
                             f"{error.strerror}") from None
        if not quiet:
            click.echo(f"record written to {record_path}")


def seed_story(seed: int, deal_seed: int, recorded_deal: bool, command: str) -> str:
    """The one line that tells the seeds apart: the typed one replays the match, the
    record's is derived from it with this installation's key (and is not a --seed)."""
    what = "its chance draws" if recorded_deal else "the deal"
    return (f"  seed {seed}, so the record's seed ({what}) is {deal_seed}, derived from "
            f"{seed} with this installation's key (--seed takes {seed}, not {deal_seed}); "
            f"replay this match here with: {command}")


def replay_command(game, seed, bots, move_time, tc, startup_time, option_pairs, setup_source,
                   setup_match, unsafe) -> str:
    """The `arena play` command line that plays this very match again on this installation."""
    words = ["arena", "play", game, "--seed", str(seed)]
    for bot in bots:
        words += ["--bot", bot]
    for pair in option_pairs:
        words += ["--option", pair]
    for flag, value in (("--move-time", move_time), ("--tc", tc),
                        ("--startup-time", startup_time), ("--setup-from", setup_source),
                        ("--setup-match", setup_match)):
        if value is not None:
            words += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    if unsafe:
        words.append("--unsafe-no-sandbox")
    return shlex.join(words)


def lasting(source: str, *, bot: bool = False) -> str:
    """A `--setup-from` (or with `bot`, a `--bot`) as a whole path when it names a file or
    folder (a bot folder: one with a bot.toml, as `resolve_bot` reads it), else as given."""
    path = Path(source)
    if (path / "bot.toml").is_file() if bot else path.exists():
        return str(path.resolve())
    return source


def recorded_deal(source: str, match_id: str | None, game: str, players: int,
                  option_pairs) -> records.Record:
    """The record whose deal `--setup-from` plays again, checked against the new match."""
    if option_pairs:
        raise ArenaError("--option cannot be given with --setup-from: the recorded deal was "
                         "dealt under the record's options, which the match keeps")
    deal = records.read(load_record(source, match_id))
    if deal.game.id != game:
        raise ArenaError(f"{source} is a match of {deal.game.id}, not {game}: play "
                         f"`arena play {deal.game.id} --setup-from {source} ...`")
    if len(deal.players) != players:
        raise ArenaError(f"{source} is a {len(deal.players)}-player deal: give "
                         f"{len(deal.players)} --bot, not {players}")
    return deal


def make_seat(bot: str, game_id: str, stack: ExitStack, hosts: list, unsafe: bool,
              lane: int, logs_dir: Path | None) -> Seat:
    """A seat for `--bot BOT` (resolved by arena.bots.resolve_bot): a built-in strategy
    in-process, or a bot folder run as a sandboxed process."""
    resolved = resolve_bot(bot, game_id)
    if isinstance(resolved, BuiltinBot):
        return stack.enter_context(closing(StrategySeat(resolved.name, game_id)))
    from arena.bots import BotHost   # gRPC is imported only when a bot folder is used

    if not hosts:
        if not unsafe and hostload.keep_apart():   # its bots on cores of their own
            stack.callback(hostload.end_apart)
        if logs_dir is not None:
            try:
                logs_dir.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise ArenaError(f"cannot make the log folder {logs_dir}: "
                                 f"{error.strerror}") from None
        hosts.append(stack.enter_context(BotHost(unsafe_no_sandbox=unsafe, log_dir=logs_dir,
                                                 warn_slow_start=True)))
    return stack.enter_context(hosts[0].seat(resolved, lane=lane))


def show_forfeiter_log(record: dict, seats: list[Seat], host) -> None:
    """The end of a forfeiting bot's log, printed before its temporary folder goes."""
    forfeit = record["result"].get("forfeit")
    spec = getattr(seats[forfeit["seat"]], "spec", None) if forfeit else None
    if spec is None or not host.log_path(spec).is_file():
        return   # no forfeit, or a built-in bot's
    path = host.log_path(spec)
    lines = log_lines(path)[-FORFEIT_LOG_LINES:]
    click.echo(f"the end of {path.name}, the log of seat {forfeit['seat']}:", err=True)
    click.echo("\n".join(lines), err=True)


def print_event(event, err: bool = False) -> None:
    """One event of the move-by-move log, on stdout (stderr with `err`)."""
    def say(text: str) -> None:
        click.echo(text, err=err)

    if isinstance(event, Moved):
        who = "chance" if event.seat == "chance" else f"seat {event.seat} ({event.bot})"
        took = "" if event.seconds is None else f"  [{event.seconds * 1000:.1f} ms]"
        say(f"ply {event.ply}  {who}: {event.move}{took}")
        say(textwrap.indent(event.state.render(), "    "))
    elif isinstance(event, Forfeited):
        say(f"forfeit by seat {event.seat} ({event.bot}), {event.reason}: {event.detail}")
    elif isinstance(event, Ended):
        result = event.record["result"]
        if result["end"] == "normal":
            say(event.state.render_result())
        say(f"result: scores {result['scores']} ranks {result['ranks']} end {result['end']}")
