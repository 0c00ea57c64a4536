"""A ladder's match records as JSON Lines (`/api/ladders/ID/export.jsonl`), streamed.

One arena-record/1 per line, oldest first, each the record the database holds with its match
id added as key `match`, as `arena league export` writes them: `arena verify`, `arena replay
--match` and `arena debug --match` read the file as they read a league's export. The records
are read a chunk at a time, each chunk a query of its own, so the answer never holds the
ladder's matches in memory, and a chunk may be read on any thread of the web server's pool
(a connection is per thread: arena.serve.db). Matches landing while it streams come last.
"""
from __future__ import annotations

import json
import math
from typing import Iterator

from arena.serve import paging
from arena.serve.db import ServiceDB

CHUNK = 200
"""Records read per query: a few MB at most (a record is 5-30 KB)."""


def ladder_lines(db: ServiceDB, ladder: str, chunk: int = CHUNK) -> Iterator[bytes]:
    """The ladder's records, one JSON line each (newline included), oldest first."""
    after = paging.Cursor(older=False, key=(-math.inf,), id="")
    while True:
        condition, params, order = paging.where(after, "stored", "id")
        rows = db.query(f"SELECT id, stored, record FROM matches WHERE ladder = ? AND "
                        f"{condition} ORDER BY {order} LIMIT ?", (ladder, *params, chunk))
        for match_id, _, record in rows:
            yield json.dumps({**json.loads(record), "match": match_id},
                             separators=(",", ":")).encode() + b"\n"
        if len(rows) < chunk:
            return
        after = paging.Cursor(older=False, key=(rows[-1][1],), id=rows[-1][0])
