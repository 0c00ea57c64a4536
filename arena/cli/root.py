"""The root of the `arena` command: the click group every command module registers on, its
one-line errors (never a traceback), logging set-up, and the `bench` group.

Command modules are imported only when their command runs (or `--help` lists it): each
registers its commands on `main` or `bench` as it is imported, and `COMMAND_MODULES` says
which module holds which command. Importing them all up front cost every `arena` process
~0.45 s of CPU (numpy, gRPC, Starlette, Ray's client), paid by every bot check, league
worker and test that starts one."""
from __future__ import annotations

import importlib
import logging
import resource
import sys

import click

from arena.errors import ArenaError
from engine.core import EngineError


class UserError(click.ClickException):
    """One clear line for the user and exit status 2 (unusable input)."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"arena: error: {self.format_message()}", err=True)


def _usage_line(error: click.UsageError) -> UserError:
    """click's usage error (several lines: usage, hint, error) as one line naming the help."""
    where = error.ctx.command_path if error.ctx is not None else "arena"
    return UserError(f"{error.format_message().rstrip('.')} (see `{where} --help`)")


COMMAND_MODULES = {
    "main": {"play": "play", "games": "games_cmds", "verify": "games_cmds", "ladder": "ladder",
             "league": "league", "serve": "serve", "author": "serve", "submit": "serve",
             "doctor": "doctor", "bot": "bot_cmds", "replay": "replay", "sprt": "sprt",
             "debug": "debug"},
    "bench": {"engine": "bench_engine", "ratings": "bench_ratings", "league": "league",
              "protocol": "bench_protocol", "serve": "bench_serve", "startup": "bench_sandbox",
              "freeze": "bench_sandbox", "fairness": "bench_fairness", "ismcts": "bench_ismcts",
              "sprt": "bench_sprt", "seating": "bench_seating"},
}
"""Group name -> its command name -> the module of arena.cli that defines it."""


class LazyGroup(click.Group):
    """A group whose commands' modules are imported when a command is first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMAND_MODULES.get(self.name, ())))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(self.name, {}).get(name)
        if name not in self.commands and module is not None:
            importlib.import_module(f"arena.cli.{module}")   # registers it on this group
        return super().get_command(ctx, name)


class ArenaGroup(LazyGroup):
    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        try:   # the root's own options and arguments
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _usage_line(error) from None

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (EngineError, ArenaError) as error:
            raise UserError(str(error)) from None
        except click.UsageError as error:   # a sub-command's options and arguments
            raise _usage_line(error) from None


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True,
              help="Log what happens: -v worker and Ray events, -vv also the bot wire traffic.")
def main(verbose: int) -> None:
    """Arena: run bots at card games, leagues and Elo ladders."""
    raise_open_files_limit()
    setup_logging(verbose)
    from arena.sandbox import cgroups   # what a dead arena left: every command ends it
    cgroups.sweep_orphans()


def raise_open_files_limit() -> None:
    """Raises this process's open-files soft limit to its hard limit: every bot connection
    and pipe costs the arena a descriptor, and a stock soft limit of 1024 is soon spent."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass   # `arena doctor` reports the limit


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (click's test runner swaps it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(verbose: int) -> None:
    """Arena's log lines on stderr as `arena: ...`: warnings always, INFO with -v, DEBUG -vv."""
    logger = logging.getLogger("arena")
    if not logger.handlers:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("arena: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel([logging.WARNING, logging.INFO][verbose] if verbose < 2 else logging.DEBUG)


@main.group(cls=LazyGroup)
def bench() -> None:
    """Benchmarks: commands that measure and print figures."""
