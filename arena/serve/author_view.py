"""What an author's page shows (`/authors/NAME`): their bots, each bot's versions, and their
submissions with their status, newest first.

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


@dataclass(frozen=True)
class BotRow:
    name: str
    retired: float | None
    versions: list[VersionRow]


@dataclass(frozen=True)
class AuthorView:
    id: int
    name: str
    created: float
    bots: list[BotRow]
    submissions: paging.Page[views.SubmissionView]


def author(db: ServiceDB, name: str, limit: int, cursor: paging.Cursor | None
           ) -> AuthorView | None:
    found = db.one("SELECT id, name, created FROM authors WHERE name = ?", (name,))
    if found is None:
        return None
    versions: dict[int, list[VersionRow]] = {}
    for bot_id, *row in db.query(
            "SELECT v.bot_id, b.name, v.ladder, v.version, v.status, v.submitted FROM versions "
            "v JOIN bots b ON b.id = v.bot_id WHERE b.author_id = ? ORDER BY v.id DESC",
            (found[0],)):
        versions.setdefault(bot_id, []).append(VersionRow(*row))
    bots = [BotRow(bot_name, retired, versions.get(bot_id, [])) for bot_id, bot_name, retired
            in db.query("SELECT id, name, retired FROM bots WHERE author_id = ? "
                        "ORDER BY retired IS NOT NULL, name", (found[0],))]
    return AuthorView(*found, bots=bots,
                      submissions=views.submissions_of(db, found[0], limit, cursor))
