"""The options several commands share, each written once: how matches are run (--workers,
--executor, --ray-address, --fresh-bots, --quiet, --skip-check), their time control
(--move-time, --tc, --startup-time), the sandbox, a game's rule options, an output file where
`-` means standard output, and the ladder service's folder and address; with what they turn
into (the executor, the bots' check before a league).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import click

from arena import hostload
from arena.bots.manifest import is_builtin
from arena.league.config import LeagueConfig, LeagueError
from arena.league.store import BotEntry
from arena.league.workers import Dispatcher, ProcessPool

STDOUT = "-"
"""An output file named so is standard output."""


def _options(*options: Callable) -> Callable:
    """One decorator applying `options` in the order given (as they show in --help)."""
    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command
    return apply


def executor_options(capped: bool = False) -> Callable:
    """--workers, --executor and --ray-address (`executor_from` turns them into an executor).
    `capped`: the command never plays more matches at once than there are cores (the
    service), and --workers' help says so."""
    default = "default, and at most" if capped else "default"
    return _options(
        click.option("--workers", type=int, default=None,
                     help=f"Matches played at once, each worker with its own bots ({default}: "
                          "the machine's cores; with Ray, the cluster's CPUs)."),
        click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
                     show_default=True,
                     help="Where workers run: local processes, or Ray actors (across machines; "
                          "needs pip install 'arena[ray]')."),
        click.option("--ray-address", default=None, metavar="ADDRESS",
                     help="With --executor ray: join this running Ray cluster (HOST:PORT; "
                          "default: start Arena's own local Ray for the run, never one another "
                          "program started)."),
        click.option("--pin", is_flag=True,
                     help="Keep each local worker, with its bots, on a core of its own even "
                          "when the workers leave cores free (they always are when they fill "
                          "the cores; sandboxed bots only). Without it a lone worker keeps "
                          "its own threads on one core and its bots on the others, which is "
                          "faster still; pinned, it leaves the other cores to other work."),
    )


run_options = _options(
    executor_options(),
    click.option("--fresh-bots", is_flag=True,
                 help="Start new bot processes for every match: strict isolation (a pooled "
                      "bot process could remember a deal it saw in an earlier seating); "
                      "slower."),
    click.option("--quiet", is_flag=True,
                 help="No progress bar (for scripts); the results are still printed."),
    click.option("--skip-check", is_flag=True,
                 help="Do not check the bots before the first match (by default each bot "
                      "plays one short match, as in `arena bot check`, and the run is refused "
                      "if one fails)."),
)
"""Options of the commands that play many matches (`arena league run/resume`, `arena sprt`)."""

def timing_options(note: str = "") -> Callable:
    """--move-time, --tc and --startup-time (`TimeControl.from_cli` reads them); `note` ends
    --move-time's help where the command times only some matches with them."""
    return _options(
        click.option("--move-time", type=float, default=None,
                     help="Per-move limit in seconds (default 1.0 when no --tc)." + note),
        click.option("--tc", default=None, metavar="BANK+INC",
                     help="Time bank and increment per move, in seconds, e.g. 10+0.1."),
        click.option("--startup-time", type=float, default=None,
                     help="Seconds a bot gets to start and shake hands (default 10)."),
    )


def sandbox_option(what: str = "bot folders", why: str = "trusted bots only") -> Callable:
    """--unsafe-no-sandbox: run `what` without bubblewrap (`why` says when that is wise)."""
    return click.option("--unsafe-no-sandbox", is_flag=True,
                        help=f"Run {what} without the bubblewrap sandbox ({why}).")


rule_option = click.option("--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
                           help="A rule option of the game (repeatable; see `arena games`).")


def seed_option(what: str) -> Callable:
    """--seed of a league or test (`what`): it fixes every deal with the installation's key."""
    return click.option("--seed", type=int, default=None,
                        help=f"{what.capitalize()} seed: with this installation's secret key it "
                             f"fixes every deal, so the same seed replays the same {what} "
                             "here (default: 64 random bits).")


def _stdout_as_none(ctx: click.Context, param: click.Parameter, value: Path | None
                    ) -> Path | None:
    if value is None or str(value) == STDOUT:
        return None
    if not value.parent.is_dir():   # refused before any work
        raise click.BadParameter(f"cannot write {value}: folder {value.parent} does not exist")
    return value


def output_option(help: str) -> Callable:
    """--output FILE; `-` or none: standard output (the command gets None)."""
    return click.option("--output", type=click.Path(dir_okay=False, allow_dash=True,
                                                    path_type=Path),
                        default=None, callback=_stdout_as_none,
                        help=f"{help} (default, or `-`: standard output).")


def executor_from(workers: int | None, executor: str, ray_address: str | None,
                  quiet: bool, *, keep: bool = False, portable: bool = False,
                  pin: bool = False) -> Dispatcher:
    """The executor --workers, --executor, --ray-address and --pin ask for (Ray joined or
    started now, so a bad address is refused before any work). `keep`: one executor for many
    runs, its workers and bots kept between them (the service's); `portable`: with Ray, nodes
    need none of this machine's folders (bots shipped, logs brought back: the service's)."""
    if ray_address is not None and executor != "ray":
        raise LeagueError("--ray-address needs --executor ray")
    if pin and executor == "ray":
        raise LeagueError("--pin applies to local workers: drop it, or use --executor local")
    if executor == "ray":
        from arena.league.ray_pool import RayPool   # Ray is optional and slow to import
        pool = RayPool(workers, ray_address, quiet=quiet, keep=keep, portable=portable)
        pool.connect(stay=keep)
        return pool
    return ProcessPool(hostload.cores() if workers is None else workers, keep=keep, pin=pin)


def data_option(help: str = "The service's data folder (as given to `arena serve`)."
                ) -> Callable:
    """--data: the ladder service's folder (`arena serve`, `arena author ...`)."""
    return click.option("--data", "data", type=click.Path(file_okay=False, path_type=Path),
                        required=True, help=help)


client_options = _options(
    click.option("--server", required=True, metavar="URL",
                 help="The service, e.g. http://127.0.0.1:8000"),
    click.option("--token", required=True, envvar="ARENA_TOKEN",
                 help="Your author token (or set ARENA_TOKEN)."),
)
"""Options of the ladder service's clients (`arena submit`, `arena author recheck`)."""


def bot_checker(skip_check: bool, quiet: bool
                ) -> Callable[[LeagueConfig, list[BotEntry]], None] | None:
    """What --skip-check leaves: `arena bot check` of every bot folder, one short match each
    at the league's game, player count and time control, refusing the league (one line per
    failing bot) if any fails. None with --skip-check."""
    if skip_check:
        return None

    def check(config: LeagueConfig, bots: list[BotEntry]) -> None:
        from arena.botcheck import check_league_bots   # here: it loads the match and the engines
        folders = [bot.source for bot in bots if not is_builtin(bot.source)]
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
    return check
