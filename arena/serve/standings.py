"""A ladder's standings, refitted from the database as matches land, in bounded memory.

Ratings are fitted (`arena.stats.ratings`: maximum-likelihood Elo, deals as clusters) from the
pairwise results the database keeps per match, streamed into numpy arrays for the fit and
dropped after it: the service holds no list of outcomes that grows with the matches. Every
version that ever played on the ladder is fitted (a retired version's results still inform
its opponents' ratings); only admitted versions are listed. The fit is written back as the
`standings` table (what pages and the scheduler read) and, for versions that played since the
last fit, a point of `rating_history`.
"""
from __future__ import annotations

import json
import math
import threading
import time
from array import array
from collections import OrderedDict
from dataclasses import dataclass

from arena.stats import ratings   # first: it sets numpy's threads (arena/stats/__init__.py)
import numpy as np

from arena.stats.report import ladder_records
from arena.serve.db import ServiceDB, Version


SNAPSHOTS = 8
"""Fits of a ladder kept in memory for readers paging through its standings."""
_kept: dict[tuple[str, str], OrderedDict[float, dict]] = {}
_kept_lock = threading.Lock()


def rank_key(provisional: bool, games: int, elo: float) -> tuple[float, float, float]:
    """A listed row's place in the ranking, as a key sorted descending: established ratings
    before provisional ones (ranked apart), played before not yet played, then by Elo to a
    tenth, as stored (ties: the higher version id first).

    Pages of the standings are cut at a place in this order, never at an offset: a cursor
    (arena.serve.paging) reads (the fit's stamp, this key) and the last row's version id,
    and the next page is the rows ranked below that place in that same fit, which
    `stored_fit` keeps while readers page through it (the last SNAPSHOTS fits read, per
    ladder: fits, not readers, so no reader can make it grow). So a walk meets every row
    once and its ranks as they were when it started, however many refits land meanwhile; a
    version admitted meanwhile lands in its place (not yet played: at the bottom), one no
    longer admitted drops out. A cursor whose fit is gone goes on from the same place in
    the latest fit, where a row whose rating crossed it may come twice or not at all."""
    return (-1.0 if provisional else 0.0, 0.0 if games else -1.0, round(elo, 1))


def stored_fit(db: ServiceDB, lid: str, stamp: float | None = None) -> dict:
    """The ladder's latest fit as stored (`as_json`; its `fitted` stamp 0 for none yet), or
    with `stamp` the fit of that stamp while it is kept (else the latest)."""
    text = db.one("SELECT standings FROM ladders WHERE id = ?", (lid,))[0]
    latest = json.loads(text) if text else {"confidence": 0.95, "deals": 0, "anchor": None,
                                            "virtual_draws": False, "ladder": []}
    latest.setdefault("fitted", 0.0)
    with _kept_lock:
        kept = _kept.setdefault((str(db.path), lid), OrderedDict())
        kept[latest["fitted"]] = latest
        found = kept.get(stamp, latest) if stamp is not None else latest
        kept.move_to_end(found["fitted"])   # a fit being read stays the longest
        while len(kept) > SNAPSHOTS:
            kept.popitem(last=False)
        return found


@dataclass(frozen=True)
class Standings:
    """One ladder's latest fit: the listed rows and what the scheduler asks of it."""

    ladder: str
    table: ratings.Ladder
    versions: dict[str, Version]
    """Every listed row's version, by its label."""

    def records(self) -> list[dict]:
        """The rows as `arena ladder --format json` gives them (bot `author/name`, version:
        8 hex of its content hash), plus the version's id, author and name."""
        rows = []
        for record, row in zip(ladder_records(self.table), self.table.rows):
            version = self.versions[row.bot]
            rows.append({**record, "version_id": version.id, "author": version.author,
                         "name": version.name})
        return rows

    def los(self, better: Version, worse: Version) -> float:
        fit = self.table.fit
        if better.label not in fit.bots or worse.label not in fit.bots:
            return 0.5
        return fit.los(better.label, worse.label)


def pairwise_arrays(db: ServiceDB, lid: str, labels: dict[int, str]) -> ratings.PairwiseResults:
    """The ladder's pairwise results as arrays, read from the database row by row."""
    bots = tuple(sorted(labels.values()))
    index = {version_id: bots.index(label) for version_id, label in labels.items()}
    tables, first, second = array("q"), array("q"), array("q")
    score = array("d")
    for table_no, a, b, points in db.pair_rows(lid):
        tables.append(table_no)
        first.append(index[a])
        second.append(index[b])
        score.append(points)
    deal_labels, deal = np.unique(np.frombuffer(tables, dtype=np.int64), return_inverse=True) \
        if len(tables) else (np.zeros(0), np.zeros(0, dtype=np.int64))
    return ratings.PairwiseResults(
        bots=bots, first=np.frombuffer(first, dtype=np.int64).copy(),
        second=np.frombuffer(second, dtype=np.int64).copy(),
        score=np.frombuffer(score, dtype=float).copy(), deal=deal.astype(np.int64),
        deals=len(deal_labels))


def refit(db: ServiceDB, lid: str) -> Standings:
    """Fits the ladder from the database and stores the result as its standings."""
    standings = fit(db, lid)
    _store(db, standings)
    return standings


def fit(db: ServiceDB, lid: str) -> Standings:
    """Fits the ladder from the database (reads only)."""
    every = db.versions("v.ladder = ?", (lid,))
    labels = {version.id: version.label for version in every}
    pairs = pairwise_arrays(db, lid, labels)
    ids = [version.id for version in every]
    games = {labels[vid]: count for vid, count in db.query(
        f"SELECT version_id, COUNT(*) FROM match_seats WHERE version_id IN "
        f"({', '.join('?' * len(ids))}) GROUP BY version_id", ids)} if ids else {}
    forfeits = {labels[vid]: count for vid, count in db.query(
        f"SELECT version_id, COUNT(*) FROM match_seats WHERE forfeit IS NOT NULL AND "
        f"version_id IN ({', '.join('?' * len(ids))}) GROUP BY version_id", ids)} if ids else {}
    admitted = {version.label: version for version in every if version.status == "admitted"}
    # Admitted versions with no results yet still get a row (they are on the ladder).
    unplayed = [label for label in admitted if label not in pairs.bots]
    table = ratings.ladder_of(pairs, games, forfeits, shown=set(admitted))
    rows = list(table.rows) + [
        ratings.LadderRow(rank=len(table.rows) + k + 1, bot=label, elo=0.0, interval=math.nan,
                          games=0, score=math.nan, wins=0, draws=0, losses=0, forfeits=0,
                          los_next=None)
        for k, label in enumerate(sorted(unplayed))]
    table = ratings.Ladder(tuple(rows), table.fit, table.confidence, table.deals)
    return Standings(lid, table, {row.bot: admitted[row.bot] for row in rows})


def as_json(standings: Standings, fitted: float = 0.0) -> dict:
    """The fit as `arena ladder --format json` prints it, rows with version ids added, and
    when it was stored (`fitted`, seconds since the epoch: the fit's stamp in cursors)."""
    table = standings.table
    return {"confidence": table.confidence, "deals": table.deals, "anchor": None,
            "virtual_draws": table.fit.virtual_draws, "ladder": standings.records(),
            "fitted": fitted}


def _store(db: ServiceDB, standings: Standings) -> None:
    now = time.time()
    with db.transaction() as conn:
        conn.execute("UPDATE ladders SET standings = ? WHERE id = ?",
                     (json.dumps(as_json(standings, now)), standings.ladder))
        before = dict(conn.execute("SELECT version_id, games FROM standings WHERE ladder = ?",
                                   (standings.ladder,)).fetchall())
        conn.execute("DELETE FROM standings WHERE ladder = ?", (standings.ladder,))
        for row in standings.table.rows:
            version = standings.versions[row.bot]
            interval = None if math.isnan(row.interval) else row.interval
            conn.execute("INSERT INTO standings VALUES (?, ?, ?, ?, ?)",
                         (version.id, standings.ladder, row.elo, interval, row.games))
            if row.games and before.get(version.id) != row.games:
                conn.execute("INSERT INTO rating_history VALUES (?, ?, ?, ?, ?)",
                             (version.id, row.games, row.elo, interval, now))
