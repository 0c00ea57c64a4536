"""A league database's stored rows decoded and checked: a row the arena could not have written
(the file edited, damaged) is one line naming the database, what is wrong and what to do
(`damaged`), never a traceback; and StoreError, the error of a league folder or database
that cannot be used as asked."""
from __future__ import annotations

import json
import math
import os
import sqlite3
from pathlib import Path
from typing import Any

from arena.errors import ArenaError


class StoreError(ArenaError):
    """A league folder or database that cannot be used as asked."""


REPAIR_HINT = ("restore it from a copy, or run the league again into a new folder; "
               "reading it changed nothing")


def damaged(path: str | os.PathLike, what: str) -> StoreError:
    """The error for a league database whose stored rows cannot be what the arena wrote:
    one line naming the database, what is wrong and what to do."""
    return StoreError(f"{path} is damaged: {what} ({REPAIR_HINT})")


def decode(path: Path, what: str, text: Any) -> Any:
    """A stored JSON column decoded; `damaged` when it is no JSON (or too deep or big to read)."""
    if not isinstance(text, (str, bytes)):
        raise damaged(path, f"{what} is not JSON text")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):   # not JSON, too deep, a number too long to read
        raise damaged(path, f"{what} is not valid JSON") from None


def shown(match_id: Any) -> str:
    """A stored match id as an error names it: as stored when it is plain text, else quoted
    with escapes (a tampered id cannot write to the terminal)."""
    return match_id if isinstance(match_id, str) and match_id.isprintable() else repr(match_id)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def check_ord(path: Path, match_id: Any, order: Any) -> int:
    if not is_int(order):
        raise damaged(path, f"match {shown(match_id)}'s ord is not a whole number")
    return order


def check_id(path: Path, match_id: Any) -> str:
    if not isinstance(match_id, str):
        raise damaged(path, f"a match id {match_id!r} is not text")
    return match_id


def labels(path: Path, match_id: str, text: Any) -> tuple[str, ...]:
    bots = decode(path, f"match {shown(match_id)}'s bots", text)
    if (not isinstance(bots, list) or not bots
            or not all(isinstance(bot, str) for bot in bots)):
        raise damaged(path, f"match {shown(match_id)}'s bots are not a list of bot names")
    return tuple(bots)


def per_seat(path: Path, match_id: str, column: str, text: Any, seats: int,
              whole: bool) -> tuple:
    values = decode(path, f"match {shown(match_id)}'s {column}", text)
    kind = "whole numbers" if whole else "numbers"
    if (not isinstance(values, list)
            or not all((is_int if whole else is_number)(value) for value in values)):
        raise damaged(path, f"match {shown(match_id)}'s {column} are not a list of {kind}")
    if len(values) != seats:
        raise damaged(path, f"match {shown(match_id)} has {len(values)} {column} for "
                            f"{seats} seats")
    return tuple(values)


def seat(path: Path, match_id: str, seat: Any, seats: int) -> int | None:
    if seat is not None and not (is_int(seat) and 0 <= seat < seats):
        raise damaged(path, f"match {shown(match_id)}'s forfeit_seat {seat!r} is not one of its "
                            f"{seats} seats")
    return seat


def record(path: Path, match_id: str, text: Any) -> dict:
    record = decode(path, f"match {shown(match_id)}'s record", text)
    if not isinstance(record, dict):
        raise damaged(path, f"match {shown(match_id)}'s record is not a JSON object")
    return record


def config(path: Path, text: Any) -> dict:
    config = decode(path, "the league's config", text)
    if not isinstance(config, dict) or not isinstance(config.get("game"), str):
        raise damaged(path, "the league's config is not a JSON object naming its game")
    return config


def read_failed(path: Path, error: sqlite3.Error) -> StoreError:
    return StoreError(f"cannot read the league database {path}: {error} (if it is damaged, "
                      f"{REPAIR_HINT})")
