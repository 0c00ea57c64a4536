"""What pages and the API show, read from the database (never more rows than a page needs).

Ladders are read from the `standings` the match thread writes after each refit, so a page
costs a few indexed queries however many matches were played.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Collection
from urllib.parse import quote

from arena import actlogs
from arena.stats.botstats import MatchFacts, OrderEffect, order_effects
from arena.sandbox import log_text
from arena.serve import paging
from arena.serve.standings import rank_key, stored_fit
from arena.serve.db import Ladder, ServiceDB, log_name, time_control_text

LOG_TAIL_CHARS = 20_000
HISTORY_POINTS = 200
"""Points of a version's rating history pages and the API show at most."""
PROVISIONAL_MATCHES = 30
"""A rating from fewer matches than this is provisional: with few deals even its interval is
unreliable (arena.stats.ratings), so it is ranked apart, below the established ones."""
PROVISIONAL_INTERVAL = 100.0
"""A rating whose 95% interval is wider than +/- this many Elo is provisional too."""


def iso(moment: float | None) -> str | None:
    """A database time (seconds since the epoch) as ISO 8601 in UTC, as the API gives it."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="seconds")


def is_provisional(games: int, interval: float | None) -> bool:
    return games < PROVISIONAL_MATCHES or interval is None or interval > PROVISIONAL_INTERVAL


# -- ladders ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    rank: int
    author: str
    name: str
    version: str
    version_id: int
    elo: float
    interval: float | None
    games: int

    @property
    def bot(self) -> str:
        return f"{self.author}/{self.name}"

    @property
    def provisional(self) -> bool:
        return is_provisional(self.games, self.interval)


@dataclass(frozen=True)
class RetiredBot:
    author: str
    name: str
    retired: float
    matches: int

    @property
    def bot(self) -> str:
        return f"{self.author}/{self.name}"


@dataclass(frozen=True)
class LadderView:
    ladder: Ladder
    rows: list[Row]
    """Established ratings first (best first), then the provisional ones (best first)."""
    matches: int
    paused: bool
    """Stored but not served by this run of the service: no matches are played on it."""
    standings: paging.Page[Row] = paging.Page([], None, None)
    """The page of `rows` shown."""

    @property
    def time_control(self) -> str:
        return time_control_text(self.ladder.time_control)

    @property
    def provisional(self) -> list[Row]:
        return [row for row in self.rows if row.provisional]

    def bar(self, row: Row) -> dict:
        """Where a row's interval bar and rating mark go, in percent of the chart's width
        (scaled to the rows shown, as the live script scales them)."""
        known = [r for r in self.standings.items if r.interval is not None]
        if not known or row.interval is None:
            return {"known": False}
        low = min(r.elo - r.interval for r in known)
        high = max(r.elo + r.interval for r in known)
        span = max(high - low, 1.0)
        left = (row.elo - row.interval - low) / span * 100
        width = 2 * row.interval / span * 100
        mark = (row.elo - low) / span * 100
        return {"known": True, "left": round(left, 2), "width": round(max(width, 0.5), 2),
                "mark": round(mark, 2)}


def standing_records(db: ServiceDB, ladder: Ladder, stamp: float | None = None
                     ) -> tuple[dict, list[dict]]:
    """The fit (`stamp`'s while kept, else the latest) and its rows as listed now, ranked
    (arena.serve.standings.rank_key): versions admitted since it was fitted are added (not
    yet played), those no longer admitted left out."""
    fit = stored_fit(db, ladder.id, stamp)
    admitted = {vid: (author, name, version) for vid, author, name, version in db.query(
        "SELECT v.id, a.name, b.name, v.version FROM versions v JOIN bots b ON b.id = v.bot_id "
        "JOIN authors a ON a.id = b.author_id WHERE v.ladder = ? AND v.status = 'admitted'",
        (ladder.id,))}
    records = [{**record, "author": admitted[record["version_id"]][0],
                "name": admitted[record["version_id"]][1]}
               for record in fit["ladder"] if record["version_id"] in admitted]
    listed = {record["version_id"] for record in records}
    records += [{"rank": 0, "bot": f"{author}/{name}", "version": version[:8], "elo": 0.0,
                 "interval": None, "games": 0, "score_pct": None, "wins": 0, "draws": 0,
                 "losses": 0, "forfeits": 0, "los_next_pct": None, "version_id": vid,
                 "author": author, "name": name}
                for vid, (author, name, version) in admitted.items() if vid not in listed]
    return fit, provisional_apart(records)


def standings_page(db: ServiceDB, ladder: Ladder, limit: int, cursor: paging.Cursor | None,
                   latest: bool = False) -> tuple[dict, list[dict], paging.Page[dict]]:
    """The fit, every row listed, and the page of them from `cursor` on: the cursor names
    its fit (kept for readers paging) and a place in that fit's ranking; `latest`: the
    latest fit at that place (a live page's polls: it shows the ratings of now)."""
    paging.expect(cursor, 4)
    fit, rows = standing_records(db, ladder, cursor.key[0] if cursor and not latest else None)
    stamp = fit["fitted"]

    def place(record: dict) -> tuple[tuple[float, ...], int]:
        return ((stamp, *rank_key(record["provisional"], record["games"], record["elo"])),
                record["version_id"])

    here = None if cursor is None else paging.Cursor(cursor.older, (stamp, *cursor.key[1:]),
                                                     cursor.id)
    found = paging.page(paging.select(rows, here, limit, place, id_type=int), here, limit,
                        key=place, item=lambda record: record)
    return fit, rows, found


def _row(record: dict) -> Row:
    return Row(record["rank"], record["author"], record["name"], record["version"],
               record["version_id"], record["elo"], record["interval"], record["games"])


def retired_bots(db: ServiceDB, ladder: Ladder, limit: int = 20,
                 cursor: paging.Cursor | None = None) -> paging.Page[RetiredBot]:
    """A page of the retired bots that played on the ladder, with their matches there, the
    last retired first."""
    condition, params, order = paging.where(cursor, "b.retired", "b.id", id_type=int)
    rows = db.query(
        "SELECT a.name, b.name, b.retired, (SELECT COUNT(*) FROM match_seats s JOIN versions "
        "w ON w.id = s.version_id WHERE w.bot_id = b.id AND w.ladder = ?), b.id FROM bots b "
        "JOIN authors a ON a.id = b.author_id WHERE b.retired IS NOT NULL AND EXISTS "
        "(SELECT 1 FROM versions v WHERE v.bot_id = b.id AND v.ladder = ?) AND "
        f"{condition} ORDER BY {order} LIMIT ?", (ladder.id, ladder.id, *params, limit + 1))
    return paging.page(rows, cursor, limit, key=lambda row: (row[2], row[4]),
                       item=lambda row: RetiredBot(*row[:4]))


def ladder_view(db: ServiceDB, ladder: Ladder, served: Collection[str], limit: int = 50,
                cursor: paging.Cursor | None = None) -> LadderView:
    """The ladder as its page shows it, a page of its standings from `cursor` on; `served`:
    the ladders this run plays (else paused)."""
    _, rows, found = standings_page(db, ladder, limit, cursor)
    return LadderView(ladder, [_row(record) for record in rows], db.match_count(ladder.id),
                      paused=ladder.id not in served,
                      standings=paging.Page([_row(record) for record in found.items],
                                            found.older, found.newer))


def ladder_summary(db: ServiceDB, ladder: Ladder, served: Collection[str],
                   rows: list[dict] | None = None) -> dict:
    """The ladder and its counts (`rows`: its standings' rows, if read already)."""
    rows = standing_records(db, ladder)[1] if rows is None else rows
    return {"id": ladder.id, "game": ladder.game, "players": ladder.players,
            "rules": ladder.rules, "time_control": ladder.time_control,
            "time_control_text": time_control_text(ladder.time_control),
            "paused": ladder.id not in served, "matches": db.match_count(ladder.id),
            "bots": len(rows), "provisional_bots": sum(row["provisional"] for row in rows),
            **retired_json(db, ladder, "retired_bots", 100, None),
            "url": f"/api/ladders/{ladder.id}"}


def retired_json(db: ServiceDB, ladder: Ladder, name: str, limit: int,
                 cursor: paging.Cursor | None) -> dict:
    """A page of the ladder's retired bots by name (`name`), the last retired first, and the
    next page's URL (`name`_next)."""
    found = retired_bots(db, ladder, limit, cursor)
    more = f"/api/ladders/{ladder.id}/retired?cursor={quote(found.older)}" \
        if found.older else None
    return {name: [bot.bot for bot in found.items], f"{name}_next": more}


def ladder_json(db: ServiceDB, ladder: Ladder, served: Collection[str], limit: int = 100,
                cursor: paging.Cursor | None = None, latest: bool = False) -> dict:
    """The ladder with a page of the rows of `arena ladder --format json` from `cursor` on,
    as of the fit the cursor names, else the latest (the match thread's; a request never
    refits: that costs time in the number of matches)."""
    fit, rows, found = standings_page(db, ladder, limit, cursor, latest)
    return {**ladder_summary(db, ladder, served, rows), **fit,
            "fitted": iso(fit["fitted"] or None), "ladder": found.items,
            "next_cursor": found.older, "newer_cursor": found.newer}


def provisional_apart(records: list[dict]) -> list[dict]:
    """The fit's rows, each marked `provisional` or not, the established ones first and
    ranked again in that order (a rating of 2 matches no longer ranks above one of 53;
    arena.serve.standings.rank_key)."""
    marked = [{**record, "provisional": is_provisional(record["games"], record["interval"])}
              for record in records]
    ranked = sorted(marked, reverse=True, key=lambda record: (
        rank_key(record["provisional"], record["games"], record["elo"]), record["version_id"]))
    # LOS next compares a row with the one after it in the fit: kept only where that is
    # still the row after it.
    after = {record["bot"]: following["bot"] for record, following in zip(records, records[1:])}
    return [{**record, "rank": rank, "los_next_pct": record.get("los_next_pct")
             if following is not None and after.get(record["bot"]) == following["bot"]
             else None}
            for rank, (record, following) in enumerate(zip(ranked, ranked[1:] + [None]),
                                                        start=1)]


# -- bots ------------------------------------------------------------------------------------
@dataclass
class VersionView:
    id: int
    ladder: str
    version: str
    status: str
    submitted: float
    elo: float | None
    interval: float | None
    games: int
    history: list[tuple[int, float, float | None]] = field(default_factory=list)
    order: OrderEffect | None = None
    """Its later seatings of deals it met twice against its first (arena.stats.botstats)."""

    def chart(self) -> dict | None:
        """The rating history as SVG polyline points (games -> Elo), or None if too short."""
        if len(self.history) < 2:
            return None
        games = [point[0] for point in self.history]
        elos = [point[1] for point in self.history]
        low, high = min(elos), max(elos)
        g0, g1 = min(games), max(games)

        def x(value: float) -> float:
            return round(40 + (value - g0) / max(g1 - g0, 1) * 540, 1)

        def y(value: float) -> float:
            return round(10 + (high - value) / max(high - low, 1) * 100, 1)

        return {"points": " ".join(f"{x(g)},{y(e)}" for g, e in zip(games, elos)),
                "low": low, "high": high, "first": g0, "last": g1}


@dataclass
class BotView:
    id: int
    author_id: int
    author: str
    name: str
    retired: float | None
    """When its author retired it (it plays no more), or None."""
    versions: list[VersionView]
    """A page of its versions, the newest first."""
    forfeits: list[tuple[str, int]]
    older: str | None = None
    """The cursors of the versions' pages before and after this one (None: none)."""
    newer: str | None = None

    @property
    def full_name(self) -> str:
        return f"{self.author}/{self.name}"

    @property
    def page(self) -> paging.Page[VersionView]:
        return paging.Page(self.versions, self.older, self.newer)


def bot_id(db: ServiceDB, author: str, name: str) -> int | None:
    found = db.one("SELECT b.id FROM bots b JOIN authors a ON a.id = b.author_id WHERE "
                   "a.name = ? AND b.name = ?", (author, name))
    return None if found is None else found[0]


def bot(db: ServiceDB, author: str, name: str, limit: int = 20,
        cursor: paging.Cursor | None = None) -> BotView | None:
    """The bot and a page of its versions (newest first, from `cursor` on), each with its
    games, rating history (at most HISTORY_POINTS) and order effect."""
    found = db.one("SELECT b.id, a.id, a.name, b.name, b.retired FROM bots b JOIN authors a ON "
                   "a.id = b.author_id WHERE a.name = ? AND b.name = ?", (author, name))
    if found is None:
        return None
    condition, params, order = paging.where(cursor, (), "v.id", id_type=int)
    shown = paging.page(db.query(
        "SELECT v.id, v.ladder, v.version, v.status, v.submitted, s.elo, s.interval "
        "FROM versions v LEFT JOIN standings s ON s.version_id = v.id "
        f"WHERE v.bot_id = ? AND {condition} ORDER BY {order} LIMIT ?",
        (found[0], *params, limit + 1)), cursor, limit, key=lambda row: ((), row[0]),
        item=lambda row: VersionView(*row, games=0))
    versions = shown.items
    for version in versions:
        version.games = db.one("SELECT COUNT(*) FROM match_seats WHERE version_id = ?",
                               (version.id,))[0]
        version.history = history(db, version.id)
        if version.elo is None and version.history:   # retired: its last rating
            _, version.elo, version.interval = version.history[-1]
        version.order = order_effect(db, version.id)
    forfeits = db.query(
        "SELECT m.forfeit, COUNT(*) FROM match_seats m JOIN versions v ON v.id = m.version_id "
        "WHERE v.bot_id = ? AND m.forfeit IS NOT NULL GROUP BY m.forfeit ORDER BY 2 DESC",
        (found[0],))
    return BotView(*found, versions=versions, forfeits=forfeits, older=shown.older,
                   newer=shown.newer)


def history(db: ServiceDB, version_id: int) -> list[tuple[int, float, float | None]]:
    """A version's rating history, (games, Elo, interval) by games: every point, or when
    there are more than HISTORY_POINTS (a point a refit, for as long as it plays) that many
    evenly spaced, its first and last kept."""
    return db.query(
        "SELECT games, elo, interval FROM (SELECT games, elo, interval, ROW_NUMBER() OVER "
        "(ORDER BY games, at) - 1 AS n, COUNT(*) OVER () AS total FROM rating_history WHERE "
        "version_id = ?) WHERE n = 0 OR n * ? / total != (n + 1) * ? / total "
        "ORDER BY games", (version_id, HISTORY_POINTS - 1, HISTORY_POINTS - 1))


def order_effect(db: ServiceDB, version_id: int) -> OrderEffect | None:
    """The version's order effect over the deals it met in more than one seating; None when
    it met none twice (every table since the service played independent deals: only
    matches of older databases, which mirrored deals, count)."""
    rows = db.query(
        "SELECT m.versions, m.scores, m.ranks, m.seed, m.started FROM match_seats s "
        "JOIN matches m ON m.id = s.match_id WHERE s.version_id = ? AND m.seed IN ("
        "SELECT m2.seed FROM match_seats s2 JOIN matches m2 ON m2.id = s2.match_id "
        "WHERE s2.version_id = ? GROUP BY m2.seed HAVING COUNT(*) > 1)",
        (version_id, version_id))
    facts = [MatchFacts(tuple(str(v) for v in json.loads(versions)), tuple(json.loads(scores)),
                        tuple(json.loads(ranks)), None, None, (), seed, started)
             for versions, scores, ranks, seed, started in rows]
    return order_effects(facts).get(str(version_id))


@dataclass(frozen=True)
class BotSummary:
    """A bot as the bots list shows it."""

    id: int
    author: str
    name: str
    versions: int
    ladders: list[str]
    """The ladders where a version of it is admitted."""
    retired: float | None

    @property
    def bot(self) -> str:
        return f"{self.author}/{self.name}"

    def json(self) -> dict:
        return {"bot": self.bot, "author": self.author, "name": self.name,
                "versions": self.versions, "ladders": self.ladders,
                "retired": iso(self.retired), "url": f"/api/bots/{self.author}/{self.name}"}


def bots(db: ServiceDB, limit: int = 100, cursor: paging.Cursor | None = None
         ) -> paging.Page[BotSummary]:
    """A page of every bot with its versions' count and its admitted versions' ladders:
    the bots playing newest first, then the retired ones (listed apart, newest first)."""
    condition, params, order = paging.where(cursor, "(b.retired IS NULL)", "b.id", id_type=int)
    rows = db.query(
        "SELECT b.retired IS NULL, b.id, a.name, b.name, (SELECT COUNT(*) FROM versions v "
        "WHERE v.bot_id = b.id), (SELECT GROUP_CONCAT(v.ladder) FROM versions v WHERE "
        "v.bot_id = b.id AND v.status = 'admitted'), b.retired FROM bots b JOIN authors a "
        f"ON a.id = b.author_id WHERE {condition} ORDER BY {order} LIMIT ?",
        (*params, limit + 1))
    return paging.page(rows, cursor, limit, key=lambda row: (float(row[0]), row[1]),
                       item=lambda row: BotSummary(
                           row[1], row[2], row[3], row[4],
                           sorted(set(row[5].split(","))) if row[5] else [], row[6]))


def bot_json(view: BotView) -> dict:
    return {"bot": view.full_name, "author": view.author, "name": view.name,
            "retired": iso(view.retired),
            "versions": [{"id": v.id, "ladder": v.ladder, "version": v.version,
                          "status": v.status, "submitted": iso(v.submitted),
                          "elo": _num(v.elo),
                          "interval": _num(v.interval), "games": v.games,
                          "history": [{"games": g, "elo": _num(e), "interval": _num(i)}
                                      for g, e, i in v.history],
                          "order_effect": None if v.order is None else {
                              "deals": v.order.deals, "later_better": v.order.better,
                              "later_worse": v.order.worse,
                              "mean_difference": round(v.order.mean_difference, 3),
                              "p_value": float(f"{v.order.p_value:.3g}"),
                              "flagged": v.order.flagged}}
                         for v in view.versions],
            "forfeits": dict(view.forfeits)}


def bot_logs(db: ServiceDB, view: BotView) -> list[dict]:
    """The tail of each version's log (stderr of its processes), for its author only."""
    logs = []
    for version in view.versions:
        path = db.folder / "logs" / log_name(view.author, view.name, version.version)
        try:
            text = log_text(path)
        except OSError:
            text = ""
        logs.append({"version": version.version, "ladder": version.ladder,
                     "log": text[-LOG_TAIL_CHARS:], "truncated": len(text) > LOG_TAIL_CHARS})
    return logs


def match_logs(db: ServiceDB, match: "MatchView", author_id: int | None
               ) -> dict[int, dict[int, list[str]]]:
    """seat -> ply -> log lines of match `match`, for the seats played by a version of
    `author_id`'s bots only (nobody else's; none for None, a reader not signed in)."""
    if author_id is None:
        return {}
    rows = db.query("SELECT s.seat, a.name, b.name, v.version FROM match_seats s "
                    "JOIN versions v ON v.id = s.version_id JOIN bots b ON b.id = v.bot_id "
                    "JOIN authors a ON a.id = b.author_id "
                    "WHERE s.match_id = ? AND a.id = ?", (match.id, author_id))
    mine = {seat for seat, *_ in rows}
    paths = sorted({db.folder / "logs" / log_name(author, bot, version)
                    for _, author, bot, version in rows})
    return {seat: plies for seat, plies in actlogs.match_logs(paths, match.id).items()
            if seat in mine}


def _num(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 1)


# -- matches ---------------------------------------------------------------------------------
@dataclass
class MatchView:
    id: str
    ladder: str
    labels: list[str]
    scores: list
    ranks: list
    end: str
    forfeit_seat: int | None
    forfeit_reason: str | None
    started: float
    stored: float
    record: dict | None = None

    def summary(self) -> dict:
        return {"id": self.id, "ladder": self.ladder, "bots": self.labels,
                "scores": self.scores, "ranks": self.ranks, "end": self.end,
                "forfeit": None if self.forfeit_seat is None else
                {"seat": self.forfeit_seat, "reason": self.forfeit_reason},
                "started": iso(self.started), "stored": iso(self.stored),
                "url": f"/matches/{self.id}"}

    def bot_url(self, label: str) -> str:
        return "/bots/" + label.split("@", 1)[0]


_MATCH_COLUMNS = ("m.id, m.ladder, m.labels, m.scores, m.ranks, m.end_kind, m.forfeit_seat, "
                  "m.forfeit_reason, m.started, m.stored")


def _match(row: tuple, record: str | None = None) -> MatchView:
    mid, lid, labels, scores, ranks, end, seat, reason, started, stored = row
    return MatchView(mid, lid, json.loads(labels), json.loads(scores), json.loads(ranks), end,
                     seat, reason, started, stored, json.loads(record) if record else None)


def matches(db: ServiceDB, *, ladder: str | None = None, bot_id: int | None = None,
            limit: int = 50, cursor: paging.Cursor | None = None) -> paging.Page[MatchView]:
    """A page of the matches of a ladder, of a bot (any of its versions) or of all, newest
    first, from `cursor` on (arena.serve.paging)."""
    condition, params, order = paging.where(cursor, "m.stored", "m.id")
    if bot_id is not None:
        rows = db.query(f"SELECT DISTINCT {_MATCH_COLUMNS} FROM matches m JOIN match_seats s ON "
                        "s.match_id = m.id JOIN versions v ON v.id = s.version_id "
                        f"WHERE v.bot_id = ? AND {condition} ORDER BY {order} LIMIT ?",
                        (bot_id, *params, limit + 1))
    elif ladder is not None:
        rows = db.query(f"SELECT {_MATCH_COLUMNS} FROM matches m WHERE m.ladder = ? AND "
                        f"{condition} ORDER BY {order} LIMIT ?", (ladder, *params, limit + 1))
    else:
        rows = db.query(f"SELECT {_MATCH_COLUMNS} FROM matches m WHERE {condition} "
                        f"ORDER BY {order} LIMIT ?", (*params, limit + 1))
    return paging.page(rows, cursor, limit, key=lambda row: (row[-1], row[0]), item=_match)


def match(db: ServiceDB, match_id: str) -> MatchView | None:
    row = db.one(f"SELECT {_MATCH_COLUMNS}, m.record FROM matches m WHERE m.id = ?",
                 (match_id,))
    return None if row is None else _match(row[:-1], row[-1])


# -- submissions -----------------------------------------------------------------------------
@dataclass(frozen=True)
class SubmissionView:
    id: int
    author_id: int
    author: str
    ladder: str
    bot_name: str | None
    version: str | None
    status: str
    reason: str
    log: str
    created: float
    decided: float | None
    checks: int   # submissions of this version: the first, and a re-check if asked for

    @property
    def can_recheck(self) -> bool:
        """A rejected version gets one re-check (admission.recheck says when else not)."""
        return self.status == "rejected" and self.checks == 1

    def json(self, mine: bool) -> dict[str, Any]:
        data = {"id": self.id, "author": self.author, "ladder": self.ladder,
                "bot": self.bot_name, "version": self.version, "status": self.status,
                "created": iso(self.created), "decided": iso(self.decided),
                "url": f"/submissions/{self.id}"}
        if mine:   # why a bot failed can tell its secrets: its author's business
            data.update(reason=self.reason, log=self.log)
            if self.can_recheck:
                data["recheck"] = f"/api/submissions/{self.id}/recheck"
        return data


_SUBMISSION = ("SELECT s.id, s.author_id, a.name, s.ladder, s.bot_name, v.version, s.status, "
               "s.reason, s.log, s.created, s.decided, (SELECT COUNT(*) FROM submissions t "
               "WHERE t.version_id = s.version_id) FROM submissions s JOIN authors a ON "
               "a.id = s.author_id LEFT JOIN versions v ON v.id = s.version_id")


def submission(db: ServiceDB, submission_id: int) -> SubmissionView | None:
    row = db.one(f"{_SUBMISSION} WHERE s.id = ?", (submission_id,))
    return None if row is None else SubmissionView(*row)


def submissions_of(db: ServiceDB, author_id: int, limit: int = 100,
                   cursor: paging.Cursor | None = None) -> paging.Page[SubmissionView]:
    """A page of an author's submissions, newest first, from `cursor` on."""
    condition, params, order = paging.where(cursor, "s.created", "s.id", id_type=int)
    rows = db.query(f"{_SUBMISSION} WHERE s.author_id = ? AND {condition} ORDER BY {order} "
                    "LIMIT ?", (author_id, *params, limit + 1))
    return paging.page(rows, cursor, limit, key=lambda row: (row[9], str(row[0])),
                       item=lambda row: SubmissionView(*row))
