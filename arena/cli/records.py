"""The match records commands are given: a record file, a JSON Lines export or a league.

Every record is checked once here, where it is read, before any command uses it: its shape as
`engine.records.read` checks it, plus what the arena's readers rely on beyond that (the keys
the replay and its page show, numbers that are finite and of sane size, text that is valid
Unicode, nesting no deeper than a record has). A record that fails is refused in one line;
no command meets it half-read.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from arena.clock import TimeControl
from arena.errors import ArenaError
from arena.league.store import DB_NAME, read_record
from engine import records

MAX_DEPTH = 64
"""Deepest nesting a record may have (a real one has a handful of levels)."""
MAX_INT = 2 ** 64
"""Largest whole number a record may hold (seeds are 64-bit)."""


class BadRecord(ArenaError):
    """A record file (or stored record) that no command can use: one line says why."""


def load_record(source: str, match_id: str | None) -> dict:
    """The record in a file (one JSON record, or JSON Lines picked by --match), or match
    `match_id` of a league folder; checked (`check_record`), else BadRecord."""
    path = Path(source)
    if path.is_dir() or path.name == DB_NAME:
        if match_id is None:
            raise ArenaError(f"{source} is a league: name the match with --match ID "
                             "(ids: `arena league export` lists them)")
        return check_record(read_record(path, match_id), f"match {match_id!r} of {source}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ArenaError(f"cannot read the record {source}: "
                         f"{getattr(error, 'strerror', None) or error}") from None
    try:
        found = [_parse(text, source, None)]
    except json.JSONDecodeError:   # JSON Lines: one record per line
        found = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    found.append(_parse(line, source, number))
                except json.JSONDecodeError as error:
                    raise ArenaError(f"{source} is neither a JSON record nor JSON Lines of "
                                     f"records: line {number}: {error.msg}") from None
    if not all(isinstance(record, dict) for record in found):
        raise ArenaError(f"{source} holds something else than match records")
    if match_id is not None:
        found = [record for record in found if record.get("match") == match_id]
        if not found:
            raise ArenaError(f"{source} has no match {match_id!r}")
    if len(found) != 1:
        raise ArenaError(f"{source} holds {len(found)} records: name one with --match ID")
    return check_record(found[0], source)


def _parse(text: str, source: str, line: int | None) -> Any:
    """JSON text parsed; JSONDecodeError passes (the caller tries JSON Lines), anything else
    JSON cannot read (nesting too deep, a number too long) is BadRecord."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as error:
        where = f"{source}" + (f" line {line}" if line is not None else "")
        what = ("is nested too deeply" if isinstance(error, RecursionError)
                else "holds a number too long to read")
        raise BadRecord(f"{where} {what}: it is not a match record the arena wrote; give "
                        "the record file `arena play --record` or `arena league export` "
                        "wrote") from None


def check_record(record: dict, source: str) -> dict:
    """`record` when every command can use it, else BadRecord naming `source` and the fault."""
    fault = _fault(record)
    if fault is not None:
        raise BadRecord(f"{source} is not a usable match record: {fault} (give a record "
                        "written by `arena play --record` or `arena league export`)")
    return record


def _fault(record: dict) -> str | None:
    """What is wrong with a record's values and shape, or None."""
    fault = _value_fault(record)
    if fault is not None:
        return fault
    try:
        records.read(record)
    except records.RecordError as error:
        return str(error).removeprefix("record cannot be read: ")
    for key in ("times", "cpu_times", "bots"):
        if record.get(key) is not None and not isinstance(record[key], list):
            return f"{key} must be a list"
    if record.get("replay") is not None and not isinstance(record["replay"], dict):
        return "replay must be an object"
    if record.get("match") is not None and not isinstance(record["match"], str):
        return "match must be a match id (text)"
    if record.get("time_control"):
        try:
            TimeControl.from_record(record["time_control"])
        except ArenaError as error:
            return str(error)
    forfeit = (record.get("result") or {}).get("forfeit") or {}
    if not isinstance(forfeit.get("detail", ""), str):
        return "result.forfeit.detail must be text"
    return None


def _value_fault(record: Any) -> str | None:
    """The first value no record holds: nesting deeper than MAX_DEPTH, a number not finite or
    beyond MAX_INT, text that is not valid Unicode (a lone surrogate); None when there is
    none. Walked without recursion, so no depth overflows it."""
    stack: list[tuple[Any, str, int]] = [(record, "the record", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"{where} is nested deeper than {MAX_DEPTH} levels"
        if isinstance(value, dict):
            for key, item in reversed(value.items()):   # reversed: the first fault is named
                if not _valid_text(key):
                    return f"a key in {where} is not valid Unicode text"
                stack.append((item, f"{key}" if depth == 0 else f"{where}.{key}", depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{index}]", depth + 1)
                         for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            if not _valid_text(value):
                return f"{where} is not valid Unicode text (a lone surrogate)"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"{where} is {value!r}: a record holds only finite numbers"
        elif isinstance(value, int) and not isinstance(value, bool):
            if abs(value) >= MAX_INT:
                return f"{where} is a number too large for a record (more than 64 bits)"
    return None


def _valid_text(text: Any) -> bool:
    if not isinstance(text, str):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
