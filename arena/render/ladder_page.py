"""The ladder as one self-contained HTML page: the ladder, a chart of each bot's Elo and
interval, per-bot statistics, the pairwise matrix and a chart of running Elo per bot (inline
SVG: no scripts, no files beside it, opens anywhere).

`arena ladder results/NAME --format html > ladder.html`. Numbers come from `arena.stats.ratings`
and the tables from `arena.stats.report`, exactly as the text formats show them.
"""
from __future__ import annotations

import math
from html import escape
from typing import Sequence

from arena.stats.botstats import STATS_NOTES, BotStats
from arena.stats.ratings import Ladder, Outcome, running_elo
from arena.stats.report import (MATRIX_NOTE, ladder_notes, ladder_table, matrix_table, shown_bot,
                          stats_table)

CHART_WIDTH, CHART_HEIGHT, MARGIN = 760, 320, 48
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
td:nth-child(2), th:nth-child(2) { text-align: left; }
.notes { color: #555; font-size: 0.9em; }
"""


def ladder_page(table: Ladder, outcomes: Sequence[Outcome], *, title: str,
                k: float = 16.0, stats: Sequence[BotStats] | None = None) -> str:
    notes = "".join(f"<li>{escape(note)}</li>" for note in ladder_notes(table) if note)
    stats_part = "" if stats is None else (
        f"<h2>Per-bot statistics</h2>\n{stats_table(stats, 'html')}\n<ul class=\"notes\">"
        + "".join(f"<li>{escape(note)}</li>" for note in STATS_NOTES) + "</ul>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{STYLE}</style></head>
<body>
<h1>{escape(title)}</h1>
<p>{len(outcomes)} matches.</p>
{ladder_table(table, "html")}
<ul class="notes">{notes}</ul>
<h2>Elo with {table.confidence:.0%} intervals</h2>
{interval_chart(table)}
{stats_part}
<h2>Pairwise scores</h2>
{matrix_table(table, outcomes, "html")}
<p class="notes">{escape(MATRIX_NOTE)}</p>
<h2>Running Elo (K = {k:g}, in match order)</h2>
{running_elo_chart(table, outcomes, k)}
</body></html>
"""


def interval_chart(table: Ladder) -> str:
    """One row per bot (ladder order): a dot at its Elo and a bar across its interval, on a
    labelled Elo axis. Bots without an interval get the dot alone."""
    rows = [row for row in table.rows if not math.isnan(row.elo)]
    if not rows:
        return "<p>No ratings yet.</p>"
    label_w, row_h = 200, 24
    height = MARGIN + row_h * len(rows) + 40
    spans = [(row.elo - (0 if math.isnan(row.interval) else row.interval),
              row.elo + (0 if math.isnan(row.interval) else row.interval)) for row in rows]
    low, high = min(lo for lo, _ in spans), max(hi for _, hi in spans)
    pad = max((high - low) * 0.05, 10.0)
    low, high = low - pad, high + pad
    inner_w = CHART_WIDTH - label_w - MARGIN

    def x(elo: float) -> float:
        return label_w + (elo - low) / (high - low) * inner_w

    axis_y = MARGIN + row_h * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" height="{height}" '
             'role="img" aria-label="Elo and interval per bot">',
             f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + inner_w}" y2="{axis_y}" '
             'stroke="#888"/>']
    for tick in _ticks(low, high):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{MARGIN - 8}" x2="{x(tick):.1f}" '
                     f'y2="{axis_y}" stroke="#eee"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{axis_y + 14}" font-size="11" '
                     f'text-anchor="middle">{tick:g}</text>')
    parts.append(f'<text x="{label_w + inner_w / 2}" y="{axis_y + 32}" font-size="12" '
                 f'text-anchor="middle">Elo ({table.confidence:.0%} interval)</text>')
    for index, (row, (lo, hi)) in enumerate(zip(rows, spans)):
        colour = COLOURS[index % len(COLOURS)]
        y = MARGIN + row_h * index + row_h / 2 - 8
        parts.append(f'<text x="{label_w - 8}" y="{y + 4}" font-size="12" text-anchor="end">'
                     f'{escape(shown_bot(row.bot))}</text>')
        parts.append(f'<line x1="{x(lo):.1f}" y1="{y}" x2="{x(hi):.1f}" y2="{y}" '
                     f'stroke="{colour}" stroke-width="3"><title>{escape(shown_bot(row.bot))}: '
                     f'{row.elo:.0f} ({lo:.0f} to {hi:.0f})</title></line>')
        parts.append(f'<circle cx="{x(row.elo):.1f}" cy="{y}" r="4" fill="{colour}"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def _ticks(low: float, high: float) -> list[float]:
    """Round Elo values for the axis: about five, at a step of 1, 2 or 5 times a power of 10."""
    raw = (high - low) / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [step * i for i in range(math.ceil(low / step), math.floor(high / step) + 1)]


def running_elo_chart(table: Ladder, outcomes: Sequence[Outcome], k: float) -> str:
    """One line per bot (ladder order, same colours as the legend), Elo against match."""
    histories = running_elo(outcomes, k=k)
    bots = [row.bot for row in table.rows if histories.get(row.bot)]
    points = [point for bot in bots for point in histories[bot]]
    if not points:
        return "<p>No matches yet.</p>"
    first, last = min(p.order for p in points), max(p.order for p in points)
    low, high = min(p.elo for p in points), max(p.elo for p in points)
    span_x, span_y = max(last - first, 1), max(high - low, 1.0)
    inner_w, inner_h = CHART_WIDTH - 2 * MARGIN, CHART_HEIGHT - 2 * MARGIN

    def x(order: int) -> float:
        return MARGIN + (order - first) / span_x * inner_w

    def y(elo: float) -> float:
        return MARGIN + (high - elo) / span_y * inner_h

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" '
             f'height="{CHART_HEIGHT}" role="img" aria-label="running Elo per bot">',
             f'<rect x="{MARGIN}" y="{MARGIN}" width="{inner_w}" height="{inner_h}" '
             'fill="none" stroke="#ccc"/>',
             f'<text x="4" y="{MARGIN + 4}" font-size="11">{high:.0f}</text>',
             f'<text x="4" y="{MARGIN + inner_h}" font-size="11">{low:.0f}</text>',
             f'<text x="{MARGIN}" y="{MARGIN + inner_h + 14}" font-size="11">{first}</text>',
             f'<text x="{MARGIN + inner_w}" y="{MARGIN + inner_h + 14}" font-size="11" '
             f'text-anchor="end">{last}</text>',
             f'<text x="{MARGIN + inner_w / 2}" y="{MARGIN + inner_h + 14}" font-size="12" '
             'text-anchor="middle">match (in schedule order)</text>',
             f'<text x="12" y="{MARGIN + inner_h / 2}" font-size="12" text-anchor="middle" '
             f'transform="rotate(-90 12 {MARGIN + inner_h / 2})">running Elo</text>']
    for index, bot in enumerate(bots):
        colour = COLOURS[index % len(COLOURS)]
        line = " ".join(f"{x(p.order):.1f},{y(p.elo):.1f}" for p in histories[bot])
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                     f'points="{line}"><title>{escape(bot)}</title></polyline>')
        parts.append(f'<text x="{MARGIN + 8 + 150 * (index % 4)}" '
                     f'y="{CHART_HEIGHT - 8 - 14 * (index // 4)}" font-size="12" '
                     f'fill="{colour}">{escape(bot)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
