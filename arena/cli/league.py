"""`arena league run` / `resume` / `export` / `matches`, the progress bar, `arena bench league`.

A league comes from flags, from a TOML file (`--config`; its keys: arena.league.config), or
both (flags win).
"""
from __future__ import annotations

import json
import math
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import click
import numpy as np
from tabulate import tabulate

from arena.cli import bench, main
from arena.botcheck import check_league_bots
from arena.bots.manifest import BUILTIN, resolution_help
from arena.keys import LeagueKey, random_seed
from arena.league.lifecycle import League, resume_league, run, start_league
from arena.league.config import (LeagueConfig, LeagueError, check_config, config_from_settings,
                                 read_config_file)
from arena.league.workers import Executor, ProcessPool, default_workers
from arena.stats.ratings import Outcome, score_matrix
from arena.cli.ladder import missing_protections_footer, order_effect_footer
from arena.stats.report import ladder_text
from arena.league.schedule import DEFAULT_MAX_TABLES, DEFAULT_SEATING, SEATINGS
from arena.cli.play import STDOUT
from arena.league.store import Store, read_match_rows, read_outcomes, read_records

RESULTS = Path("results")


@main.group()
def league() -> None:
    """Leagues: many matches among bots, fair schedules, stored results, resume."""


def _workers_option(command):
    command = click.option("--skip-check", is_flag=True,
                           help="Do not check the bots before the first match (by default "
                                "each bot plays one short match, as in `arena bot check`, "
                                "and the league refuses to start if one fails).")(command)
    command = click.option("--quiet", is_flag=True,
                           help="No progress bar (for scripts); the ladder is still printed."
                           )(command)
    command = click.option("--fresh-bots", is_flag=True,
                           help="Start new bot processes for every match: strict isolation "
                                "(a pooled bot process could remember a deal it saw in an "
                                "earlier seating); slower.")(command)
    command = click.option("--ray-address", default=None, metavar="ADDRESS",
                           help="With --executor ray: join this running Ray cluster "
                                "(HOST:PORT; default: start Arena's own local Ray for the run, "
                                "never one another program started).")(command)
    command = click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
                           show_default=True,
                           help="Where workers run: local processes, or Ray actors (across "
                                "machines; needs pip install 'arena[ray]').")(command)
    return click.option("--workers", type=int, default=None,
                        help="Matches played at once, each worker with its own bots "
                             "(default: the machine's cores; with Ray, the cluster's CPUs)."
                        )(command)


def _executor(workers: int | None, executor: str, ray_address: str | None,
              quiet: bool) -> Executor:
    if ray_address is not None and executor != "ray":
        raise LeagueError("--ray-address needs --executor ray")
    if executor == "ray":
        from arena.league.ray_pool import RayPool   # Ray is optional and slow to import
        pool = RayPool(workers, ray_address, quiet=quiet)
        pool.connect()
        return pool
    return ProcessPool(default_workers() if workers is None else workers)


@league.command("run")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="A TOML file with the league's settings (flags override it).")
@click.option("--bot", "bots", multiple=True, metavar="FOLDER",
              help="A bot folder or a built-in bot; repeat for each bot. " + resolution_help())
@click.option("--game", default=None, help="The game id (see `arena games`).")
@click.option("--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A rule option of the game (repeatable).")
@click.option("--players", type=int, default=None, help="Players per match (default 2).")
@click.option("--deals", type=int, default=None,
              help="Rounds: in each, every table plays every seating once (default 10).")
@click.option("--seed", type=int, default=None,
              help="League seed: with this installation's secret key it fixes every deal, so "
                   "the same seed replays the same league here (default: 64 random bits).")
@click.option("--move-time", type=float, default=None,
              help="Per-move limit in seconds (default 1.0 when no --tc).")
@click.option("--tc", default=None, metavar="BANK+INC", help="Time bank and increment, e.g. 10+0.1.")
@click.option("--startup-time", type=float, default=None,
              help="Seconds a bot gets to start and shake hands (default 10).")
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
@click.option("--unsafe-no-sandbox", is_flag=True, default=None,
              help="Run bot folders without the bubblewrap sandbox (trusted bots only).")
@_workers_option
def run_command(config_path, bots, game, option_pairs, players, deals, seed, move_time, tc,
                startup_time, gauntlet, tables, seating, name, out, unsafe_no_sandbox, workers,
                executor, ray_address, fresh_bots, quiet, skip_check):
    """Run a new league and print its ladder."""
    settings = read_config_file(config_path) if config_path else {}
    flags = {"game": game, "players": players, "deals": deals, "seed": seed,
             "move_time": move_time, "tc": tc, "startup_time": startup_time,
             "gauntlet": gauntlet, "tables": tables, "seating": seating, "name": name,
             "unsafe_no_sandbox": unsafe_no_sandbox, "bots": list(bots) or None}
    settings.update({key: value for key, value in flags.items() if value is not None})
    if "seed" not in settings:
        settings["seed"] = random_seed()
    config = config_from_settings(settings, option_pairs)
    # Every check before the league folder is created: nothing to clean up on bad input.
    pool = _executor(workers, executor, ray_address, quiet)
    if out is None:
        name = settings.get("name") or (
            f"{config.game}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}")
        if "/" in name or name in ("", ".", ".."):
            raise LeagueError(f"league name {name!r} is not a folder name: use --out for a path")
        out = RESULTS / name
    if not skip_check:   # bad input gets its own message first
        bots, _ = check_config(config, LeagueKey.new())   # any key: only the bots are used
        Store.check_free(out)
        _check_bots(config, [bot.source for bot in bots], quiet)
    with start_league(out, out.name, config) as opened:
        if not quiet:
            click.echo(f"league {out}: {config.game}, {config.players} players, "
                       f"{len(opened.bots)} bots, {len(opened.specs)} matches "
                       f"({config.seating} deals), "
                       f"seed {config.seed}, {config.timing().describe()}", err=True)
        _play(opened, pool, fresh_bots, quiet)


@league.command("resume")
@click.argument("folder", type=click.Path(path_type=Path))
@_workers_option
def resume_command(folder, workers, executor, ray_address, fresh_bots, quiet, skip_check):
    """Finish a stopped or killed league (results/NAME): plays only the missing matches."""
    pool = _executor(workers, executor, ray_address, quiet)
    with resume_league(folder) as opened:
        if not skip_check and opened.missing():
            _check_bots(opened.config, [bot.source for bot in opened.bots], quiet)
        if not quiet:
            click.echo(f"league {folder}: {len(opened.missing())} of {len(opened.specs)} "
                       "matches to play", err=True)
        _play(opened, pool, fresh_bots, quiet)


def _check_bots(config: LeagueConfig, sources: list[str], quiet: bool) -> None:
    """`arena bot check` of every bot folder, one short match each at the league's game,
    player count and time control; refuses the league (one line per failing bot) if any fails."""
    folders = [source for source in sources if not source.startswith(BUILTIN)]
    if not folders:
        return
    if not quiet:
        click.echo(f"checking {len(folders)} bot(s) with one short match each "
                   "(--skip-check to skip)", err=True)
    failures = check_league_bots(folders, config.game, config.players, config.timing(),
                                 unsafe_no_sandbox=not config.sandbox)
    for line in failures:
        click.echo(f"arena: {line}", err=True)
    if failures:
        raise LeagueError(f"{len(failures)} bot(s) failed the check: see `arena bot check "
                          "FOLDER` for the details, fix them, or pass --skip-check")


def _play(opened: League, pool: Executor, fresh_bots: bool, quiet: bool) -> None:
    """Runs the league's missing matches with a progress bar, then prints the ladder."""
    done_before = len(opened.specs) - len(opened.missing())
    bar = Progress(len(opened.specs), done_before, read_outcomes(opened.folder),
                   stream=None if quiet else sys.stderr)
    # `kill` (SIGTERM) stops a league as cleanly as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        run(opened, pool, fresh_bots=fresh_bots, on_match=bar.add)
    except KeyboardInterrupt:
        bar.finish()
        done = len(opened.specs) - len(opened.missing())
        click.echo(f"stopped: {done} of {len(opened.specs)} matches stored in {opened.folder}; "
                   f"finish with `arena league resume {opened.folder}`", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    bar.finish()
    outcomes = read_outcomes(opened.folder)
    if outcomes:
        click.echo(ladder_text(outcomes))
        for line in (missing_protections_footer([str(opened.folder)])
                     + order_effect_footer(outcomes)):
            click.echo(line)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


class Progress:
    """A one-line progress bar: done/total, rate, ETA and the current leader, the bot with
    the highest share of pairwise points so far ("leader greedy (64% of pairwise points)").

    On a terminal the line redraws in place (at most 5 times a second); elsewhere (logs, CI)
    a line is printed at every tenth of the league. With no stream it stays silent.
    """

    WIDTH = 24

    def __init__(self, total: int, done: int, outcomes: list[Outcome],
                 stream: TextIO | None):
        self.total, self.done, self.start_done = total, done, done
        self.outcomes = list(outcomes)
        self.stream = stream
        self.live = bool(stream is not None and stream.isatty())
        self.started = time.monotonic()
        self.last_at = self.started   # when the latest match came in: rates end there
        self.drawn_at = 0.0
        self.leader_text, self.leader_at, self.leader_cost = "-", -math.inf, 0.0
        self.tenth = done * 10 // max(total, 1)

    def add(self, outcome: Outcome) -> None:
        self.done += 1
        self.outcomes.append(outcome)
        now = self.last_at = time.monotonic()
        if self.stream is None:
            return
        if self.live and (now - self.drawn_at >= 0.2 or self.done == self.total):
            self.drawn_at = now
            self.stream.write("\r" + self.line() + "\033[K")
            self.stream.flush()
        elif not self.live and self.done * 10 // max(self.total, 1) > self.tenth:
            self.tenth = self.done * 10 // max(self.total, 1)
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def line(self) -> str:
        filled = self.WIDTH * self.done // max(self.total, 1)
        elapsed = self.last_at - self.started
        played = self.done - self.start_done
        rate = played / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        eta_text = "--:--" if math.isinf(eta) else time.strftime("%H:%M:%S", time.gmtime(eta))
        return (f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total}  "
                f"{rate:.1f} matches/s  ETA {eta_text}  leader {self.leader()}")

    def leader(self) -> str:
        """The bot with the highest share of pairwise points so far.

        Recounted from every outcome, so at most every second and at most a tenth of the
        time: a long league's bar must not slow the league.
        """
        now = time.monotonic()
        if now - self.leader_at >= max(1.0, 10 * self.leader_cost):
            self.leader_text = self._count_leader()
            self.leader_at, self.leader_cost = now, time.monotonic() - now
        return self.leader_text

    def _count_leader(self) -> str:
        matrix = score_matrix(self.outcomes)
        results = matrix.games.sum(axis=1)
        if not results.any():
            return "-"
        share = np.divide(matrix.points.sum(axis=1), results, out=np.zeros(len(results)),
                          where=results > 0)
        best = int(np.argmax(share))
        return f"{matrix.bots[best].split('@')[0]} ({share[best]:.0%} of pairwise points)"

    def finish(self) -> None:
        if self.live:
            self.stream.write("\r" + self.line() + "\033[K\n")
            self.stream.flush()


@bench.command("league")
@click.option("--deals", type=int, default=20,
              help="Deals per league (default 20: 240 matches).")
@click.option("--repeats", type=int, default=3,
              help="Runs with each worker count, alternating (default 3).")
@click.option("--move-time", type=float, default=1.0, help="Per-move limit in seconds.")
def bench_league(deals, repeats, move_time):
    """Matches per second of a 4-bot mandala league of sample bots, 1 worker vs 2."""
    from arena.bench.league import measure, render
    click.echo(render(measure(deals=deals, move_time=move_time, repeats=repeats)))


@league.command("export")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file (default, or `-`: standard output).")
def export_command(folder, output):
    """Write a league's match records as JSON Lines: one arena-record/1 per line, in schedule
    order, each with its league match id as key `match` (for `arena replay --match`)."""
    if output is not None and str(output) == STDOUT:
        output = None
    if output is not None and not output.parent.is_dir():
        raise LeagueError(f"cannot write {output}: folder {output.parent} does not exist")
    lines = (json.dumps({**record, "match": match_id}, separators=(",", ":"))
             for match_id, record in read_records(folder))
    if output is None:
        for line in lines:
            click.echo(line)
        return
    draft = output.with_name(output.name + ".part")   # a reader never sees half an export
    try:
        with open(draft, "w") as file:
            count = sum(file.write(line + "\n") > 0 for line in lines)
        draft.replace(output)
    except OSError as error:
        draft.unlink(missing_ok=True)
        raise LeagueError(f"cannot write {output}: {error.strerror}") from None
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
