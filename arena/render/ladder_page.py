"""The ladder as HTML: the ladder, a chart of each bot's Elo and interval, per-bot statistics,
the pairwise matrix and a chart of running Elo per bot (inline SVG: no scripts, no files
beside it, opens anywhere).

`arena ladder results/NAME --format html > ladder.html` prints this page alone;
`arena.render.ladder_site` writes it as the index of a site whose bot names link to pages of
their own. Numbers come from `arena.stats.ratings` and the tables are the `Grid`s of
`arena.stats.report`, exactly as the text formats show them. Everything is drawn by the
templates in `templates/ladder/` (autoescaped); this module only computes what they draw.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from arena.render import templates
from arena.stats.botstats import STATS_NOTES, BotStats
from arena.stats.ratings import Ladder, Outcome, running_elo
from arena.stats.report import (MATRIX_NOTE, ladder_grid, ladder_notes, matrix_grid, shown_bot,
                                stats_grid)

CHART_WIDTH, CHART_HEIGHT, MARGIN = 760, 320, 48
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def ladder_page(table: Ladder, outcomes: Sequence[Outcome], *, title: str,
                k: float = 16.0, stats: Sequence[BotStats] | None = None,
                bot_pages: Mapping[str, str] | None = None) -> str:
    """The whole page. `bot_pages` maps bot labels to the (relative) address of their page:
    given, bot names in the ladder and statistics link there."""
    return templates().get_template("ladder/page.html").render(
        title=title, matches=len(outcomes), confidence=table.confidence, k=k,
        ladder=ladder_grid(table), notes=[note for note in ladder_notes(table) if note],
        intervals=interval_chart(table),
        stats=None if stats is None else stats_grid(stats), stats_notes=STATS_NOTES,
        matrix=matrix_grid(table, outcomes), matrix_note=MATRIX_NOTE,
        running=running_elo_chart(table, outcomes, k), links=bot_pages or {})


def interval_chart(table: Ladder) -> dict | None:
    """One row per bot (ladder order): a dot at its Elo and a bar across its interval, on a
    labelled Elo axis; bots without an interval get the dot alone. None: no ratings yet."""
    rows = [row for row in table.rows if not math.isnan(row.elo)]
    if not rows:
        return None
    label_w, row_h = 200, 24
    spans = [(row.elo - (0 if math.isnan(row.interval) else row.interval),
              row.elo + (0 if math.isnan(row.interval) else row.interval)) for row in rows]
    low, high = min(lo for lo, _ in spans), max(hi for _, hi in spans)
    pad = max((high - low) * 0.05, 10.0)
    low, high = low - pad, high + pad
    inner_w = CHART_WIDTH - label_w - MARGIN

    def x(elo: float) -> float:
        return label_w + (elo - low) / (high - low) * inner_w

    axis_y = MARGIN + row_h * len(rows)
    return {
        "width": CHART_WIDTH, "height": axis_y + 40, "label_w": label_w, "inner_w": inner_w,
        "margin": MARGIN, "axis_y": axis_y,
        "ticks": [{"x": x(tick), "label": f"{tick:g}"} for tick in _ticks(low, high)],
        "confidence": table.confidence,
        "bots": [{"name": shown_bot(row.bot), "colour": COLOURS[index % len(COLOURS)],
                  "y": MARGIN + row_h * index + row_h / 2 - 8, "x": x(row.elo),
                  "x_low": x(lo), "x_high": x(hi), "elo": row.elo, "low": lo, "high": hi}
                 for index, (row, (lo, hi)) in enumerate(zip(rows, spans))],
    }


def _ticks(low: float, high: float) -> list[float]:
    """Round Elo values for the axis: about five, at a step of 1, 2 or 5 times a power of 10."""
    raw = (high - low) / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [step * i for i in range(math.ceil(low / step), math.floor(high / step) + 1)]


def running_elo_chart(table: Ladder, outcomes: Sequence[Outcome], k: float) -> dict | None:
    """One line per bot (ladder order, same colours as the legend), Elo against match.
    None: no matches yet."""
    histories = running_elo(outcomes, k=k)
    bots = [row.bot for row in table.rows if histories.get(row.bot)]
    points = [point for bot in bots for point in histories[bot]]
    if not points:
        return None
    first, last = min(p.order for p in points), max(p.order for p in points)
    low, high = min(p.elo for p in points), max(p.elo for p in points)
    span_x, span_y = max(last - first, 1), max(high - low, 1.0)
    inner_w, inner_h = CHART_WIDTH - 2 * MARGIN, CHART_HEIGHT - 2 * MARGIN

    def x(order: int) -> float:
        return MARGIN + (order - first) / span_x * inner_w

    def y(elo: float) -> float:
        return MARGIN + (high - elo) / span_y * inner_h

    return {
        "width": CHART_WIDTH, "height": CHART_HEIGHT, "margin": MARGIN, "inner_w": inner_w,
        "inner_h": inner_h, "first": first, "last": last, "low": low, "high": high,
        "lines": [{"bot": bot, "colour": COLOURS[index % len(COLOURS)],
                   "points": " ".join(f"{x(p.order):.1f},{y(p.elo):.1f}"
                                      for p in histories[bot]),
                   "legend_x": MARGIN + 8 + 150 * (index % 4),
                   "legend_y": CHART_HEIGHT - 8 - 14 * (index // 4)}
                  for index, bot in enumerate(bots)],
    }
