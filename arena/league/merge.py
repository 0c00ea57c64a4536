"""Several leagues read as one, for one ladder: merged only when they play the same rules."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

from arena.errors import ArenaError
from arena.league.store import database_path, read_league
from arena.stats.ratings import Outcome


def read_leagues(folders: Sequence[str]) -> tuple[list[Outcome], str]:
    """The outcomes of every league folder, checked to be of one game and set of rules, and
    those rules in words ("mandala", "flowers with pile_size=12").

    Deal labels name the deal's seed (`arena.league.schedule`), so leagues with the same seed share
    deal clusters (they played the same cards) and others do not. Merged, match ids are
    prefixed by their folder, and each league's matches come after the previous league's
    in match order (running Elo replays the leagues one after the other).
    """
    outcomes: list[Outcome] = []
    seen: set[Path] = set()
    first: tuple[str, tuple] | None = None
    for folder in folders:
        # One league may be named by its folder or its database, spelt in many ways: the
        # database it reads is what must not come twice.
        where = database_path(folder).resolve()
        if where in seen:
            raise ArenaError(f"league {folder} is given twice (as {where}): its matches would "
                             "count double; give each league once")
        seen.add(where)
        config, stored = read_league(folder)
        # Rules are the game (and its rules version, when stored) and its options: leagues
        # under other rules are not comparable.
        rules = (config.get("rules") or config.get("game"), config.get("options") or {})
        if first is None:
            first = (folder, rules)
        elif rules != first[1]:
            raise ArenaError(
                f"league {folder} is {_describe(rules)} but {first[0]} is "
                f"{_describe(first[1])}: merge only leagues of the same game and options")
        if len(folders) > 1:
            offset = 1 + max((outcome.order for outcome in outcomes), default=-1)
            stored = [dataclasses.replace(outcome,
                                          match_id=match_prefix(folder, folders)
                                          + outcome.match_id,
                                          order=offset + outcome.order)
                      for outcome in stored]
        outcomes.extend(stored)
    return outcomes, _describe(first[1])


def match_prefix(folder: str, folders: Sequence[str]) -> str:
    """What a match id of `folder` is prefixed with when `folders` are merged: the folder
    (ids are unique within one league only), or nothing for a league alone."""
    return f"{folder}|" if len(folders) > 1 else ""


def _describe(rules: tuple) -> str:
    game, options = rules
    shown = " ".join(f"{key}={value}" for key, value in sorted(options.items()))
    return f"{game}" + (f" with {shown}" if shown else "")
