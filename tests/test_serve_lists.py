"""Every list the service shows is paged by cursor, the same on pages and in the API: the
bots (`/bots`, `/api/bots`), a ladder's standings (its page, `/api/ladders/ID`: a cursor
names a place in one fit's ranking, provisional ratings still ranked apart), head to head
pairs, a ladder's retired bots, a bot's versions, an author's bots, and the matches being
played now (a live list on the ladder page). Walked to the end, a list gives each row once
while new rows land; a cursor or limit a hostile reader makes up is refused in one line.

The app runs on a real uvicorn server over a real service database whose matches are
simulated (tests/test_serve_standings.py): many bots at once without sandboxed matches.
"""
from __future__ import annotations

import html
import json
import random
import re
from urllib.parse import quote

import pytest

from arena.keys import LeagueKey
from arena.serve.app import Service, create_app
from arena.serve.db import ServiceDB
from arena.serve.standings import SNAPSHOTS, refit
from arena.serve.uploads import UploadLimits
from browser import phone, settled, widths
from serving import app_server
from test_serve_errors import ask
from test_serve_standings import add_version, play

LADDER = "mandala-2p"
BOTS = 22
"""Bots on the ladder at the start: the first four play many games (established ratings),
the next few a few (provisional), the rest none yet (provisional, listed last)."""


class Lists:
    """The served app, its database, and what it says is being played now."""

    def __init__(self, db: ServiceDB, ladder, url: str, playing: list[dict]):
        self.db, self.ladder, self.url, self.playing = db, ladder, url, playing
        self.added = 0

    def get(self, path: str) -> dict:
        status, body = ask(self.url + path)
        assert status == 200, (path, status, body)
        return json.loads(body)

    def add_bot(self, author: str = "dave") -> str:
        """A new bot with an admitted version (refitted, as the match thread does)."""
        self.added += 1
        name = f"late{self.added}"
        add_version(self.db, LADDER, author, name, f"{0xfeed0000 + self.added:08x}")
        refit(self.db, LADDER)
        return f"{author}/{name}"


@pytest.fixture(scope="module")
def lists(tmp_path_factory):
    db = ServiceDB.open(tmp_path_factory.mktemp("lists") / "data")
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    ids = [add_version(db, LADDER, ("alice", "bob", "carol")[i % 3], f"bot{i:02d}", f"{i:08x}")
           for i in range(BOTS)]
    key, rng = LeagueKey.new(), random.Random(7)
    for _ in range(120):
        play(db, ladder, key, rng.sample(ids[:4], 2), winner_first=rng.random() < 0.5)
    for _ in range(12):
        play(db, ladder, key, rng.sample(ids[3:9], 2))
    with db.transaction() as conn:   # one bot retired: listed apart, after the others
        conn.execute("UPDATE bots SET retired = 1 WHERE name = 'bot05'")
        conn.execute("UPDATE versions SET status = 'retired' WHERE id = ?", (ids[5],))
    refit(db, LADDER)
    playing: list[dict] = []
    app = create_app(Service(db, {ladder.id: ladder}, UploadLimits(), submissions_per_hour=1,
                             on_submission=lambda: None,
                             playing=lambda lid: [m for m in playing if m["ladder"] == lid]))
    with app_server(app) as url:
        yield Lists(db, ladder, url, playing)


def walk(lists: Lists, path: str, rows: str, limit: int, between=lambda page: None,
         cursor_key: str = "next_cursor") -> list[dict]:
    """Every page from the first by `cursor_key`, `between(page)` called after each."""
    pages = [lists.get(f"{path}?limit={limit}")]
    between(pages[-1])
    while pages[-1][cursor_key]:
        pages.append(lists.get(f"{path}?limit={limit}&cursor={quote(pages[-1][cursor_key])}"))
        between(pages[-1])
    assert all(len(page[rows]) == limit for page in pages[:-1])
    return [row for page in pages for row in page[rows]]


def every_bot(lists: Lists) -> list[str]:
    """The bots as the list orders them: playing ones newest first, then retired ones."""
    rows = lists.db.query("SELECT a.name || '/' || b.name FROM bots b JOIN authors a ON "
                          "a.id = b.author_id ORDER BY b.retired IS NULL DESC, b.id DESC")
    return [bot for bot, in rows]


# -- bots -----------------------------------------------------------------------------------

def test_the_api_walks_every_bot_once_while_new_bots_land(lists):
    before = every_bot(lists)
    landed = []
    walked = [bot["bot"] for bot in walk(lists, "/api/bots", "bots", limit=4,
                                         between=lambda page: landed.append(lists.add_bot()))]
    assert walked == before   # each once, none missed; the new ones land above the first
    assert walked[-1] == "carol/bot05"
    assert lists.get("/api/bots?limit=500")["bots"][-1]["retired"].startswith(
        "1970-01-01T00:00:01")
    first = lists.get("/api/bots?limit=1")
    assert first["bots"][0]["bot"] == landed[-1] and first["newer_cursor"] is None
    # Back up from the last page by newer_cursor: the landed bots too, each once.
    last = lists.get(f"/api/bots?limit=4&cursor={quote(first['next_cursor'])}")
    while last["next_cursor"]:
        last = lists.get(f"/api/bots?limit=4&cursor={quote(last['next_cursor'])}")
    pages = [last]
    while pages[-1]["newer_cursor"]:
        pages.append(lists.get(f"/api/bots?limit=4&cursor={quote(pages[-1]['newer_cursor'])}"))
    climbed = [bot["bot"] for page in reversed(pages) for bot in page["bots"]]
    assert climbed == every_bot(lists) and set(landed) <= set(climbed)


def shown_rows(browser, selector: str, attribute: str = "data-bot") -> list[str]:
    from selenium.webdriver.common.by import By
    return [row.get_attribute(attribute) for row in
            browser.find_elements(By.CSS_SELECTOR, selector)]


def follow(browser, start: str, selector: str, link: str) -> list[list[str]]:
    """The rows of each page from `start` on, following the `link` anchors to the end."""
    from selenium.webdriver.common.by import By
    browser.get(start)
    pages = [shown_rows(browser, selector)]
    while found := browser.find_elements(By.CSS_SELECTOR, link):
        found[0].click()
        settled(browser, lambda driver: shown_rows(driver, selector)
                and shown_rows(driver, selector) != pages[-1])
        pages.append(shown_rows(browser, selector))
    return pages


def test_the_bots_page_walks_to_the_last_bot_by_its_older_links(lists, browser):
    from selenium.webdriver.common.by import By
    browser.get(lists.url + "/")
    browser.find_element(By.LINK_TEXT, "Bots").click()
    settled(browser, lambda driver: driver.current_url.endswith("/bots"))
    pages = follow(browser, f"{lists.url}/bots?limit=5", "tr.bot-row", "a.older")
    walked = [bot for page in pages for bot in page]
    assert walked == every_bot(lists) and all(len(page) == 5 for page in pages[:-1])
    assert "retired" in browser.find_element(By.CSS_SELECTOR, 'tr[data-bot="carol/bot05"]').text
    browser.find_element(By.CSS_SELECTOR, "a.newer").click()
    settled(browser, lambda driver: shown_rows(driver, "tr.bot-row") == pages[-2])


# -- standings ------------------------------------------------------------------------------

def ranking(lists: Lists) -> list[dict]:
    return lists.get(f"/api/ladders/{LADDER}?limit=500")["ladder"]


def test_the_api_walks_the_standings_to_the_end_each_row_once(lists):
    full = ranking(lists)
    assert [row["rank"] for row in full] == list(range(1, len(full) + 1))
    tiers = [(row["provisional"], row["games"] == 0) for row in full]
    assert tiers == sorted(tiers) and tiers[0] == (False, False) and tiers[-1] == (True, True)
    assert all(a["elo"] >= b["elo"] for a, b in zip(full, full[1:])
               if (a["provisional"], a["games"] == 0) == (b["provisional"], b["games"] == 0))
    walked = walk(lists, f"/api/ladders/{LADDER}", "ladder", limit=3)
    assert walked == full   # the same rows, ranks and fields as one page of them all
    # A bot admitted meanwhile (not played yet) lands in its place, below the cursor.
    landed = []
    walked = walk(lists, f"/api/ladders/{LADDER}", "ladder", limit=3, between=lambda page:
                  landed.append(lists.add_bot("erin")) if len(landed) < 2 else None)
    bots = [row["bot"].split("@")[0] for row in walked]
    assert len(bots) == len(set(bots)) and set(landed) <= set(bots)
    assert bots == [row["bot"].split("@")[0] for row in ranking(lists)]


def test_a_walk_of_the_standings_keeps_its_fit_while_refits_move_the_ratings(lists):
    key, rng = LeagueKey.new(), random.Random(11)
    ids = [row["version_id"] for row in ranking(lists)[:6]]

    def refit_with_new_results(page: dict) -> None:
        for _ in range(4):
            play(lists.db, lists.ladder, key, rng.sample(ids, 2))
        refit(lists.db, LADDER)

    start = ranking(lists)
    second = lists.get(f"/api/ladders/{LADDER}?limit=3")["next_cursor"]
    walked = walk(lists, f"/api/ladders/{LADDER}", "ladder", limit=3,
                  between=refit_with_new_results)
    assert walked == start   # the ranking as it was when the walk began, each row once
    now = ranking(lists)
    assert now != start   # ... though the ratings moved meanwhile
    # The live page's polls (live=1) read the same place in the latest fit.
    live = lists.get(f"/api/ladders/{LADDER}?limit=3&live=1&cursor={quote(second)}")
    kept = lists.get(f"/api/ladders/{LADDER}?limit=3&cursor={quote(second)}")
    assert kept["ladder"] == start[3:6]
    stamp = lists.get(f"/api/ladders/{LADDER}?limit=3")["next_cursor"].split(",")[0]
    assert live["next_cursor"].split(",")[0] == stamp != second.split(",")[0]
    assert all(row in now for row in live["ladder"])
    # A cursor whose fit is no longer kept goes on from its place in the latest fit.
    old = lists.get(f"/api/ladders/{LADDER}?limit=3")
    for _ in range(SNAPSHOTS + 1):
        refit_with_new_results(old)
        ranking(lists)
    later = lists.get(f"/api/ladders/{LADDER}?limit=3&cursor={quote(old['next_cursor'])}")
    assert len(later["ladder"]) == 3   # the cursors name the latest fit from here on
    assert later["next_cursor"].split(",")[0] != old["next_cursor"].split(",")[0]


def test_the_standings_walk_back_up_by_newer_cursor(lists):
    full = ranking(lists)
    walked = walk(lists, f"/api/ladders/{LADDER}", "ladder", limit=4)
    last = f"/api/ladders/{LADDER}?limit=4&cursor="
    page = lists.get(f"/api/ladders/{LADDER}?limit=4")
    while page["next_cursor"]:
        page = lists.get(last + quote(page["next_cursor"]))
    pages = [page]
    while pages[-1]["newer_cursor"]:
        pages.append(lists.get(last + quote(pages[-1]["newer_cursor"])))
    climbed = [row for page in reversed(pages) for row in page["ladder"]]
    assert climbed == walked == full


@pytest.mark.slow
def test_the_ladder_page_walks_the_standings_by_its_lower_ranks_links(lists, browser):
    from selenium.webdriver.common.by import By
    full = [row["bot"].split("@")[0] for row in ranking(lists)]
    pages = follow(browser, f"{lists.url}/ladders/{LADDER}?standings_limit=4",
                   "tr.ladder-row", "#standings-pager a.older")
    assert [bot for page in pages for bot in page] == full
    assert all(len(page) == 4 for page in pages[:-1]) and len(pages) > 3
    # The ranks go on from page to page; provisional rows keep their heading.
    ranks = [int(cell.text) for cell in browser.find_elements(
        By.CSS_SELECTOR, "tr.ladder-row td:first-child")]
    assert ranks == list(range(len(full) - len(pages[-1]) + 1, len(full) + 1))
    assert browser.find_elements(By.CSS_SELECTOR, "tr.provisional-head")
    # The live script redraws this page (its cursor), not the first: the same rows.
    settled(browser, lambda driver: driver.find_element(
        By.CSS_SELECTOR, "table.ladder").get_attribute("data-updated"))
    assert shown_rows(browser, "tr.ladder-row") == pages[-1]
    browser.find_element(By.CSS_SELECTOR, "#standings-pager a.newer").click()
    settled(browser, lambda driver: shown_rows(driver, "tr.ladder-row") == pages[-2])


def test_the_home_page_shows_the_top_of_each_ladder_and_links_to_the_rest(lists):
    status, body = ask(lists.url + "/")
    rows = re.findall(r'<tr class="ladder-row[^"]*" data-bot="([^"]+)"', body)
    assert status == 200 and len(rows) == 10
    assert rows == [row["bot"].split("@")[0] for row in ranking(lists)][:10]
    assert f'href="/ladders/{LADDER}#standings"' in body
    # An unpaced service says so nowhere on its pages, and `null` in its API.
    assert "paced" not in body and "paced" not in ask(lists.url + f"/ladders/{LADDER}")[1]
    assert lists.get("/api/ladders")["matches_per_minute"] is None


# -- head to head -----------------------------------------------------------------------------

@pytest.mark.parametrize("path", [f"/api/ladders/{LADDER}/head-to-head",
                                  "/api/bots/alice/bot03/head-to-head"])
def test_head_to_head_pairs_are_walked_in_name_order_each_once(lists, path):
    every = lists.get(f"{path}?limit=500")["head_to_head"]
    pairs = [(pair["ladder"], pair["bot"], pair["opponent"]) for pair in every]
    assert len(pairs) >= 3 and pairs == sorted(set(pairs))
    assert walk(lists, path, "head_to_head", limit=2) == every


def test_a_bots_head_to_head_in_its_json_links_the_next_page(lists):
    everyone = lists.get("/api/bots/alice/bot03/head-to-head?limit=500")["head_to_head"]
    shown = lists.get("/api/bots/alice/bot03")
    assert shown["head_to_head"] == everyone[:100] and shown["head_to_head_next"] is None


# -- playing now ------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_matches_being_played_show_in_the_api_and_live_on_the_page(lists, browser):
    from selenium.webdriver.common.by import By
    assert lists.get(f"/api/ladders/{LADDER}")["playing"] == []
    browser.get(f"{lists.url}/ladders/{LADDER}")
    assert browser.find_element(By.ID, "playing-none").is_displayed()
    browser.execute_script("window.loadedOnce = 'this page, not a reload';")
    now = {"id": f"{LADDER}-t99-s0", "ladder": LADDER,
           "bots": ["alice/bot00@00000000", "<b>bob</b>/bot01@00000001"]}
    lists.playing.append(now)
    try:
        assert lists.get(f"/api/ladders/{LADDER}")["playing"] == [now]
        settled(browser, lambda driver: shown_rows(driver, "li.playing-match", "data-id")
                == [now["id"]])
        item = browser.find_element(By.CSS_SELECTOR, "li.playing-match")
        assert "<b>bob</b>/bot01@00000001" in item.text   # a name is text, never markup
        assert not item.find_elements(By.TAG_NAME, "b")
        assert not browser.find_element(By.ID, "playing-none").is_displayed()
        assert browser.execute_script("return window.loadedOnce") == "this page, not a reload"
    finally:
        lists.playing.clear()
    settled(browser, lambda driver: not shown_rows(driver, "li.playing-match", "data-id"))


# -- a bot's versions ----------------------------------------------------------------------------

def test_a_bots_versions_are_paged_newest_first_and_its_history_thinned(lists):
    for number in range(7):   # versions it replaced: listed on its page, not on the ladder
        add_version(lists.db, LADDER, "alice", "bot00", f"{0xbeef0000 + number:08x}",
                    status="retired")
    expected = [version for version, in lists.db.query(
        "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = 'bot00' "
        "ORDER BY v.id DESC")]
    walked = walk(lists, "/api/bots/alice/bot00", "versions", limit=3)
    assert [version["id"] for version in walked] == expected and len(expected) == 8
    # The page's "older versions" links walk the same.
    path, shown = "/bots/alice/bot00?versions_limit=3", []
    while path:
        body = ask(lists.url + path)[1]
        part = body[body.index('id="versions"'):body.index("Rating history")]
        shown += re.findall(r"<tr><td class=\"l\"><code>([0-9a-f]{8})</code>", part)
        older = re.search(r'<a href="([^"]+)" rel="next" class="older">older versions', part)
        path = html.unescape(older.group(1)) if older else None
    assert shown == [version["version"][:8] for version in walked]
    # A long rating history: at most 200 points, evenly spaced, the first and the last kept.
    with lists.db.transaction() as conn:
        conn.executemany("INSERT INTO rating_history VALUES (?, ?, ?, NULL, ?)",
                         [(expected[0], games, games / 10, games) for games in range(1, 1001)])
    history = lists.get("/api/bots/alice/bot00?limit=1")["versions"][0]["history"]
    assert len(history) == 200 and [point["games"] for point in history[:3]] == [1, 6, 11]
    assert history[-1] == {"games": 1000, "elo": 100.0, "interval": None}


def test_an_authors_bots_are_paged_with_their_newest_versions(lists):
    expected = [name for name, in lists.db.query(
        "SELECT b.name FROM bots b JOIN authors a ON a.id = b.author_id WHERE a.name = "
        "'alice' ORDER BY b.retired IS NULL DESC, b.id DESC")]
    path, shown, pages = "/authors/alice?bots_limit=2", [], 0
    while path:
        body = ask(lists.url + path)[1]
        part = body[body.index('id="bots"'):body.index('id="submissions"')]
        names = re.findall(r'<tr class="author-version" data-bot="([^"]+)"', part)
        shown += sorted(set(names), key=names.index)
        if "bot00" in names:   # its 5 newest versions, and a link to them all
            assert names.count("bot00") == 5
            assert re.search(r'href="/bots/alice/bot00#versions">all (\d+) versions', part)
        older = re.search(r'<a href="([^"]+)" rel="next" class="older">older bots', part)
        path, pages = (html.unescape(older.group(1)) if older else None), pages + 1
    assert shown == expected and pages == (len(expected) + 1) // 2


# -- retired bots ------------------------------------------------------------------------------

def test_a_ladders_retired_bots_are_paged_the_last_retired_first(lists):
    with lists.db.transaction() as conn:
        for moment, name in enumerate(("bot10", "bot11", "bot12", "bot13"), start=2):
            conn.execute("UPDATE bots SET retired = ? WHERE name = ?", (moment, name))
            conn.execute("UPDATE versions SET status = 'retired' WHERE bot_id = (SELECT id "
                         "FROM bots WHERE name = ?)", (name,))
    expected = [bot for bot, in lists.db.query(
        "SELECT a.name || '/' || b.name FROM bots b JOIN authors a ON a.id = b.author_id "
        "WHERE b.retired IS NOT NULL ORDER BY b.retired DESC, b.id DESC")]
    walked = walk(lists, f"/api/ladders/{LADDER}/retired", "retired", limit=2)
    assert [bot["bot"] for bot in walked] == expected and len(expected) == 5
    assert walked[-1]["retired"].startswith("1970-01-01T00:00:01")
    summary = lists.get(f"/api/ladders/{LADDER}")
    assert summary["retired_bots"] == expected and summary["retired_bots_next"] is None
    # The ladder page's list, by its "older retired bots" links.
    path, shown = f"/ladders/{LADDER}?retired_limit=2", []
    while path:
        status, body = ask(lists.url + path)
        part = body[body.index('id="retired"'):body.index('id="head-to-head"')]
        shown += re.findall(r'<li data-bot="([^"]+)"', part)
        older = re.search(r'<a href="([^"]+)" rel="next" class="older">older retired', part)
        path = html.unescape(older.group(1)) if older else None
    assert shown == expected


# -- what a hostile reader sends ----------------------------------------------------------------

BAD_CURSORS = ["42", "onan_x", "o1.5", "o1.5_x", "oinf,0,0_1", "o1e999,0,0_1", "o,,_1",
               "o_99999999999999999999999", "x1.0_1", "o0,0,0_" + "9" * 500, "o0,0_1",
               "o1;DROP TABLE bots_1"]
LISTS = [("/api/bots", "cursor"), (f"/api/ladders/{LADDER}", "cursor"),
         (f"/api/ladders/{LADDER}/head-to-head", "cursor"), ("/bots", "cursor"),
         (f"/ladders/{LADDER}", "standings_cursor"), (f"/ladders/{LADDER}", "pairs_cursor"),
         ("/bots/alice/bot00", "pairs_cursor"), ("/api/bots/alice/bot00/head-to-head", "cursor"),
         (f"/ladders/{LADDER}", "retired_cursor"), (f"/api/ladders/{LADDER}/retired", "cursor"),
         ("/bots/alice/bot00", "versions_cursor"), ("/api/bots/alice/bot00", "cursor"),
         ("/authors/alice", "bots_cursor")]


@pytest.mark.parametrize("path, name", LISTS)
def test_made_up_cursors_and_limits_are_refused_in_one_line(lists, path, name):
    limit = name.replace("cursor", "limit")
    refused = 0
    for query in [f"{name}={quote(cursor)}" for cursor in BAD_CURSORS] + [
            f"{limit}=0", f"{limit}=501", f"{limit}=lots", f"{limit}=1e3", f"{limit}=-1"]:
        status, body = ask(f"{lists.url}{path}?{query}")
        if status == 200:   # a cursor that parses names a place: the list goes on from it
            assert "_" in query and "cursor" in query, (path, query)
            continue
        refused += 1
        assert status == 400, (path, query, status)
        if path.startswith("/api/"):
            assert body.count("\n") == 0 and json.loads(body)["error"], (path, query)
        else:
            text = html.unescape(body)
            assert "Traceback" not in text and ("cursor" in text or "limit" in text)
    assert refused >= len(BAD_CURSORS)   # at most a few parse, and the limits never do
    assert lists.get("/api/bots?limit=1")["bots"]   # nothing was dropped


# -- a phone's width ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/bots?limit=5", f"/ladders/{LADDER}?standings_limit=4",
                                  "/bots/alice/bot00?pairs_limit=2", "/"])
def test_the_paged_pages_fit_a_390_pixel_screen(lists, browser, path):
    with phone(browser):
        browser.get(lists.url + path)
        width, scrolled, inner = widths(browser)
    assert width == inner == 390 and scrolled <= inner, (path, width, scrolled, inner)
