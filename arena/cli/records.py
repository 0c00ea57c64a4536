"""The match records commands are given: a record file, a JSON Lines export or a league."""
from __future__ import annotations

import json
from pathlib import Path

from arena.errors import ArenaError
from arena.league.store import DB_NAME, read_record


def load_record(source: str, match_id: str | None) -> dict:
    """The record in a file (one JSON record, or JSON Lines picked by --match), or match
    `match_id` of a league folder."""
    path = Path(source)
    if path.is_dir() or path.name == DB_NAME:
        if match_id is None:
            raise ArenaError(f"{source} is a league: name the match with --match ID "
                             "(ids: `arena league export` lists them)")
        return read_record(path, match_id)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ArenaError(f"cannot read the record {source}: "
                         f"{getattr(error, 'strerror', None) or error}") from None
    try:
        found = [json.loads(text)]
    except json.JSONDecodeError:   # JSON Lines: one record per line
        try:
            found = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as error:
            raise ArenaError(f"{source} is neither a JSON record nor JSON Lines of records: "
                             f"line {error.lineno}: {error.msg}") from None
    if not all(isinstance(record, dict) for record in found):
        raise ArenaError(f"{source} holds something else than match records")
    if match_id is not None:
        found = [record for record in found if record.get("match") == match_id]
        if not found:
            raise ArenaError(f"{source} has no match {match_id!r}")
    if len(found) != 1:
        raise ArenaError(f"{source} holds {len(found)} records: name one with --match ID")
    return found[0]
