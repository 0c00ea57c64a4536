"""Cursors for lists shown newest first: opaque to readers, stable while new rows land.

A cursor names the row a page ended at by its place in the order, (stored, id), and says
which way to go from it: to older rows or to newer ones. Matches land at the newest end, so
walking older from any cursor meets every row once, however many land meanwhile (an offset
would shift by the rows landed and show some twice). The same cursors serve the API
(`?cursor=`, `next_cursor`, `newer_cursor`) and the pages' "older" and "newer" links.

A cursor reads `o` (older) or `n` (newer), the row's stored time (Python's repr of the float,
which reads back exactly), `_` and its id. Readers are not meant to make them: anything that
does not parse is refused in one line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Generic, Sequence, TypeVar

Item = TypeVar("Item")

MAX_LIMIT = 500


class CursorError(ValueError):
    """A cursor this service did not give."""


@dataclass(frozen=True)
class Cursor:
    older: bool
    """True: rows older than (stored, id); False: rows newer than it."""
    stored: float
    id: str

    def text(self) -> str:
        return f"{'o' if self.older else 'n'}{self.stored!r}_{self.id}"


def parse(text: str | None) -> Cursor | None:
    """The cursor of `?cursor=TEXT` (None: the newest page); CursorError if it is not one."""
    if not text:
        return None
    way, (stored, sep, row_id) = text[:1], text[1:].partition("_")
    try:
        moment = float(stored)
    except ValueError:
        moment = math.nan
    if way not in ("o", "n") or not sep or not row_id or not math.isfinite(moment):
        raise CursorError(f"cursor {text[:80]!r} is not one this service gave: start from the "
                          "newest page (no cursor) and follow next_cursor")
    return Cursor(way == "o", moment, row_id)


def where(cursor: Cursor | None, stored: str, row_id: str,
          id_type: type = str) -> tuple[str, tuple, str]:
    """SQL for the rows `cursor` asks for, with the columns `stored` and `row_id` (of
    `id_type`: SQLite orders every number below every text): the condition, its parameters
    and the order (newest first, or oldest first going newer)."""
    if cursor is None:
        return "1", (), f"{stored} DESC, {row_id} DESC"
    try:
        after = (cursor.stored, id_type(cursor.id))
    except ValueError:
        raise CursorError(f"cursor {cursor.text()[:80]!r} is not one of this list: start "
                          "from the newest page (no cursor)") from None
    if cursor.older:
        return f"({stored}, {row_id}) < (?, ?)", after, f"{stored} DESC, {row_id} DESC"
    return f"({stored}, {row_id}) > (?, ?)", after, f"{stored} ASC, {row_id} ASC"


@dataclass(frozen=True)
class Page(Generic[Item]):
    """One page of a list, newest first, and the cursors of its neighbours (None: none)."""

    items: list[Item]
    older: str | None
    newer: str | None


def page(rows: Sequence, cursor: Cursor | None, limit: int,
         key: Callable[[object], tuple[float, str]], item: Callable[[object], Item],
         ) -> Page[Item]:
    """The page of `rows`, fetched with `where(cursor, ...)` and LIMIT `limit + 1` (the one
    more row tells whether the list goes on that way); `key` gives a row's (stored, id)."""
    more = len(rows) > limit
    rows = list(rows[:limit])
    going_newer = cursor is not None and not cursor.older
    if going_newer:
        rows.reverse()
    if not rows:   # nothing past the cursor: the way back starts at the cursor itself
        if cursor is None:
            return Page([], None, None)
        back = Cursor(not cursor.older, cursor.stored, cursor.id).text()
        return Page([], None, back) if cursor.older else Page([], back, None)
    newest, oldest = key(rows[0]), key(rows[-1])
    older = Cursor(True, *oldest).text() if more or going_newer else None
    newer = Cursor(False, *newest).text() if (more if going_newer else cursor is not None) \
        else None
    return Page([item(row) for row in rows], older, newer)
