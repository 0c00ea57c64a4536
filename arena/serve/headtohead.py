"""Head to head: how two bots fared against each other, from the pairwise results the
database keeps per match (the ratings' own input: 1 for the better rank, 0.5 a tie), summed
per pair of versions as they land (`head_to_head`, arena.serve.db).

Bots, not versions: a bot's versions add up against each opponent's, as readers compare
authors' bots across their updates (the ratings, per version, say how good the latest is).
One match of n players gives a result to each of its n(n-1)/2 pairs, so "games" is the
matches a pair shared. A page reads one row per pair of versions that met: summing every
pairwise result when asked took 0.5-1.5 s at 100,000 results on a loaded machine. The pairs
grow as the square of the bots, so pages and the API show them a page at a time (`page`), in
name order, a cursor naming the last pair shown.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from arena.serve import paging
from arena.serve.db import ServiceDB


@dataclass(frozen=True)
class HeadToHead:
    ladder: str
    bot: str
    """`author/name`."""
    opponent: str
    games: int
    points: float
    """The bot's: 1 a game it ranked above the opponent, 0.5 a tie."""

    @property
    def share(self) -> float:
        return self.points / self.games

    def json(self) -> dict:
        return {"ladder": self.ladder, "bot": self.bot, "opponent": self.opponent,
                "games": self.games, "points": self.points,
                "score_pct": round(100 * self.share, 1)}


def _tally(db: ServiceDB, where: str, params: tuple) -> dict[tuple[str, int, int], list]:
    """(ladder, bot id, bot id) -> [games, points of the first], each pair both ways, from
    the running totals per pair of versions (`head_to_head`, kept by ServiceDB)."""
    rows = db.query("SELECT h.ladder, f.bot_id, s.bot_id, h.games, h.points FROM head_to_head h "
                    "JOIN versions f ON f.id = h.first JOIN versions s ON s.id = h.second "
                    f"WHERE {where}", params)
    both: dict[tuple[str, int, int], list] = defaultdict(lambda: [0, 0.0])
    for ladder, a, b, games, points in rows:
        if a != b:   # two versions of one bot: not a head to head
            both[ladder, a, b][0] += games
            both[ladder, a, b][1] += points
            both[ladder, b, a][0] += games
            both[ladder, b, a][1] += games - points
    return both


def _names(db: ServiceDB, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(db.query(f"SELECT b.id, a.name || '/' || b.name FROM bots b JOIN authors a "
                         f"ON a.id = b.author_id WHERE b.id IN ({', '.join('?' * len(ids))})",
                         tuple(ids)))


def ladder_pairs(db: ServiceDB, ladder: str) -> list[HeadToHead]:
    """Every pair of bots that met on the ladder, once, by name (the first named first)."""
    both = _tally(db, "h.ladder = ?", (ladder,))
    names = _names(db, {bot for _, a, b in both for bot in (a, b)})
    found = [HeadToHead(ladder, names[a], names[b], games, points)
             for (_, a, b), (games, points) in both.items() if names[a] < names[b]]
    return sorted(found, key=lambda pair: (pair.bot, pair.opponent))


def bot_opponents(db: ServiceDB, bot_id: int) -> list[HeadToHead]:
    """The bot against each opponent it met, per ladder (by ladder, then opponent)."""
    both = _tally(db, "(f.bot_id = ? OR s.bot_id = ?)", (bot_id, bot_id))
    names = _names(db, {bot for _, a, b in both for bot in (a, b)})
    found = [HeadToHead(ladder, names[a], names[b], games, points)
             for (ladder, a, b), (games, points) in both.items() if a == bot_id]
    return sorted(found, key=lambda pair: (pair.ladder, pair.opponent))


def _place(pair: HeadToHead) -> tuple[tuple[()], str]:
    """A pair's place in name order, for cursors: names hold no space, which sorts first."""
    return (), f"{pair.ladder} {pair.bot} {pair.opponent}"


def page(pairs: list[HeadToHead], cursor: paging.Cursor | None,
         limit: int) -> paging.Page[HeadToHead]:
    """A page of `pairs` in name order (ladder, bot, opponent), from `cursor` on."""
    ordered = sorted(pairs, key=lambda pair: _place(pair)[1])
    return paging.page(paging.select(ordered, cursor, limit, _place, ascending=True), cursor,
                       limit, key=_place, item=lambda pair: pair)
