"""The match thread: keeps every ladder playing, on the league's worker processes.

In turns over the ladders, it asks the scheduler for a few tables, plays each table in every
seating, each seating on a new deal (its seed derived from the service's secret key, the
table's number and the seating, so no two matches ever share one: no version plays a deal
twice, and no process of a bot can tell another what it saw of a deal), hands those matches to the executor (local
worker processes or Ray actors, exactly as a league does: bots run only there, sandboxed),
stores each finished match in its own transaction as it comes back, and refits the ladder
after the batch. A batch is small (a few tables per worker), so a newly admitted version
joins within seconds. Nothing is kept in memory between batches but the latest standings.
"""
from __future__ import annotations

import json
import random
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable, Sequence

from arena.errors import ArenaError
from arena.keys import LeagueKey
from arena.league_config import RunPlan
from arena.ratings import Outcome, pairwise_results
from arena.schedule import MatchSpec, rotations
from arena.serve import scheduler
from arena.serve.db import Ladder, ServiceDB, Version
from arena.serve.standings import Standings, refit
from arena.store import BotEntry, FinishedMatch
from arena.workers import Executor

TABLES_PER_WORKER = 2
"""Tables per worker in a batch while some version is new: its next tables follow its latest
rating, and a version admitted meanwhile waits at most one short batch."""
SETTLED_TABLES_PER_WORKER = 6
"""... and once every version is narrow: longer batches start workers and bots less often."""
IDLE_WAIT = 1.0
"""Seconds to wait for news when no ladder has enough bots to play."""


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


def store_finished(db: ServiceDB, ladder: Ladder, finished: FinishedMatch,
                   versions: dict[str, Version]) -> None:
    """One finished match into the database, with its seats and pairwise results."""
    spec, record = finished.spec, finished.record
    seated = [versions[name] for name in spec.seats]
    result = record["result"]
    forfeit = result.get("forfeit") or {}
    labels = [version.label for version in seated]
    row = {"id": spec.id, "ladder": ladder.id, "table_no": spec.deal_index, "seed": spec.seed,
           "versions": json.dumps([version.id for version in seated]),
           "labels": json.dumps(labels), "scores": json.dumps(result["scores"]),
           "ranks": json.dumps(result["ranks"]), "end_kind": result["end"],
           "forfeit_seat": forfeit.get("seat"), "forfeit_reason": forfeit.get("reason"),
           "record": json.dumps(record, separators=(",", ":")), "started": finished.started,
           "seconds": finished.seconds, "stored": time.time()}
    seats = [(version.id, seat, forfeit.get("reason") if forfeit.get("seat") == seat else None)
             for seat, version in enumerate(seated)]
    outcome = Outcome(spec.id, spec.order, tuple(labels), tuple(result["ranks"]),
                      tuple(float(score) for score in result["scores"]), spec.deal,
                      forfeit.get("seat"))
    pairs = pairwise_results([outcome])
    by_label = {version.label: version.id for version in seated}
    db.add_match(row, seats, [(by_label[pairs.bots[a]], by_label[pairs.bots[b]], float(score))
                              for a, b, score in zip(pairs.first, pairs.second, pairs.score)])


class MatchPlayer(threading.Thread):
    """The thread that plays matches while the service runs."""

    def __init__(self, db: ServiceDB, ladders: Sequence[Ladder],
                 executors: Callable[[], Executor], key: LeagueKey, workers: int,
                 log_dir: Path, *, seed: int | None = None):
        super().__init__(name="arena-serve-matches", daemon=True)
        self.db = db
        self.ladders = list(ladders)
        # A new executor per batch: its budget of worker restarts is per run, and the
        # service's runs never end.
        self.executors = executors
        self.key = key
        self.workers = max(1, workers)
        self.log_dir = log_dir
        self.rng = random.Random(seed)
        self.stopping = threading.Event()
        self.news = threading.Event()   # set when a version is admitted

    def stop(self) -> None:
        self.stopping.set()
        self.news.set()

    def run(self) -> None:
        for ladder in self.ladders:
            refit(self.db, ladder.id)
        while not self.stopping.is_set():
            self.news.clear()
            played = 0
            for ladder in self.ladders:
                if self.stopping.is_set():
                    return
                try:
                    played += self.play_batch(ladder)
                except ArenaError as error:
                    print(f"arena serve: ladder {ladder.id}: {error}", file=sys.stderr)
                    self.stopping.wait(5)
                except Exception:   # keep serving; the next batch starts afresh
                    traceback.print_exc()
                    self.stopping.wait(5)
            if not played:
                self.news.wait(IDLE_WAIT)

    def play_batch(self, ladder: Ladder) -> int:
        """Plays one batch of tables on `ladder`; returns how many matches were stored."""
        standings = refit(self.db, ladder.id)
        tables = self.pick(ladder, standings)
        if not tables:
            return 0
        first = self.db.take_tables(ladder.id, len(tables))
        versions: dict[str, Version] = {}
        specs: list[MatchSpec] = []
        for table_no, table in enumerate(tables, start=first):
            seated = [self.db.version(version_id) for version_id in table]
            versions.update({f"v{version.id}": version for version in seated})
            specs += table_specs(ladder, self.key, table_no, seated)
        plan = RunPlan(ladder.game, ladder.players, {}, dict(ladder.time_control),
                       tuple(BotEntry(name, version.version, version.folder, (ladder.game,))
                             for name, version in versions.items()),
                       sandbox=True, log_dir=str(self.log_dir),
                       log_names=tuple((name, version.log_name)
                                       for name, version in versions.items()))
        stored = 0
        finished = self.executors().run(plan, specs)
        try:
            for match in finished:
                store_finished(self.db, ladder, match, versions)
                stored += 1
                if self.stopping.is_set():
                    break
        finally:
            finished.close()
        refit(self.db, ladder.id)
        return stored

    def pick(self, ladder: Ladder, standings: Standings) -> list[tuple[int, ...]]:
        rated = [scheduler.Rated(standings.versions[row.bot].id, row.elo, row.interval,
                                 row.games) for row in standings.table.rows]
        by_id = {version.id: version for version in standings.versions.values()}

        def los(better: scheduler.Rated, worse: scheduler.Rated) -> float:
            return standings.los(by_id[better.key], by_id[worse.key])

        settled = all(scheduler.is_narrow(bot) for bot in rated)
        count = self.workers * (SETTLED_TABLES_PER_WORKER if settled else TABLES_PER_WORKER)
        return scheduler.pick_tables(rated, ladder.players, count, self.rng, los)

