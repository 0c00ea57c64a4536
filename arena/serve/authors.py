"""Authors and their tokens: a token is shown once, when the author is added, and kept only as
its sha256, so a copy of the database gives nobody a way in.

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
