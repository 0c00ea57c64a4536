"""`arena serve` (the ladder service), `arena author add`, and its clients: `arena submit` and
`arena author recheck`."""
from __future__ import annotations

import logging
import time
import urllib.parse
from pathlib import Path

import click

from arena.cli import client
from arena.cli.options import (client_options, data_option, executor_from, executor_options,
                               timing_options)
from arena.cli.root import main
from arena.errors import ArenaError, visible
from arena.league.config import LeagueError
from arena import hostload
from arena.serve.capacity import clamp_workers
from arena.league.workers import Dispatcher


@main.command()
@data_option("The service's folder: its database and submitted bots (made if new).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--ladder", "ladders", multiple=True, metavar="GAME:PLAYERS",
              help="A ladder to serve (repeatable; default mandala:2).")
@executor_options(capped=True)
@timing_options(" Only a new ladder's: a ladder's time control is fixed when it is made.")
@click.option("--submissions-per-hour", type=click.IntRange(min=1), default=None,
              help="Most submissions an author may make in an hour (default 20).")
@click.option("--matches-per-minute", type=click.IntRange(min=1), default=None,
              help="Play at most this many matches a minute, on average, over all ladders "
                   "(default: as many as the workers can), to leave a shared machine's "
                   "cores to other work; the first minute's worth is played at once.")
def serve(data, host, port, ladders, workers, executor, ray_address, pin, move_time, tc,
          startup_time, submissions_per_hour, matches_per_minute) -> None:
    """Run a ladder service: authors submit bots, the ladders keep playing, a browser shows
    them (and a JSON API under /api/)."""
    from arena.clock import TimeControl
    from arena.serve import service
    # The service's log is its operator's record (self-checks, verdicts, pauses), even
    # without -v.
    serve_log = logging.getLogger("arena.serve")
    if not serve_log.isEnabledFor(logging.INFO):
        serve_log.setLevel(logging.INFO)
    wanted = [service.parse_ladder(text) for text in ladders or ("mandala:2",)]
    # None: an existing ladder keeps its stored time control, a new one gets the default.
    time_control = None if move_time is None and tc is None and startup_time is None \
        else TimeControl.from_cli(move_time, tc, startup_time).to_record()
    executor, count = _executor(workers, executor, ray_address, pin)
    options = service.ServeOptions(
        data=data, host=host, port=port, ladders=wanted, workers=count,
        time_control=time_control,
        submissions_per_hour=submissions_per_hour or service.DEFAULT_SUBMISSIONS_PER_HOUR,
        matches_per_minute=matches_per_minute,
        watch_load=ray_address is None)   # else the matches run on the cluster's machines
    try:
        service.serve(options, executor)
    finally:
        executor.close()   # if the service never started its match thread


def _executor(workers: int | None, executor: str, ray_address: str | None,
              pin: bool) -> tuple[Dispatcher, int]:
    """The service's one executor, kept for its life (workers and bot pools live across
    batches), and how many matches it plays at once: never more than the machine's cores,
    or with Ray the cluster's CPUs (Ray joined or started here, once)."""
    if workers is not None and workers < 1:
        raise LeagueError(f"--workers must be at least 1, not {workers}")
    # No count asked of it: more --workers than cores is cut to the cores here, not refused.
    pool = executor_from(None, executor, ray_address, quiet=False, keep=True, portable=True,
                         pin=pin)
    if executor == "ray":
        count = clamp_workers(workers, pool.cpus(), "(CPUs) in the Ray cluster")
    else:
        count = clamp_workers(workers, hostload.cores(), "on this machine")
    pool.workers = count
    return pool, count


@main.group()
def author() -> None:
    """Authors of a ladder service (who may submit bots), and their re-checks."""


@author.command("add")
@click.argument("name")
@data_option()
def author_add(name: str, data: Path) -> None:
    """Add an author and print their token (shown this once; keep it secret)."""
    from arena.serve.authors import add_author
    from arena.serve.db import ServiceDB
    token = add_author(ServiceDB.open(data), name)
    click.echo(token)


@author.command("rotate-token")
@click.argument("name")
@data_option()
def author_rotate_token(name: str, data: Path) -> None:
    """Give an author a new token and print it (shown this once); the old one stops working
    at once, on a running service too."""
    from arena.serve.authors import rotate_token
    click.echo(rotate_token(_existing_db(data), name))


@author.command("retire-bot")
@click.argument("author_name", metavar="AUTHOR")
@click.argument("bot")
@data_option()
def author_retire_bot(author_name: str, bot: str, data: Path) -> None:
    """Retire an author's bot: it plays no more matches and its name cannot be submitted
    again; its matches, versions and rating history stay on its page."""
    from arena.serve.authors import retire_bot
    retire_bot(_existing_db(data), author_name, bot)
    click.echo(f"{author_name}/{bot} is retired")


def _existing_db(data: Path):
    """The data folder's database; a folder without one is a mistyped --data, not a new
    service: refused rather than made."""
    from arena.serve.db import DB_NAME, ServiceDB
    if not (data / DB_NAME).exists():   # not a file: ServiceDB.open says so
        raise ArenaError(f"{data} holds no service database ({DB_NAME}): give the --data "
                         "folder `arena serve` uses")
    return ServiceDB.open(data)


@main.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@client_options
@click.option("--ladder", default="mandala:2", show_default=True, metavar="GAME:PLAYERS")
@click.option("--wait", is_flag=True,
              help="Wait for the check's verdict (up to 10 minutes); exit 1 if the bot is "
                   "rejected.")
def submit(folder: Path, server: str, token: str, ladder: str, wait: bool) -> None:
    """Pack a bot folder and submit it to a ladder service as a new version."""
    from arena.serve.uploads import pack_folder
    base = client.base_url(server)
    data = pack_folder(folder)
    url = f"{base}/api/submissions?{urllib.parse.urlencode({'ladder': ladder})}"
    answer = client.submission(client.call(url, token, data, "application/gzip"))
    _follow(base, token, answer, wait)


@author.command("recheck")
@click.argument("submission", type=click.IntRange(min=1))
@client_options
@click.option("--wait", is_flag=True,
              help="Wait for the check's verdict (up to 10 minutes); exit 1 if the bot is "
                   "rejected again.")
def author_recheck(submission: int, server: str, token: str, wait: bool) -> None:
    """Ask for the one re-check of a rejected version (its check is run again, as a new
    submission of the same version)."""
    base = client.base_url(server)
    answer = client.submission(
        client.call(f"{base}/api/submissions/{submission}/recheck", token, b""))
    click.echo(f"submission {answer['id']} re-checks submission {submission}")
    _follow(base, token, answer, wait)


def _follow(base: str, token: str, answer: dict, wait: bool) -> None:
    """Prints a new submission and, with `wait`, its verdict (exit 1 unless admitted; an
    ArenaError if there is none within client.WAIT_SECONDS). The server's texts are
    printed escaped."""
    click.echo(f"submission {answer['id']}: {visible(answer['status'])} "
               f"({base}{visible(answer['url'])})")
    if not wait:
        return
    started = time.monotonic()
    while answer["status"] == "checking":
        if time.monotonic() - started + client.POLL_SECONDS > client.WAIT_SECONDS:
            raise ArenaError(f"submission {answer['id']} was still being checked after "
                             f"{client.WAIT_SECONDS:g} s: its verdict will be on "
                             f"{base}{visible(answer['url'])}")
        time.sleep(client.POLL_SECONDS)
        answer = client.submission(
            client.call(f"{base}/api/submissions/{answer['id']}", token))
    click.echo(f"submission {answer['id']}: {visible(answer['status'])}"
               + (f": {visible(answer['reason'])}" if answer.get("reason") else ""))
    if answer["status"] != "admitted":
        if answer.get("log"):
            click.echo(visible(answer["log"], multiline=True).rstrip())
        if answer.get("recheck"):
            click.echo(f"(one re-check of this version may be asked for: arena author "
                       f"recheck {answer['id']} --server {base})")
        raise SystemExit(1)
