"""Tables people read: the ladder, the pairwise score matrix and running Elo histories.

Per-bot statistics (`arena.stats.botstats`) come the same ways; the notes printed under a
text ladder, and a running league's leader for its progress line, are here too.

Each comes as table, markdown, csv or json: text only. The HTML ladder
(`arena.render.ladder_page`) draws the same `Grid`s (headers, cells, alignment) through its
templates; it imports this module, never the reverse. Only presentation lives here; every
number comes from `arena.stats.ratings`. The league calls `ladder_text(outcomes)` at the end
of a run; `arena ladder` calls the same functions.
"""
from __future__ import annotations

import csv
import io
import json
import math
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from tabulate import tabulate

from arena.stats.botstats import (STATS_NOTES, BotStats, MatchFacts, bot_stats, order_effects,
                                  stats_records)
from arena.errors import ArenaError
from arena.stats.ratings import (Ladder, Outcome, find_bot, ladder, points_leader, running_elo,
                                 score_matrix)

FORMATS = ("table", "markdown", "csv", "json")
_TABLEFMT = {"table": "simple", "markdown": "github"}


@dataclass(frozen=True)
class Grid:
    """A table's cells as text, before any format draws it: tabulate here, templates in
    `arena.render`. `bots` names the bot label of each row (for links), `align` each column."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[str, ...]
    bots: tuple[str, ...]

    def drawn(self, fmt: str) -> str:
        """Drawn by tabulate as table or markdown."""
        return tabulate(self.rows, headers=self.headers, tablefmt=_TABLEFMT[fmt],
                        disable_numparse=True, colalign=self.align)


def _name_and_version(label: str) -> tuple[str, str]:
    """"greedy@1a2b3c4d" -> ("greedy", "1a2b3c4d"); a label without a version keeps ""."""
    name, _, version = label.partition("@")
    return name, version


def shown_bot(label: str) -> str:
    name, version = _name_and_version(label)
    return f"{name} ({version})" if version else name


def _rounded(value: float | None, digits: int = 1) -> float | None:
    """Rounded, with NaN as None and no "-0.0"."""
    if value is None or math.isnan(value):
        return None
    return round(value, digits) + 0.0


def _cell(value: float | None, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{suffix}"


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ArenaError(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})")


_CSV_FIELDS = ["rank", "bot", "version", "elo", "interval", "games", "score_pct", "wins",
               "draws", "losses", "forfeits", "los_next_pct"]


def ladder_records(table: Ladder) -> list[dict]:
    """One plain dict per ladder row: what csv and json print (percentages 0-100)."""
    records = []
    for row in table.rows:
        name, version = _name_and_version(row.bot)
        records.append({
            "rank": row.rank, "bot": name, "version": version, "elo": _rounded(row.elo),
            "interval": _rounded(row.interval), "games": row.games,
            "score_pct": _rounded(row.score * 100), "wins": row.wins, "draws": row.draws,
            "losses": row.losses, "forfeits": row.forfeits,
            "los_next_pct": None if row.los_next is None else _rounded(row.los_next * 100),
        })
    return records


def ladder_notes(table: Ladder) -> list[str]:
    fit = table.fit
    scale = (f"{shown_bot(fit.anchor[0])} anchored at {fit.anchor[1]:g}" if fit.anchor
             else "mean 0")
    width = ("from the fit's information" if fit.virtual_draws
             else "deals as clusters")
    notes = [
        f"Elo: maximum likelihood, {scale}. +/-: {table.confidence:.0%} interval, "
        f"{width} ({table.deals} deal{'' if table.deals == 1 else 's'}).",
        "LOS next: likelihood of superiority over the next row.",
        "W/D/L and score % count pairwise results: n - 1 per n-seat match, "
        "1-player games compared per deal.",
    ]
    if fit.virtual_draws:
        notes.append("Some bots won or lost every point against the rest: one virtual draw "
                     "per pair keeps the ratings finite.")
    elif table.deals < 2:
        notes.append("Intervals and LOS need results from at least 2 deals.")
    elif table.deals < len(table.rows):
        notes.append(f"Only {table.deals} deals for {len(table.rows)} bots: the intervals are "
                     "likely too narrow; play more deals.")
    return notes


def format_ladder(table: Ladder, fmt: str = "table") -> str:
    """The ladder in one of FORMATS."""
    _check_format(fmt)
    records = ladder_records(table)
    if fmt == "json":
        fit = table.fit
        return json.dumps({
            "confidence": table.confidence, "deals": table.deals,
            "anchor": {"bot": fit.anchor[0], "elo": fit.anchor[1]} if fit.anchor else None,
            "virtual_draws": fit.virtual_draws, "ladder": records}, indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=_CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: "" if value is None else value for key, value in record.items()}
                         for record in records)
        return out.getvalue().rstrip("\n")
    return ladder_table(table, fmt) + "\n\n" + "\n".join(ladder_notes(table))


def ladder_table(table: Ladder, fmt: str) -> str:
    """The ladder's table alone, drawn by tabulate (table or markdown)."""
    return ladder_grid(table).drawn(fmt)


def ladder_grid(table: Ladder) -> Grid:
    """The ladder's cells: rank, bot, Elo, interval, games, score, W/D/L, forfeits, LOS."""
    rows = tuple((str(record["rank"]), shown_bot(row.bot), _cell(record["elo"]),
                  _cell(record["interval"]), str(record["games"]), _cell(record["score_pct"]),
                  f"{record['wins']}/{record['draws']}/{record['losses']}",
                  str(record["forfeits"]), _cell(record["los_next_pct"], "%"))
                 for record, row in zip(ladder_records(table), table.rows))
    headers = ("rank", "bot (version)", "Elo", "+/-", "games", "score %", "W/D/L",
               "forfeits", "LOS next")
    return Grid(headers, rows, ("right", "left") + ("right",) * 7,
                tuple(row.bot for row in table.rows))


def format_matrix(table: Ladder, outcomes: Sequence[Outcome], fmt: str = "table") -> str:
    """Each row bot's score % against each column bot, bots in ladder order."""
    _check_format(fmt)
    if fmt not in ("json", "csv"):
        return matrix_table(table, outcomes, fmt) + "\n\n" + MATRIX_NOTE
    order = [row.bot for row in table.rows]
    matrix = score_matrix(outcomes, order)
    n = len(order)
    if fmt == "json":
        return json.dumps({
            "bots": order,
            "score_pct": [[_rounded(matrix.score(i, j) * 100) for j in range(n)]
                          for i in range(n)],
            "results": [[int(matrix.games[i, j]) for j in range(n)] for i in range(n)]},
            indent=2)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["bot", "opponent", "points", "results", "score_pct"])
    for i in range(n):
        for j in range(n):
            if matrix.games[i, j]:
                writer.writerow([order[i], order[j], _rounded(matrix.points[i, j]),
                                 int(matrix.games[i, j]), _rounded(matrix.score(i, j) * 100)])
    return out.getvalue().rstrip("\n")


MATRIX_NOTE = "Cell: the row bot's score % against the column bot (pairwise results)."


def matrix_table(table: Ladder, outcomes: Sequence[Outcome], fmt: str) -> str:
    """The matrix's table alone, drawn by tabulate (table or markdown)."""
    return matrix_grid(table, outcomes).drawn(fmt)


def matrix_grid(table: Ladder, outcomes: Sequence[Outcome]) -> Grid:
    """The matrix's cells: the row bot's score % (and results) against each column bot."""
    order = [row.bot for row in table.rows]
    matrix = score_matrix(outcomes, order)
    n = len(order)
    # Columns by rank number keep a wide matrix narrow; the rows say who each number is.
    rows = tuple((f"{i + 1}. {shown_bot(order[i])}",)
                 + tuple("" if i == j else "-" if not matrix.games[i, j]
                         else f"{matrix.score(i, j) * 100:.1f} ({int(matrix.games[i, j])})"
                         for j in range(n))
                 for i in range(n))
    return Grid(("bot",) + tuple(str(j + 1) for j in range(n)), rows,
                ("left",) + ("right",) * n, tuple(order))


_STATS_HEADERS = ["bot (version)", "matches", "points mean", "points sd", "1st seat %",
                  "later seats %", "move ms mean", "move ms max", "forfeits",
                  "later seating better/worse (p)"]


def stats_table(stats: Sequence[BotStats], fmt: str) -> str:
    """Per-bot statistics drawn by tabulate (table or markdown)."""
    return stats_grid(stats).drawn(fmt)


def stats_grid(stats: Sequence[BotStats]) -> Grid:
    """Per-bot statistics' cells, one row per bot."""
    records = stats_records(stats)
    rows = tuple((shown_bot(record["bot"]), str(record["matches"]),
                  _number(record["mean_points"], 2), _number(record["sd_points"], 2),
                  _with_count(record["first_seat_score_pct"], record["first_seat_results"]),
                  _with_count(record["later_seats_score_pct"], record["later_seats_results"]),
                  _cell(record["mean_move_ms"]), _cell(record["max_move_ms"]),
                  ", ".join(f"{reason} {count}" for reason, count in record["forfeits"].items())
                  or "-", _order_cell(record))
                 for record in records)
    return Grid(tuple(_STATS_HEADERS), rows, ("left",) + ("right",) * 9,
                tuple(record["bot"] for record in records))


def _order_cell(record: dict) -> str:
    """`9/1 of 12 (p 0.011)`, FLAG when below FLAG_P; `-` when no deal was met twice."""
    if not record["order_deals"]:
        return "-"
    flag = " FLAG" if record["order_flagged"] else ""
    return (f"{record['order_later_better']}/{record['order_later_worse']} of "
            f"{record['order_deals']} (p {record['order_p_value']:.2g}){flag}")


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _with_count(percent: float | None, results: int) -> str:
    return "-" if percent is None else f"{percent:.1f} ({results})"


def format_stats(stats: Sequence[BotStats], fmt: str = "table") -> str:
    """Per-bot statistics in one of FORMATS."""
    _check_format(fmt)
    records = stats_records(stats)
    if fmt == "json":
        return json.dumps({"stats": records}, indent=2)
    if fmt == "csv":
        out = io.StringIO()
        fields = [key for key in records[0] if key != "forfeits"] + ["forfeits"]
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for record in records:
            forfeits = " ".join(f"{k}={v}" for k, v in record["forfeits"].items())
            writer.writerow({**{k: "" if v is None else v for k, v in record.items()},
                             "forfeits": forfeits})
        return out.getvalue().rstrip("\n")
    return stats_table(stats, fmt) + "\n\n" + "\n".join(STATS_NOTES)


def rated(outcomes: Sequence[Outcome], anchor: tuple[str, float] | None = None) -> Ladder:
    """The ladder of `outcomes`, `anchor` naming a bot by its name alone when it has one
    version ("greedy" for greedy@...); ArenaError when there is nothing to rate."""
    if not outcomes:
        raise ArenaError("no finished matches yet: nothing to rate")
    if anchor is not None:
        bots = sorted({bot for outcome in outcomes for bot in outcome.bots})
        anchor = (find_bot(anchor[0], bots), anchor[1])
    return ladder(outcomes, anchor=anchor)


def ladder_text(outcomes: Sequence[Outcome], fmt: str = "table",
                anchor: tuple[str, float] | None = None, matrix: bool = False,
                facts: Sequence[MatchFacts] | None = None, stats: bool = False) -> str:
    """What the league prints at its end and `arena ladder` prints: ladder, matrix or
    (`stats`, from the matches' `facts`) per-bot statistics."""
    _check_format(fmt)
    table = rated(outcomes, anchor)
    order = [row.bot for row in table.rows]
    if stats:
        return format_stats(bot_stats(facts or [], order), fmt)
    return format_matrix(table, outcomes, fmt) if matrix else format_ladder(table, fmt)


def history_text(outcomes: Sequence[Outcome], fmt: str = "table", k: float = 16.0) -> str:
    """Running Elo after each match, one row per bot and match, in match order (for charts)."""
    _check_format(fmt)
    if not outcomes:
        raise ArenaError("no finished matches yet: nothing to rate")
    points = sorted(((point.order, point.match_id, bot, _rounded(point.elo))
                     for bot, history in running_elo(outcomes, k=k).items()
                     for point in history), key=lambda row: (row[0], row[1], row[2]))
    headers = ["order", "match", "bot", "elo"]
    if fmt == "json":   # grouped per bot: one series per line of a chart
        series: dict[str, list[dict]] = {}
        for order, match, bot, elo in points:
            series.setdefault(bot, []).append({"order": order, "match": match, "elo": elo})
        return json.dumps({"k": k, "history": series}, indent=1)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(points)
        return out.getvalue().rstrip("\n")
    return tabulate(points, headers=headers, tablefmt=_TABLEFMT[fmt], floatfmt=".1f")


def order_effect_footer(outcomes: Sequence[Outcome]) -> list[str]:
    """One line per bot flagged for an order effect (arena.stats.botstats): on deals it met in
    more than one seating it did better later, beyond chance. Seatings in schedule order."""
    facts = [MatchFacts(o.bots, o.scores, o.ranks, None, None, (), deal=o.deal)
             for o in outcomes]
    return [f"Note: {bot} did better in its later seating of {effect.better} of the "
            f"{effect.deals} deals it met twice and worse in {effect.worse} (sign test p = "
            f"{effect.p_value:.2g}): its processes may pass deals to each other; see --stats."
            for bot, effect in sorted(order_effects(facts).items()) if effect.flagged]


def missing_protections_footer(missing: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per league that ran without some sandbox protection, naming each: `missing`
    is league folder -> {protection: why} (`arena.league.store.read_missing_protections`)."""
    lines = []
    for folder, protections in missing.items():
        if protections:
            named = "; ".join(f"{name} ({why})" for name, why in protections.items())
            lines.append(f"Note: league {folder} ran without these sandbox protections: "
                         f"{named}. See `arena doctor`.")
    return lines


class Leader:
    """A running league's progress-bar status: the bot with the highest share of pairwise
    points so far ("leader greedy (64% of pairwise points)").

    Recounted from every outcome, so at most every second and at most a tenth of the time:
    a long league's bar must not slow the league.
    """

    def __init__(self, outcomes: Sequence[Outcome]):
        self.outcomes = list(outcomes)
        self.shown, self.counted_at, self.cost = "-", -math.inf, 0.0

    def add(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def text(self) -> str:
        now = time.monotonic()
        if now - self.counted_at >= max(1.0, 10 * self.cost):
            self.shown = self._count()
            self.counted_at, self.cost = now, time.monotonic() - now
        return f"leader {self.shown}"

    def _count(self) -> str:
        leader = points_leader(self.outcomes)
        if leader is None:
            return "-"
        bot, share = leader
        return f"{bot.split('@')[0]} ({share:.0%} of pairwise points)"
