"""The match thread: keeps every ladder playing, on the league's worker processes.

Round after round, it asks the scheduler for a few tables of every ladder, plays each table
in every seating, each seating on a new deal (its seed derived from the service's secret
key, the table's number and the seating, so no two matches ever share one: no version plays
a deal twice, and no process of a bot can tell another what it saw of a deal), hands all the
round's matches to the executor at once (local worker processes or Ray actors, exactly as a
league does: bots run only there, sandboxed), the ladders' matches taken in turns, so the
ladders play concurrently and no worker idles at the end of one ladder's batch while
another's has matches left; it stores each finished match in its own transaction as it
comes back (with the Ray node that played it, and first the log lines its bots wrote there:
this process is the only writer of the database and of the logs authors read), and refits
each ladder after the round. A batch is small (a few tables per worker), so a newly
admitted version joins within seconds.

The executor is one for the service's life (a kept Dispatcher): its workers and their bot
pools (capped at `POOL_TABLES` tables' worth of processes) stay up across batches, so no
batch pays for starting workers and bots, and the thread ends them when it stops. A round
that hits a fault of the host (HostError) pauses its ladders that have matches left
(`HOST_PAUSE` seconds, doubled while it lasts) with a logged reason, and their unplayed
matches are played first when they resume: never stored as a result, never charged to a bot.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import random
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from arena.errors import ArenaError, HostError
from arena.keys import LeagueKey
from arena.league.config import RunPlan
from arena.league.nodelogs import append_logs
from arena.stats.ratings import pairwise_results
from arena.league.schedule import MatchSpec, rotations
from arena.serve import scheduler
from arena.serve.pace import Pace
from arena.serve.db import Ladder, ServiceDB, Version
from arena.serve.standings import Standings, refit
from arena.league.store import BotEntry, FinishedMatch
from arena.league.workers import Dispatcher

log = logging.getLogger(__name__)

TABLES_PER_WORKER = 2
"""Tables per worker in a batch while some version is new: its next tables follow its latest
rating, and a version admitted meanwhile waits at most one short batch."""
SETTLED_TABLES_PER_WORKER = 6
"""... and once every version is narrow: longer batches start workers and bots less often."""
IDLE_WAIT = 1.0
"""Seconds to wait for news when no ladder has enough bots to play."""
POOL_TABLES = 2
"""Tables' worth of bot processes a worker keeps between matches (a table of n players
needs n versions, a process each): enough to reuse a version's processes from batch to batch, few
enough that a worker's bots stay flat however many versions its ladders have."""
HOST_PAUSE = 30.0
"""Seconds a ladder waits after a host fault; doubled at each fault in a row, to MAX_PAUSE."""
MAX_PAUSE = 600.0
ERROR_PAUSE = 5.0
"""Seconds to wait after any other failed batch."""
WATCH_SECONDS = 5.0
"""The longest the thread waits for its pace without looking after its executor
(`Dispatcher.watch`: a Ray cluster whose head is lost must be left within a minute)."""


def table_specs(ladder: Ladder, key: LeagueKey, table_no: int,
                versions: Sequence[Version]) -> list[MatchSpec]:
    """A table's matches: every seating of its bots (both, with two), each on a new deal.
    The table stays the ratings' cluster (`deal`): its games share bots and time."""
    names = [f"v{version.id}" for version in versions]
    specs = []
    for index, seats in enumerate(rotations(names)):
        deal_seed = key.deal_seed(f"{ladder.id}/table/{table_no}/seating/{index}")
        match_id = f"{ladder.id}-t{table_no}-s{index}"
        specs.append(MatchSpec(
            id=match_id, order=table_no, deal_index=table_no, seed=deal_seed, seats=seats,
            deal=f"t{table_no}",
            bot_seeds=tuple(key.bot_seed(match_id, seat) for seat in range(len(seats)))))
    return specs


_LOG_PATHS = re.compile(r" \(its stderr: [^)]*\)|; its stderr: [^)]*")


def public_record(record: dict) -> dict:
    """The record as the service keeps it for everyone to read: a forfeit's detail without
    what a bot's own code said when it failed (its author reads that in the bot's log: an
    exception's text can tell a secret) and without the service's log paths."""
    forfeit = record.get("result", {}).get("forfeit")
    if not forfeit or "detail" not in forfeit:
        return record
    detail = _LOG_PATHS.sub("", forfeit["detail"])
    if forfeit.get("reason") == "error":
        detail = (detail.split(": its code failed", 1)[0]
                  + ": its code failed (what it said is in the bot's log, for its author)")
    return {**record, "result": {**record["result"], "forfeit": {**forfeit, "detail": detail}}}


def store_finished(db: ServiceDB, ladder: Ladder, finished: FinishedMatch,
                   versions: dict[str, Version]) -> None:
    """One finished match into the database, with its seats and pairwise results; its record
    as everyone may read it (`public_record`)."""
    finished = dataclasses.replace(finished, record=public_record(finished.record))
    spec = finished.spec
    seated = [versions[name] for name in spec.seats]
    labels = [version.label for version in seated]
    row = finished.row(ladder=ladder.id, table_no=spec.deal_index,
                       versions=json.dumps([version.id for version in seated]),
                       labels=json.dumps(labels), node=finished.node or None)
    outcome = finished.outcome(labels)
    seats = [(version.id, seat, row["forfeit_reason"] if outcome.forfeit_seat == seat else None)
             for seat, version in enumerate(seated)]
    pairs = pairwise_results([outcome])
    by_label = {version.label: version.id for version in seated}
    db.add_match(row, seats, [(by_label[pairs.bots[a]], by_label[pairs.bots[b]], float(score))
                              for a, b, score in zip(pairs.first, pairs.second, pairs.score)])


@dataclass
class Batch:
    """Matches of one ladder to play, and the versions they seat (by their names there)."""

    specs: list[MatchSpec]
    versions: dict[str, Version]


@dataclass
class Pause:
    """A ladder waiting out a host fault."""

    until: float
    faults: int
    reason: str


class MatchPlayer(threading.Thread):
    """The thread that plays matches while the service runs."""

    def __init__(self, db: ServiceDB, ladders: Sequence[Ladder], executor: Dispatcher,
                 key: LeagueKey, workers: int, log_dir: Path, *, seed: int | None = None,
                 tables: int | None = None, matches_per_minute: int | None = None):
        """`tables`: a fixed number of tables per batch (the bench's short batches), rather
        than a few per worker. `matches_per_minute`: the service's pace (`Pace`; None: as
        fast as the workers play)."""
        super().__init__(name="arena-serve-matches", daemon=True)
        self.db = db
        self.ladders = list(ladders)
        self.executor = executor   # kept across batches; closed when the thread ends
        self.key = key
        self.workers = max(1, workers)
        self.log_dir = log_dir
        self.pool_bots = POOL_TABLES * max((ladder.players for ladder in self.ladders),
                                           default=2) ** 2
        self.tables = tables
        self.rng = random.Random(seed)
        self.stopping = threading.Event()
        self.news = threading.Event()   # set when a version is admitted
        self.unplayed: dict[str, Batch] = {}   # ladder -> matches a host fault kept from play
        self.paused: dict[str, Pause] = {}
        self.host_pause = HOST_PAUSE
        self.pace = Pace(matches_per_minute)
        self.dealt: dict[str, tuple[str, list[str]]] = {}
        """This round's matches not stored yet: id -> (ladder, the seated versions' labels)."""

    def stop(self) -> None:
        self.stopping.set()
        self.news.set()

    def run(self) -> None:
        try:
            for ladder in self.ladders:
                refit(self.db, ladder.id)
            while not self.stopping.is_set():
                self.watch_executor()
                if (wait := self.pace.wait()) > 0:
                    self.stopping.wait(min(wait, WATCH_SECONDS))
                    continue
                self.news.clear()
                played = self.turn(*self.ladders)
                if played:
                    self.pace.played(played)
                else:
                    self.news.wait(IDLE_WAIT)
        finally:
            self.executor.close()   # the workers end their bots (thawed first)

    def watch_executor(self) -> None:
        """Lets the executor look after what it keeps between rounds (`Dispatcher.watch`);
        when it says a fault of the host is over (a lost Ray cluster joined again), the
        ladders it paused play at once rather than at their pause's end."""
        if self.executor.watch() and self.paused:
            log.warning("ladder %s: the fault of the host is over (the Ray cluster is back): "
                        "play again now", ", ".join(sorted(self.paused)))
            now = time.monotonic()
            self.paused = {ladder_id: dataclasses.replace(pause, until=now)
                           for ladder_id, pause in self.paused.items()}

    def turn(self, *ladders: Ladder) -> int:
        """Plays one round: a batch of each of `ladders` not paused, all dealt together.
        A failed round is logged (a host fault pauses its ladders) and counts as none."""
        now = time.monotonic()
        ready = [ladder for ladder in ladders if ladder.id not in self.paused
                 or now >= self.paused[ladder.id].until]
        if not ready or self.stopping.is_set():
            return 0
        names = ", ".join(ladder.id for ladder in ready)
        try:
            played = self.play_batch(*ready)
        except HostError as error:
            for ladder in ready:
                if ladder.id in self.unplayed:
                    self.pause(ladder, str(error))
            return 0
        except ArenaError as error:
            log.error("ladder %s: %s", names, error)
            self.stopping.wait(ERROR_PAUSE)
            return 0
        except Exception:   # keep serving; the next round starts afresh
            log.exception("ladder %s: a batch failed", names)
            self.stopping.wait(ERROR_PAUSE)
            return 0
        for ladder in ready:
            pause = self.paused.pop(ladder.id, None)
            if pause is not None:
                log.warning("ladder %s plays again after its pause (%s)", ladder.id,
                            pause.reason)
        return played

    def pause(self, ladder: Ladder, reason: str) -> None:
        """Pauses a ladder's play after a host fault, for longer at each fault in a row."""
        faults = self.paused[ladder.id].faults + 1 if ladder.id in self.paused else 1
        seconds = min(MAX_PAUSE, self.host_pause * 2 ** (faults - 1))
        self.paused[ladder.id] = Pause(time.monotonic() + seconds, faults, reason)
        waiting = self.unplayed.get(ladder.id)
        log.warning("ladder %s paused for %.0f s by a fault of the host, not of any bot: %s; "
                    "its %d unplayed matches are played when it resumes (none is stored or "
                    "charged to a bot)", ladder.id, seconds, reason,
                    len(waiting.specs) if waiting else 0)

    def playing(self, ladder_id: str) -> list[dict]:
        """The ladder's matches being played now (asked by the web app's threads): those
        the executor says its workers play, else every match of the round not yet stored."""
        dealt = dict(self.dealt)   # a copy: this thread changes it as matches come back
        in_play = getattr(self.executor, "in_play", None)
        ids = in_play() if in_play is not None else list(dealt)
        return [{"id": match_id, "ladder": ladder_id, "bots": dealt[match_id][1]}
                for match_id in sorted(ids) if dealt.get(match_id, ("",))[0] == ladder_id]

    def plan(self, ladder: Ladder, batch: Batch) -> RunPlan:
        return RunPlan(ladder.game, ladder.players, {}, dict(ladder.time_control),
                       tuple(BotEntry(name, version.version, version.folder, (ladder.game,))
                             for name, version in batch.versions.items()),
                       sandbox=True, log_dir=str(self.log_dir), pool_bots=self.pool_bots,
                       seat_lanes=False,   # every match on a deal of its own
                       log_names=tuple((name, version.log_name)
                                       for name, version in batch.versions.items()))

    def play_batch(self, *ladders: Ladder) -> int:
        """Plays one batch of each of `ladders` (first what a host fault left unplayed), all
        in one run of the executor, their matches taken in turns: a worker that is done with
        one ladder's matches plays another's, rather than wait for the last of a batch.
        Returns how many matches were stored. On HostError the matches not stored are kept
        for later, each with its ladder."""
        batches = {}
        for ladder in ladders:
            batch = self.unplayed.pop(ladder.id, None) or self.new_batch(ladder)
            if batch is not None:
                batches[ladder.id] = (ladder, batch, self.plan(ladder, batch))
        if not batches:
            return 0
        lanes = [[(plan, spec) for spec in batch.specs] for _, batch, plan in batches.values()]
        jobs = [job for turn in itertools.zip_longest(*lanes) for job in turn if job]
        owner = {spec.id: ladder_id for ladder_id, (_, batch, _) in batches.items()
                 for spec in batch.specs}
        stored: dict[str, set[str]] = {ladder_id: set() for ladder_id in batches}
        self.dealt = {spec.id: (ladder.id, [batch.versions[name].label for name in spec.seats])
                      for ladder, batch, _ in batches.values() for spec in batch.specs}
        finished = self.executor.run_jobs(jobs)
        try:
            for match in finished:
                ladder, batch, _ = batches[owner[match.spec.id]]
                # A node's log lines first: once the match is listed, its log shows it.
                append_logs(self.log_dir, match.logs)
                store_finished(self.db, ladder, match, batch.versions)
                stored[ladder.id].add(match.spec.id)
                self.dealt.pop(match.spec.id, None)
                if self.stopping.is_set():
                    break
        except HostError:
            for ladder_id, (_, batch, _) in batches.items():
                left = [spec for spec in batch.specs if spec.id not in stored[ladder_id]]
                if left:
                    self.unplayed[ladder_id] = Batch(left, batch.versions)
            raise
        finally:
            finished.close()
            self.dealt = {}
            for ladder_id, done in stored.items():
                if done:
                    refit(self.db, ladder_id)
        return sum(map(len, stored.values()))

    def new_batch(self, ladder: Ladder) -> Batch | None:
        """The next tables the scheduler picks on `ladder`, or None when it has too few bots."""
        standings = refit(self.db, ladder.id)
        tables = self.pick(ladder, standings)
        if not tables:
            return None
        first = self.db.take_tables(ladder.id, len(tables))
        versions: dict[str, Version] = {}
        specs: list[MatchSpec] = []
        for table_no, table in enumerate(tables, start=first):
            seated = [self.db.version(version_id) for version_id in table]
            versions.update({f"v{version.id}": version for version in seated})
            specs += table_specs(ladder, self.key, table_no, seated)
        return Batch(specs, versions)

    def pick(self, ladder: Ladder, standings: Standings) -> list[tuple[int, ...]]:
        rated = [scheduler.Rated(standings.versions[row.bot].id, row.elo, row.interval,
                                 row.games) for row in standings.table.rows]
        by_id = {version.id: version for version in standings.versions.values()}

        def los(better: scheduler.Rated, worse: scheduler.Rated) -> float:
            return standings.los(by_id[better.key], by_id[worse.key])

        settled = all(scheduler.is_narrow(bot) for bot in rated)
        count = self.tables or self.workers * (SETTLED_TABLES_PER_WORKER if settled
                                               else TABLES_PER_WORKER)
        return scheduler.pick_tables(rated, ladder.players, count, self.rng, los)

