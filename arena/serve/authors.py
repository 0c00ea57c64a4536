"""Authors and their tokens: a token is shown once, when the author is added (or their token
rotated), and kept only as its sha256, so a copy of the database gives nobody a way in. And
what an author may do to their own bots: retire one.

A token is 32 random bytes (hex): guessing is hopeless, so a plain hash (no salt, no slow
hash) is enough, and it lets a request be looked up by its token's hash directly.
"""
from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import time
from dataclasses import dataclass

from arena.errors import ArenaError
from arena.serve.db import ServiceDB

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""Author and bot names: they become folder names and URL parts, so a safe alphabet."""


class AuthorError(ArenaError):
    """An author that cannot be added as asked."""


@dataclass(frozen=True)
class Author:
    id: int
    name: str


def check_name(name: str, what: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise AuthorError(f"{what} {name!r} is not allowed: use 1-40 letters, digits, '_', '.' "
                          "or '-', starting with a letter or digit")
    return name


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_author(db: ServiceDB, name: str) -> str:
    """Adds an author and returns their new token (the only time it exists in clear)."""
    check_name(name, "author name")
    token = secrets.token_hex(32)
    try:
        with db.transaction() as conn:
            conn.execute("INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)",
                         (name, token_hash(token), time.time()))
    except sqlite3.IntegrityError:
        raise AuthorError(f"author {name!r} already exists: choose another name") from None
    return token


def authenticate(db: ServiceDB, token: str | None) -> Author | None:
    """The author a token belongs to, or None."""
    if not token:
        return None
    row = db.one("SELECT id, name FROM authors WHERE token_hash = ?", (token_hash(token),))
    return Author(*row) if row else None


def rotate_token(db: ServiceDB, name: str) -> str:
    """Gives an author a new token and returns it; the old one stops working at once (a
    request is looked up by its token's hash, and that hash is gone)."""
    token = secrets.token_hex(32)
    with db.transaction() as conn:
        changed = conn.execute("UPDATE authors SET token_hash = ? WHERE name = ?",
                               (token_hash(token), name)).rowcount
    if not changed:
        raise AuthorError(f"no author {name!r} in {db.folder}: see `arena author add`")
    return token


def retire_bot(db: ServiceDB, author: str, bot: str) -> None:
    """Retires an author's bot: it is scheduled no more (its versions on every ladder are
    retired, a version still being checked too), and its name cannot be submitted again.
    Its matches, versions and rating history stay."""
    with db.transaction() as conn:
        row = conn.execute("SELECT b.id, b.retired FROM bots b JOIN authors a ON "
                           "a.id = b.author_id WHERE a.name = ? AND b.name = ?",
                           (author, bot)).fetchone()
        if row is None:
            raise AuthorError(f"author {author!r} has no bot {bot!r} in {db.folder}: check "
                              "the names (the bot page's URL is /bots/AUTHOR/BOT)")
        if row[1] is not None:
            raise AuthorError(f"{author}/{bot} is already retired")
        conn.execute("UPDATE bots SET retired = ? WHERE id = ?", (time.time(), row[0]))
        conn.execute("UPDATE versions SET status = 'retired' WHERE bot_id = ? AND status IN "
                     "('admitted', 'checking')", (row[0],))
