"""`Outcome`: one finished match as the ratings read it, in a module of its own so that what
stores and reads outcomes (the league store, every CLI command that opens a league) need
not import numpy with the rating fit."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """The result of one finished match, as ratings need it.

    `bots`, `ranks` and `scores` are per seat. A bot is a label such as "greedy@1a2b3c4d"
    (name @ content hash: a changed bot is a different bot). Ranks follow the records
    contract: 1 is best, tied seats share a rank. `deal` is shared by every match played on
    the same deal (at every table and in every seating; all bots' games of one 1-player
    deal): the unit of the interval estimate. `order` is the match order running Elo replays
    (the league store gives the schedule position, so a resumed league has the same
    history); the fit ignores it.
    """

    match_id: str
    order: int
    bots: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    deal: str
    forfeit_seat: int | None = None
