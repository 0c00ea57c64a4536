"""Ratings from stored match outcomes: maximum-likelihood Elo with intervals, running Elo, LOS.

Pure math on `Outcome` records: no processes, sockets or files. (The method is described in
full further down, once the fit lands.)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """The result of one finished match, as ratings need it.

    `bots`, `ranks` and `scores` are per seat. A bot is a label such as "greedy@1a2b3c4d"
    (name @ content hash: a changed bot is a different bot). Ranks follow the records
    contract: 1 is best, tied seats share a rank. `deal` is shared by every match played on
    the same deal (a seat-swapped pair, all seat rotations of a deal, all bots' games of one
    1-player deal); `order` is the finish order, used only by running Elo.
    """

    match_id: str
    order: int
    bots: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    deal: str
    forfeit_seat: int | None = None
