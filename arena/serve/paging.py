"""Cursors for the service's lists: opaque to readers, stable while new rows land.

A cursor names the row a page ended at by its place in the list's order, a key of a few
numbers and the row's id, and says which way to go from it: on down the list ("older")
or back up it ("newer"). Lists shown newest first are ordered by (stored, id): matches land
at the newest end, so walking older from any cursor meets every row once, however many land
meanwhile (an offset would shift by the rows landed and show some twice). The bots list is
ordered by whether they play, then id, newest first. The standings are ordered by rank, not
by time: their key is the fit's stamp and the row's rank key, (tier, tier, Elo), so a cursor
names a place in one fit's ranking (arena.serve.standings.rank_key says how refits meanwhile
are met). Head to head pairs go in name order (an empty key; the id names the pair). The
same cursors serve the API (`?cursor=`, `next_cursor`, `newer_cursor`) and the pages'
"older" and "newer" links (on a page with two lists, the second's are `standings_cursor` or
`pairs_cursor`).

A cursor reads `o` (older) or `n` (newer), its key (Python's repr of each float, which
reads back exactly, comma-separated), `_` and the row's id. Readers are not meant to make
them: anything that does not parse, or names a place in another list's order, is refused in
one line (a 400), and its numbers only ever reach SQL as parameters.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Generic, Sequence, TypeVar

Item = TypeVar("Item")

MAX_LIMIT = 500
MAX_CURSOR = 400
"""Characters of the longest cursor taken: ids and keys are short."""


class CursorError(ValueError):
    """A cursor this service did not give."""


@dataclass(frozen=True)
class Cursor:
    older: bool
    """True: rows after (key, id) in the list's order; False: rows before it."""
    key: tuple[float, ...]
    id: str

    def text(self) -> str:
        return f"{'o' if self.older else 'n'}{','.join(map(repr, self.key))}_{self.id}"

    def turned(self) -> "Cursor":
        return Cursor(not self.older, self.key, self.id)


def parse(text: str | None) -> Cursor | None:
    """The cursor of `?cursor=TEXT` (None: the first page); CursorError if it is not one."""
    if not text:
        return None
    way, (key_text, sep, row_id) = text[:1], text[1:].partition("_")
    try:
        key = tuple(float(part) for part in key_text.split(",")) if key_text else ()
    except ValueError:
        key = (math.nan,)
    if way not in ("o", "n") or not sep or not row_id or len(text) > MAX_CURSOR \
            or not all(math.isfinite(number) for number in key):
        raise CursorError(f"cursor {text[:80]!r} is not one this service gave: start from the "
                          "first page (no cursor) and follow next_cursor")
    return Cursor(way == "o", key, row_id)


def _wrong_list(cursor: Cursor) -> CursorError:
    return CursorError(f"cursor {cursor.text()[:80]!r} is not one of this list: start from "
                       "the first page (no cursor)")


def expect(cursor: Cursor | None, width: int) -> None:
    """Refuses a cursor whose key is not `width` numbers: another list's."""
    if cursor is not None and len(cursor.key) != width:
        raise _wrong_list(cursor)


def _place(cursor: Cursor, width: int, id_type: type) -> tuple:
    """The cursor's (key..., id) for a list whose key has `width` numbers."""
    expect(cursor, width)
    try:
        row_id = id_type(cursor.id)
    except ValueError:
        raise _wrong_list(cursor) from None
    if isinstance(row_id, int) and not -2 ** 63 <= row_id < 2 ** 63:   # SQLite's integers
        raise _wrong_list(cursor)
    return (*cursor.key, row_id)


def where(cursor: Cursor | None, stored: str | Sequence[str], row_id: str,
          id_type: type = str) -> tuple[str, tuple, str]:
    """SQL for the rows `cursor` asks for, of a list ordered newest first by the columns
    `stored` (one, or none for a list ordered by id alone) and `row_id` (of `id_type`:
    SQLite orders every number below every text): the condition, its parameters and the
    order (newest first, or oldest first going newer)."""
    columns = [stored] if isinstance(stored, str) else list(stored)
    place = ", ".join([*columns, row_id])
    newest = ", ".join(f"{column} DESC" for column in [*columns, row_id])
    if cursor is None:
        return "1", (), newest
    after = _place(cursor, len(columns), id_type)
    if cursor.older:
        return f"({place}) < ({', '.join('?' * len(after))})", after, newest
    return (f"({place}) > ({', '.join('?' * len(after))})", after,
            ", ".join(f"{column} ASC" for column in [*columns, row_id]))


def select(rows: Sequence, cursor: Cursor | None, limit: int,
           key: Callable[[Any], tuple[tuple[float, ...], Any]], id_type: type = str,
           ascending: bool = False) -> list:
    """`where` for a list held in memory (rows in its order, first to last, as `key` orders
    them: descending, or `ascending`): the rows to give `page`, at most `limit + 1`."""
    if cursor is None:
        return list(rows[:limit + 1])
    width = len(key(rows[0])[0]) if rows else len(cursor.key)
    after = _place(cursor, width, id_type)

    def place(row: Any) -> tuple:
        found, row_id = key(row)
        return (*found, row_id)

    going = rows if cursor.older else rows[::-1]   # the way the page goes
    if cursor.older == ascending:
        return [row for row in going if place(row) > after][:limit + 1]
    return [row for row in going if place(row) < after][:limit + 1]


@dataclass(frozen=True)
class Page(Generic[Item]):
    """One page of a list, first rows first, and the cursors of its neighbours (None: none)."""

    items: list[Item]
    older: str | None
    newer: str | None


def page(rows: Sequence, cursor: Cursor | None, limit: int,
         key: Callable[[Any], tuple[Any, Any]], item: Callable[[Any], Item],
         ) -> Page[Item]:
    """The page of `rows`, fetched with `where(cursor, ...)` (or `select`) and LIMIT
    `limit + 1` (the one more row tells whether the list goes on that way); `key` gives a
    row's place: (stored, id), or (key tuple, id)."""
    def place(row: Any) -> tuple[tuple[float, ...], str]:
        found, row_id = key(row)
        return (found if isinstance(found, tuple) else (found,)), str(row_id)

    more = len(rows) > limit
    rows = list(rows[:limit])
    going_newer = cursor is not None and not cursor.older
    if going_newer:
        rows.reverse()
    if not rows:   # nothing past the cursor: the way back starts at the cursor itself
        if cursor is None:
            return Page([], None, None)
        back = cursor.turned().text()
        return Page([], None, back) if cursor.older else Page([], back, None)
    newest, oldest = place(rows[0]), place(rows[-1])
    older = Cursor(True, *oldest).text() if more or going_newer else None
    newer = Cursor(False, *newest).text() if (more if going_newer else cursor is not None) \
        else None
    return Page([item(row) for row in rows], older, newer)
