"""Starting the service: open the data folder, check that bots can be checked here (the
sample bot passes the admission check on every ladder, else the service does not start),
start the admission and match threads, serve HTTP with uvicorn until stopped (Ctrl-C or
SIGTERM), then stop the threads.

The data folder holds everything: `service.sqlite` (with the deal key, which no sandbox ever
mounts: bots see only their own version folder), `bots/` (versions, read-only), `logs/`
(the bots' stderr during matches), `checks/` (logs of admission checks).
"""
from __future__ import annotations

import functools
import logging
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from arena.errors import ArenaError
from arena.keys import LeagueKey
from arena.serve.admission import RETRY_PAUSE, Admission, checked, refuse_unfinished
from arena.serve.app import Service, create_app
from arena.serve.db import Ladder, ServiceDB, ladder_id
from arena.serve.player import MatchPlayer
from arena.serve.connections import uvicorn_settings
from arena.serve.compliance import SAMPLE_BOT, checked_elsewhere, compliance_check, sample_check
from arena.serve.uploads import UploadLimits
from arena.serve.capacity import LoadWatch
from arena.league.workers import Dispatcher
from engine import registry

log = logging.getLogger(__name__)

DEFAULT_SUBMISSIONS_PER_HOUR = 20


@dataclass(frozen=True)
class ServeOptions:
    data: Path
    host: str
    port: int
    ladders: Sequence[tuple[str, int]]
    workers: int
    time_control: dict | None
    """For new ladders; None: the stored one (the default for a new ladder)."""
    submissions_per_hour: int = DEFAULT_SUBMISSIONS_PER_HOUR
    matches_per_minute: int | None = None
    """The service's pace (arena.serve.pace); None: as fast as its workers play."""
    limits: UploadLimits = UploadLimits()
    watch_load: bool = True
    """Warn while this machine's load keeps its matches from their cores (off when they run
    on a Ray cluster elsewhere)."""


def parse_ladder(text: str) -> tuple[str, int]:
    """`GAME:PLAYERS` -> (game, players), checked against the engine's games."""
    game, sep, players = text.partition(":")
    if not sep or not players.isdigit():
        raise ArenaError(f"--ladder wants GAME:PLAYERS, e.g. mandala:2, not {text!r}")
    registry.get(game).resolve_options({}, int(players))   # unknown game or player count
    if int(players) < 2:
        raise ArenaError(f"ladder {text}: a ladder needs matches of 2 or more players")
    return game, int(players)


def open_ladders(db: ServiceDB, wanted: Sequence[tuple[str, int]],
                 time_control: dict | None) -> dict[str, Ladder]:
    """The ladders to serve, made if new; a refusal (another time control, other rules)
    comes before any new ladder is made: existing ladders are opened first."""
    existing = {ladder.id for ladder in db.ladders()}
    ladders = {}
    for game, players in sorted(wanted, key=lambda pair: ladder_id(*pair) not in existing):
        ladder = db.ensure_ladder(game, players, registry.get(game).rules(), time_control)
        ladders[ladder.id] = ladder
    return {ladder_id(*pair): ladders[ladder_id(*pair)] for pair in wanted}   # as asked


def deal_key(db: ServiceDB) -> LeagueKey:
    """The service's secret key for deals: made once, kept in the database."""
    return LeagueKey.from_hex(db.secret("deal_key", lambda: LeagueKey.new().hex()))


def check_address(host: str, port: int) -> None:
    """Refuses an address we cannot listen on in one line, before anything starts."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn does
            probe.bind(address)
    except OSError as error:
        raise ArenaError(f"cannot listen on {host}:{port} ({error.strerror or error}): "
                         "choose another --port or --host") from None


def self_check(ladders: dict[str, Ladder], folder: Path, pause: float = RETRY_PAUSE) -> None:
    """Runs the admission check on the sample bot on every ladder (tried again as any
    check is); ArenaError, one line, when it fails: a service that cannot pass it would
    reject every author's bot for its operator's mistake (a time control no bot meets, a
    broken sandbox)."""
    for ladder in ladders.values():
        started = time.monotonic()
        logs = folder / "checks" / "self-check"
        verdict = checked(functools.partial(sample_check, ladder, logs), pause=pause)
        if not verdict.passed:
            reason = " ".join(verdict.reason.split())
            raise ArenaError(f"arena serve cannot check bots here, so it does not start: the "
                             f"sample bot {SAMPLE_BOT} fails the admission check on "
                             f"{ladder.id} ({reason}; logs in {logs}); fix the host (see "
                             "`arena doctor`) or the time control, then start again")
        log.info("self-check: the sample bot %s passes the admission check on %s (%.1f s)",
                 SAMPLE_BOT, ladder.id, time.monotonic() - started)


def serve(options: ServeOptions, executor: Dispatcher) -> None:
    """Serves until stopped; `executor` (kept: its workers live across batches) plays
    `options.workers` matches at once and is closed, its bots ended, when the service stops."""
    import uvicorn   # the web server, loaded only to serve

    from arena import sandbox
    sandbox.require()   # every bot runs sandboxed: refuse to start without bubblewrap
    check_address(options.host, options.port)
    db = ServiceDB.open(options.data)
    ladders = open_ladders(db, options.ladders, options.time_control)
    refuse_unfinished(db)
    self_check(ladders, db.folder)
    key = deal_key(db)
    (db.folder / "logs").mkdir(exist_ok=True)
    player = MatchPlayer(db, list(ladders.values()), executor, key, options.workers,
                         db.folder / "logs", matches_per_minute=options.matches_per_minute)
    load = LoadWatch(options.workers) if options.watch_load else None
    # A portable Ray pool checks versions on its actors too (once one is up), between
    # their matches, and the sample bot there after a failure there; the self-check (above)
    # runs here.
    check, sample = checked_elsewhere(executor.check_on_worker) if getattr(
        executor, "portable", False) else (compliance_check, sample_check)
    admission = Admission(db, ladders, check, sample, on_admitted=player.news.set)
    app = create_app(Service(db, ladders, options.limits, options.submissions_per_hour,
                             on_submission=admission.news.set, playing=player.playing,
                             matches_per_minute=options.matches_per_minute))
    admission.start()
    player.start()
    if load is not None:
        load.start()
    log.info("%s from %s on http://%s:%d/", ", ".join(ladders), db.folder, options.host,
             options.port)
    try:
        uvicorn.run(app, host=options.host, port=options.port, log_level="warning",
                    **uvicorn_settings())   # requests' deadlines, a cap on connections
    finally:
        if load is not None:
            load.stop()
        admission.stop()
        player.stop()
        # The player ends its workers and their bots as it stops; whatever it cannot end in
        # time ends with this process (workers: parent-death signal; bots: their reapers).
        player.join(timeout=30)
        admission.join(timeout=10)
