"""`arena ladder --format html`: one self-contained page with the ladder, the matrix and a
running Elo chart, everything a bot names escaped."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from browser import chromium
from click.testing import CliRunner
from test_ladder_cli import STRENGTH, make_league

from arena.stats.botstats import MatchFacts, bot_stats
from arena.cli import main
from arena.render.ladder_page import ladder_page
from arena.stats.ratings import Outcome, ladder


class Structure(HTMLParser):
    """Counts elements and checks that every opened element is closed, in order."""

    VOID = {"meta", "br", "rect"}

    def __init__(self):
        super().__init__()
        self.open: list[str] = []
        self.counts: dict[str, int] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> Structure:
    structure = Structure()
    structure.feed(page)
    assert structure.open == [], f"left open: {structure.open}"
    return structure


def test_the_page_holds_the_ladder_the_matrix_and_one_line_per_bot(tmp_path):
    league = make_league(tmp_path / "spring")
    result = CliRunner().invoke(main, ["ladder", str(league), "--format", "html"])
    assert result.exit_code == 0, result.output
    page = parse(result.output)
    text = " ".join(page.text)
    assert "Arena ladder: spring (mandala)" in text
    # Ladder, per-bot statistics and matrix; one running-Elo line and one interval per bot.
    assert page.counts["table"] == 3 and page.counts["polyline"] == len(STRENGTH)
    assert page.counts["circle"] == len(STRENGTH)
    assert "Elo (95% interval)" in text and "running Elo" in text
    assert "match (in schedule order)" in text
    # Best first, as in the text table.
    positions = [text.index(f"{name} (") for name in ("greedy", "middle", "random")]
    assert positions == sorted(positions)


def test_what_a_bot_names_is_escaped():
    outcomes = [Outcome(match_id=f"m{i}", order=i, bots=("<script>@1", "plain@2"),
                        ranks=(1, 2) if i % 3 else (2, 1), scores=(1.0, 0.0), deal=f"d{i // 2}")
                for i in range(12)]
    facts = [MatchFacts(o.bots, o.scores, o.ranks, None, None, ((0, 0.01), (1, 0.02)))
             for o in outcomes]
    page = ladder_page(ladder(outcomes), outcomes, title="a <b> title",
                       stats=bot_stats(facts))
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "a &lt;b&gt; title" in page
    parse(page)


@pytest.mark.browser
def test_the_page_opens_in_chromium_with_its_tables_and_charts(tmp_path):
    league = make_league(tmp_path / "summer")
    result = CliRunner().invoke(main, ["ladder", str(league), "--format", "html"])
    page = tmp_path / "ladder.html"
    page.write_text(result.output)
    with chromium() as browser:
        browser.get(page.as_uri())
        assert browser.title == "Arena ladder: summer (mandala)"
        headings = [h.text for h in browser.find_elements("tag name", "h2")]
        assert headings == ["Elo with 95% intervals", "Per-bot statistics", "Pairwise scores",
                            "Running Elo (K = 16, in match order)"]
        first_row = browser.find_element("css selector", "table tbody tr").text
        assert first_row.split()[:2] == ["1", "greedy"]
        charts = browser.find_elements("tag name", "svg")
        assert len(charts) == 2 and all(chart.size["width"] > 500 for chart in charts)
        assert "Elo (95% interval)" in charts[0].text and "greedy (gggggggg)" in charts[0].text
        shot = tmp_path / "ladder.png"
        assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
