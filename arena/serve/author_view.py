"""What an author's page shows (`/authors/NAME`): their bots (a page of them, those playing
newest first, then the retired ones, as /bots orders them), each bot's newest versions (all
of them on the bot's page), and their submissions with their status, newest first.

Everyone may read it: it shows what the bot, submission and ladder pages already show.
Why a submission was rejected (its reason, its check's log) can tell a bot's secrets, so
only the author, signed in, sees it (arena.serve.views.SubmissionView.json says the same
for the API); another reader sees the status alone.
"""
from __future__ import annotations

from dataclasses import dataclass

from arena.serve import paging, views
from arena.serve.db import ServiceDB


@dataclass(frozen=True)
class VersionRow:
    bot: str
    ladder: str
    version: str
    status: str
    submitted: float


VERSIONS_SHOWN = 5
"""Versions of each bot an author's page shows, the newest; the bot's page pages them all."""


@dataclass(frozen=True)
class BotRow:
    name: str
    retired: float | None
    versions: list[VersionRow]
    """The newest VERSIONS_SHOWN."""
    count: int
    """All its versions."""


@dataclass(frozen=True)
class AuthorView:
    id: int
    name: str
    created: float
    bots: paging.Page[BotRow]
    submissions: paging.Page[views.SubmissionView]


def author(db: ServiceDB, name: str, limit: int, cursor: paging.Cursor | None,
           bots_limit: int = 20, bots_cursor: paging.Cursor | None = None
           ) -> AuthorView | None:
    """The author's page: a page of their bots from `bots_cursor` on, and of their
    submissions from `cursor` on."""
    found = db.one("SELECT id, name, created FROM authors WHERE name = ?", (name,))
    if found is None:
        return None
    condition, params, order = paging.where(bots_cursor, "(b.retired IS NULL)", "b.id",
                                            id_type=int)
    rows = db.query("SELECT b.retired IS NULL, b.id, b.name, b.retired, (SELECT COUNT(*) FROM "
                    f"versions v WHERE v.bot_id = b.id) FROM bots b WHERE b.author_id = ? AND "
                    f"{condition} ORDER BY {order} LIMIT ?", (found[0], *params, bots_limit + 1))
    shown = paging.page(rows, bots_cursor, bots_limit, key=lambda row: (float(row[0]), row[1]),
                        item=lambda row: row)
    ids = [row[1] for row in shown.items]
    versions: dict[int, list[VersionRow]] = {}
    for bot_id, *row in db.query(
            "SELECT bot_id, name, ladder, version, status, submitted FROM (SELECT v.bot_id, "
            "b.name, v.ladder, v.version, v.status, v.submitted, ROW_NUMBER() OVER (PARTITION "
            "BY v.bot_id ORDER BY v.id DESC) AS newest FROM versions v JOIN bots b ON b.id = "
            f"v.bot_id WHERE v.bot_id IN ({', '.join('?' * len(ids))})) WHERE newest <= ? "
            "ORDER BY bot_id, newest", (*ids, VERSIONS_SHOWN)):
        versions.setdefault(bot_id, []).append(VersionRow(*row))
    bots = paging.Page([BotRow(bot_name, retired, versions.get(bot_id, []), count)
                        for _, bot_id, bot_name, retired, count in shown.items],
                       shown.older, shown.newer)
    return AuthorView(*found, bots=bots,
                      submissions=views.submissions_of(db, found[0], limit, cursor))
