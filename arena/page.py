"""The ladder as one self-contained HTML page: the ladder, the pairwise matrix and a chart of
running Elo per bot (inline SVG: no scripts, no files beside it, opens anywhere).

`arena ladder results/NAME --format html > ladder.html`. Numbers come from `arena.ratings`
and the tables from `arena.report`, exactly as the text formats show them.
"""
from __future__ import annotations

from html import escape
from typing import Sequence

from arena.ratings import Ladder, Outcome, running_elo
from arena.report import MATRIX_NOTE, ladder_notes, ladder_table, matrix_table

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
                k: float = 16.0) -> str:
    notes = "".join(f"<li>{escape(note)}</li>" for note in ladder_notes(table) if note)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{STYLE}</style></head>
<body>
<h1>{escape(title)}</h1>
<p>{len(outcomes)} matches.</p>
{ladder_table(table, "html")}
<ul class="notes">{notes}</ul>
<h2>Pairwise scores</h2>
{matrix_table(table, outcomes, "html")}
<p class="notes">{escape(MATRIX_NOTE)}</p>
<h2>Running Elo (K = {k:g}, in match order)</h2>
{running_elo_chart(table, outcomes, k)}
</body></html>
"""


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
             f'<text x="4" y="{MARGIN + inner_h}" font-size="11">{low:.0f}</text>']
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
