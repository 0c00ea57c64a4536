"""`arena ladder --format html --output DIR`: the ladder as a site whose bots link to their
matches and whose matches link to their replays, written from a real league (sample bots in
the sandbox, stored in SQLite) and opened in Chromium."""
from __future__ import annotations

import re
import shutil
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import phone, widths
from click.testing import CliRunner
from test_ladder_cli import assert_one_line_error
from test_ladder_page import parse

from arena.cli import main
from arena.league.store import read_records
from arena.render.ladder_site import SITE_MARK, safe_name

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots"
CHATTY = Path(__file__).resolve().parent / "league_bots" / "chatty"   # logs `ply K chose MOVE`
HOSTILE = "../x<script>"
MARKUP = "<b>late</b>"


def cli(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("results") / "spring"
    result = cli("league", "run", "--game", "mandala", "--bot", SAMPLE_BOTS / "greedy",
                 "--bot", SAMPLE_BOTS / "random", "--bot", SAMPLE_BOTS / "first",
                 "--deals", 3, "--seed", 5, "--workers", 2, "--quiet", "--out", folder)
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="module")
def site(league, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sites") / "ladder"
    result = cli("ladder", league, "--format", "html", "--output", out)
    assert result.exit_code == 0, result.output
    assert f"open {out / 'index.html'}" in result.stdout
    return out


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.hrefs += [value for name, value in attrs if name == "href"]


def links_of(page: Path) -> list[str]:
    parser = Links()
    parser.feed(page.read_text())
    return parser.hrefs


def reachable(site: Path) -> set[Path]:
    """Every file reached by following links from index.html; each link must name a file
    inside the site (a missing or outside target fails here)."""
    seen, todo = set(), [site / "index.html"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for href in links_of(page):
            assert not re.match(r"[a-z]+:", href), f"{page.name} links outside: {href}"
            href = href.partition("#")[0]
            if not href:   # a place in the same page: the replay viewer's plies (#ply-K)
                continue
            target = (page.parent / href).resolve()
            assert target.is_relative_to(site.resolve()), f"{href} leaves the site"
            assert target.is_file(), f"{page.relative_to(site)} links to missing {href}"
            if target.suffix == ".html":
                todo.append(target)
    return seen


def html_files(site: Path) -> set[Path]:
    return {path.resolve() for path in site.rglob("*.html")}


# -- file names -------------------------------------------------------------------------------

def test_file_names_are_plain_and_distinct_whatever_a_bot_is_named():
    names = ["greedy@1a2b3c4d", "d0001:greedy,random", HOSTILE, "..", ".", "", "a/b", "a:b",
             "a-b", "a b", "_x", "@x", "javascript:alert(1)", "x" * 300, "x" * 301, "é", "e",
             "a-0123456789ab", "CON", ".hidden"]
    files = [safe_name(name) for name in names]
    assert len(set(files)) == len(names)
    for file in files:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.@-]*", file) and len(file) <= 60, file
    assert safe_name("greedy@1a2b3c4d") == "greedy@1a2b3c4d"   # a plain label stays readable


# -- the site ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_every_link_resolves_and_every_page_is_reached(site, league):
    pages = reachable(site)
    assert pages == html_files(site)
    for page in [site / "index.html", *(site / "bots").iterdir()]:
        parse(page.read_text())     # every element closed, in order
    matches = [match_id for match_id, _ in read_records(league)]
    assert len(list((site / "matches").iterdir())) == len(matches) == 18   # 3 pairs x 3 x 2
    assert len(list((site / "bots").iterdir())) == 3


def test_from_the_ladder_to_a_bot_to_a_match_whose_replay_has_the_moves(browser, site, league):
    records = dict(read_records(league))
    browser.get((site / "index.html").as_uri())
    bot_link = browser.find_element("css selector", "table tbody tr td a")
    assert bot_link.text.startswith("greedy (")     # the best bot, first row
    bot_link.click()
    assert browser.current_url.endswith(".html") and "/bots/greedy@" in browser.current_url
    assert browser.find_element("tag name", "h1").text.startswith("greedy (")
    rows = browser.find_elements("css selector", "table.matches tbody tr")
    assert len(rows) == 12                              # 2 opponents x 3 deals x 2 seats
    match_link = rows[0].find_element("tag name", "a")
    match_id = match_link.text
    match_link.click()
    assert "/matches/" in browser.current_url
    assert browser.execute_script("return document.readyState") == "complete"
    moves = [move for _, move in records[match_id]["moves"]]
    dom = browser.page_source
    assert len(moves) > 10 and moves[0] in dom and moves[-1] in dom
    assert "greedy" in browser.title


@pytest.mark.slow
def test_a_replay_shows_the_bots_log_lines_at_their_ply(browser, tmp_path):
    league = tmp_path / "talk"
    result = cli("league", "run", "--game", "mandala", "--bot", CHATTY, "--bot", "greedy",
                 "--deals", 1, "--seed", 2, "--quiet", "--out", league)
    assert result.exit_code == 0, result.output
    out = tmp_path / "site"
    assert cli("ladder", league, "--format", "html", "--output", out).exit_code == 0
    stored = list(read_records(league))
    assert len(stored) == 2   # chatty in each seat
    for match_id, record in stored:
        seat = record["players"].index("chatty")
        ply, move = next((ply, move) for ply, (mover, move) in enumerate(record["moves"])
                         if mover == seat and ply > 2)
        browser.get(f"{(out / 'matches' / f'{safe_name(match_id)}.html').as_uri()}#ply-{ply}")
        logs = browser.find_element("id", "logs").text
        assert f"log of seat {seat} (chatty" in logs, (match_id, logs)
        assert f"ply {ply} chose {move}" in logs
        assert "chose" not in logs.replace(f"ply {ply} chose {move}", "")   # that act's only


def test_the_pages_fit_a_390_pixel_screen(browser, site):
    bot_page = next((site / "bots").glob("greedy@*.html"))
    with phone(browser):
        for page in (site / "index.html", bot_page):
            browser.get(page.as_uri())
            width, scrolled, _ = widths(browser)
            assert width == 390 and scrolled <= width, (page.name, width, scrolled)


def test_the_stdout_page_is_the_index_without_links(site, league):
    result = cli("ladder", league, "--format", "html", "--output", "-")
    assert result.exit_code == 0, result.output
    index = (site / "index.html").read_text()
    assert re.sub(r'<a href="[^"]*">|</a>', "", index).strip() == result.stdout.strip()


# -- writing it again, and where it may not write -------------------------------------------

def test_writing_again_replaces_the_site_cleanly(league, tmp_path):
    out = tmp_path / "site"
    assert cli("ladder", league, "--format", "html", "--output", out).exit_code == 0
    stale = out / "matches" / "stale.html"
    stale.write_text("from an older league")
    result = cli("ladder", league, "--format", "html", "--output", out)
    assert result.exit_code == 0, result.output
    assert not stale.exists() and (out / SITE_MARK).is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["site"]   # no drafts left


def test_a_folder_of_other_files_is_refused_and_kept(league, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = cli("ladder", league, "--format", "html", "--output", out)
    assert_one_line_error(result, "not written by `arena ladder --output`")
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine"]


def test_output_goes_with_the_html_format_only(league, tmp_path):
    assert_one_line_error(cli("ladder", league, "--output", tmp_path / "site"),
                          "give it with --format html")
    for table in ("--matrix", "--stats", "--history"):   # the page holds them all
        assert_one_line_error(cli("ladder", league, "--format", "html", table),
                              "leave out --matrix, --stats and --history")
    assert not (tmp_path / "site").exists()


def test_merged_leagues_keep_their_match_ids_apart(league, tmp_path):
    again = tmp_path / "again"
    shutil.copytree(league, again)      # the same match ids in a second league
    out = tmp_path / "site"
    result = cli("ladder", league, again, "--format", "html", "--output", out)
    assert result.exit_code == 0, result.output
    assert len(list((out / "matches").iterdir())) == 2 * 18
    assert reachable(out) == html_files(out)


# -- a hostile bot name ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_league(league, tmp_path_factory) -> Path:
    """The league with `random` renamed to HOSTILE in its store (the manifest refuses such a
    name, an older store or another writer might not), and its first match in seat 1 made a
    forfeit whose detail is markup."""
    folder = tmp_path_factory.mktemp("hostile") / "league"
    folder.mkdir()
    shutil.copy(league / "league.sqlite", folder / "league.sqlite")
    with sqlite3.connect(folder / "league.sqlite") as conn:
        conn.execute("UPDATE bots SET name = ? WHERE name = 'random'", (HOSTILE,))
        conn.execute("UPDATE matches SET id = replace(id, 'random', ?), "
                     "bots = replace(bots, '\"random@', ?), "
                     "record = replace(record, '\"random\"', ?)",
                     (HOSTILE, f'"{HOSTILE}@', f'"{HOSTILE}"'))
        forfeited = next(match_id for match_id, bots in conn.execute(
            "SELECT id, bots FROM matches ORDER BY ord") if f'"{HOSTILE}@' in bots.split(",")[1])
        conn.execute("UPDATE matches SET end_kind = 'forfeit', forfeit_seat = 1, "
                     "forfeit_reason = 'timeout', record = json_set(record, '$.result.end', "
                     "'forfeit', '$.result.forfeit', json_object('seat', 1, 'reason', "
                     "'timeout', 'detail', ?)) WHERE id = ?", (MARKUP, forfeited))
    return folder


def test_a_hostile_name_stays_inside_the_site_and_shows_as_text(browser, hostile_league, tmp_path):
    out = tmp_path / "site"
    result = cli("ladder", hostile_league, "--format", "html", "--output", out)
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == ["site"]
    assert not (out.parent / "x<script>").exists()
    assert reachable(out) == html_files(out)
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.@-]*\.html", path.name)
               for path in out.rglob("*.html"))
    browser.get((out / "index.html").as_uri())
    assert browser.execute_script("return document.scripts.length") == 0
    hostile = [link for link in browser.find_elements("css selector", "table a")
               if link.text.startswith(HOSTILE)]
    assert hostile, "the hostile bot is listed by its name, as text"
    hostile[0].click()
    assert browser.current_url.startswith((out / "bots").as_uri())
    assert browser.find_element("tag name", "h1").text.startswith(HOSTILE + " (")
    assert browser.execute_script("return document.scripts.length") == 0
    forfeits = [row.text for row in browser.find_elements("css selector",
                                                           "table.matches tbody tr")
                if "by this bot: timeout at ply" in row.text]
    assert len(forfeits) == 1 and MARKUP in forfeits[0]
    assert browser.execute_script("return document.querySelectorAll('b').length") == 0
