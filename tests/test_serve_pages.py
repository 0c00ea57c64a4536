"""The pages people read every day, through a real `arena serve` (uvicorn, SQLite, sandboxed
matches) and headless Chromium: lists paged by cursor (API and pages) while matches keep
landing, a ladder's records exported as JSON Lines that `arena verify` accepts, head to
head tables, author pages that show why a submission was rejected to its author alone, the
live ladder page, and every page at a phone's 390 px (screenshots in pytest's tmp folder).

The tests of this module share one service, which keeps playing greedy (alice), random (bob)
and first (carol) on mandala-2p all along: every list grows while a test walks it.
"""
from __future__ import annotations

import html
import itertools
import json
import re
import sqlite3
import time
import urllib.request

import pytest

from arena.serve.uploads import pack_folder
from browser import phone, settled, sign_in, widths
from serving import PACED, SAMPLES, Service, arena, free_port, make_bot

pytestmark = pytest.mark.sandbox

LADDER = "mandala-2p"
BOTS = (("alice", "greedy"), ("bob", "random"), ("carol", "first"))
PLAYED = 16
"""Matches stored before the tests start: a few pages of a few matches each."""


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    where = tmp_path_factory.mktemp("pages")
    # The default 1 s a move: the machine is shared, and a check timed out at 0.2 s.
    running = Service(where / "data", free_port(), where / "serve.log",
                      ["--workers", "1", "--ladder", "mandala:2", *PACED])
    for name in ("alice", "bob", "carol"):
        running.add_author(name)
    running.start()
    for author, bot in BOTS:
        status, answer = running.upload(pack_folder(SAMPLES / bot), running.tokens[author])
        assert status == 202, answer
        assert running.verdict(answer["id"], running.tokens[author])["status"] == "admitted"
    deadline = time.monotonic() + 240
    while len(running.stored_match_ids()) < PLAYED:
        assert time.monotonic() < deadline, f"fewer than {PLAYED} matches in 240 s"
        time.sleep(1)
    yield running
    running.stop()


def stored(service: Service, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{service.data / 'service.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def newest_first(service: Service, since_id: str | None = None) -> list[str]:
    """The ladder's match ids as the database orders them, newest first, from `since_id`."""
    ids = [row[0] for row in stored(service, "SELECT id FROM matches WHERE ladder = ? "
                                    "ORDER BY stored DESC, id DESC", (LADDER,))]
    return ids[ids.index(since_id):] if since_id else ids


def wait_for_a_new_match(service: Service, count: int) -> None:
    deadline = time.monotonic() + 120
    while len(service.stored_match_ids()) <= count:
        assert time.monotonic() < deadline, "no match landed in 120 s"
        time.sleep(0.5)


# -- pagination ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_api_walks_from_the_newest_match_to_the_first_while_matches_land(service):
    first = service.get(f"/api/matches?ladder={LADDER}&limit=5")
    assert first["newer_cursor"] is None and len(first["matches"]) == 5
    pages = [first]
    wait_for_a_new_match(service, len(service.stored_match_ids()))   # the list grows meanwhile
    while pages[-1]["next_cursor"]:
        pages.append(service.get(f"/api/matches?ladder={LADDER}&limit=5"
                                 f"&cursor={pages[-1]['next_cursor']}"))
    walked = [match["id"] for page in pages for match in page["matches"]]
    assert len(walked) == len(set(walked))   # every match once
    assert walked == newest_first(service, since_id=walked[0])   # ... and none left out
    assert walked[-1] == stored(service, "SELECT id FROM matches ORDER BY stored, id "
                                         "LIMIT 1")[0][0]   # down to the very first match
    assert len(walked) >= PLAYED and all(len(page["matches"]) == 5 for page in pages[:-1])

    # Back up by newer_cursor, from the first match to the newest: the landed ones too.
    back = [pages[-1]]
    while back[-1]["newer_cursor"]:
        back.append(service.get(f"/api/matches?ladder={LADDER}&limit=5"
                                f"&cursor={back[-1]['newer_cursor']}"))
    climbed = [match["id"] for page in reversed(back) for match in page["matches"]]
    assert len(climbed) == len(set(climbed)) and len(climbed) > len(walked)
    assert climbed == newest_first(service, since_id=climbed[0])


def test_a_bots_matches_are_paged_the_same_way(service):
    walked, cursor = [], ""
    while True:
        page = service.get(f"/api/matches?bot=alice/greedy&limit=7&cursor={cursor}")
        walked += [match["id"] for match in page["matches"]]
        if not (cursor := page["next_cursor"]):
            break
    ids = [row[0] for row in stored(
        service, "SELECT DISTINCT m.id FROM matches m JOIN match_seats s ON s.match_id = m.id "
                 "JOIN versions v ON v.id = s.version_id JOIN bots b ON b.id = v.bot_id "
                 "WHERE b.name = 'greedy' ORDER BY m.stored DESC, m.id DESC")]
    assert walked == ids[ids.index(walked[0]):]


@pytest.mark.parametrize("query, words", [
    ("limit=0", "limit must be a whole number from 1 to 500"),
    ("limit=501", "limit must be a whole number from 1 to 500"),
    ("limit=lots", "not 'lots'"),
    ("cursor=42", "is not one this service gave"),
    ("cursor=onan_x", "is not one this service gave"),
    ("cursor=o1.5", "is not one this service gave")])
def test_bad_limits_and_cursors_are_refused_in_one_line(service, query, words):
    for path in ("/api/matches", f"/ladders/{LADDER}", "/bots/alice/greedy"):
        status, body = service.request(f"{path}?{query}")
        assert status == 400, (path, status)
        if path.startswith("/api/"):
            assert body.count(b"\n") == 0 and words in json.loads(body)["error"]
        else:
            text = html.unescape(body.decode())
            assert words in text and "Traceback" not in text


def shown_matches(browser) -> list[str]:
    from selenium.webdriver.common.by import By
    return [link.text for link in
            browser.find_elements(By.CSS_SELECTOR, "table.matches tbody tr td:first-child a")]


@pytest.mark.slow
def test_the_ladder_page_walks_to_the_first_match_by_its_older_links(service, browser):
    from selenium.webdriver.common.by import By

    browser.get(f"{service.url}/ladders/{LADDER}?limit=4")
    assert not browser.find_elements(By.CSS_SELECTOR, "a.newer")
    pages = [shown_matches(browser)]
    wait_for_a_new_match(service, len(service.stored_match_ids()))
    while links := browser.find_elements(By.CSS_SELECTOR, "a.older"):
        links[0].click()
        settled(browser,
                lambda driver: shown_matches(driver) and shown_matches(driver) != pages[-1])
        pages.append(shown_matches(browser))
    walked = [match for page in pages for match in page]
    assert len(walked) == len(set(walked)) >= PLAYED
    assert walked == newest_first(service, since_id=walked[0])
    assert all(len(page) == 4 for page in pages[:-1])
    # The last page links back to newer matches, and only to those.
    browser.find_element(By.CSS_SELECTOR, "a.newer").click()
    settled(browser,
            lambda driver: shown_matches(driver) == pages[-2])


# -- export -------------------------------------------------------------------------------------

def test_the_ladders_export_is_streamed_and_arena_verify_accepts_every_record(service,
                                                                              tmp_path):
    export = tmp_path / f"{LADDER}.jsonl"
    with urllib.request.urlopen(f"{service.url}/api/ladders/{LADDER}/export.jsonl",
                                timeout=120) as answer:
        assert answer.status == 200 and answer.headers["Content-Type"] == "application/jsonl"
        assert answer.headers["Transfer-Encoding"] == "chunked"   # streamed, not held whole
        assert answer.headers["Content-Length"] is None
        export.write_bytes(answer.read())
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    # The records the database holds, oldest first, each with its match id added.
    rows = stored(service, "SELECT id, record FROM matches WHERE ladder = ? "
                           "ORDER BY stored, id", (LADDER,))
    assert len(lines) >= PLAYED and [line["match"] for line in lines] == [
        match_id for match_id, _ in rows[:len(lines)]]
    assert all({key: value for key, value in line.items() if key != "match"} == json.loads(record)
               for line, (_, record) in zip(lines, rows))

    done = arena("verify", str(export), check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(verdicts) == len(lines) and all(verdict["ok"] for verdict in verdicts)
    assert [verdict["match"] for verdict in verdicts] == [line["match"] for line in lines]


def test_the_export_of_an_unknown_ladder_is_a_one_line_404(service):
    status, body = service.request("/api/ladders/chess-2p/export.jsonl")
    assert status == 404 and json.loads(body) == {"error": "no such ladder"}


# -- head to head -------------------------------------------------------------------------------

def stored_head_to_head(service: Service) -> dict[tuple[str, str], tuple[int, float]]:
    """(bot, opponent) -> (games, the bot's points) from the stored matches' ranks."""
    tally: dict[tuple[str, str], list] = {}
    for labels, ranks in stored(service, "SELECT labels, ranks FROM matches WHERE ladder = ?",
                                (LADDER,)):
        bots, ranks = [label.split("@")[0] for label in json.loads(labels)], json.loads(ranks)
        for a, b in itertools.permutations(range(len(bots)), 2):
            games_points = tally.setdefault((bots[a], bots[b]), [0, 0.0])
            games_points[0] += 1
            games_points[1] += 1.0 if ranks[a] < ranks[b] else 0.5 if ranks[a] == ranks[b] else 0
    return {pair: (games, points) for pair, (games, points) in tally.items()}


def shown_pairs(answer: dict) -> dict[tuple[str, str], tuple[int, float]]:
    return {(pair["bot"], pair["opponent"]): (pair["games"], pair["points"])
            for pair in answer["head_to_head"]}


def page_pairs(page: str) -> dict[tuple[str, str], tuple[int, float]]:
    return {(bot, opponent): (int(games), float(points)) for bot, opponent, games, points in
            re.findall(r'<tr class="pair" data-bot="([^"]+)" data-opponent="([^"]+)" '
                       r'data-ladder="[^"]+" data-games="(\d+)" data-points="([\d.]+)"', page)}


def settled_read(service: Service, read):
    """`read()` and the stored matches' head to head, taken while no match landed between."""
    for _ in range(50):
        before = stored_head_to_head(service)
        answer = read()
        if stored_head_to_head(service) == before:
            return answer, before
    raise AssertionError("a match landed during every one of 50 reads")


def test_head_to_head_on_the_ladder_matches_the_stored_matches(service):
    answer, expected = settled_read(service, lambda: service.get(
        f"/api/ladders/{LADDER}/head-to-head"))
    pairs = {pair: result for pair, result in expected.items() if pair[0] < pair[1]}
    assert len(pairs) == 3 and all(games > 0 for games, _ in pairs.values())
    assert shown_pairs(answer) == pairs
    assert all(pair["score_pct"] == round(100 * pair["points"] / pair["games"], 1)
               for pair in answer["head_to_head"])
    page, expected = settled_read(service, lambda: service.request(
        f"/ladders/{LADDER}")[1].decode())
    assert page_pairs(page) == {pair: result for pair, result in expected.items()
                                if pair[0] < pair[1]}
    # The points are the first-named bot's: greedy's, who beats random far more often.
    assert shown_pairs(answer)["alice/greedy", "bob/random"][1] > \
        shown_pairs(answer)["alice/greedy", "bob/random"][0] / 2


def test_head_to_head_on_the_bot_page_is_the_bot_against_each_opponent(service):
    answer, expected = settled_read(service, lambda: service.get("/api/bots/bob/random"))
    mine = {pair: result for pair, result in expected.items() if pair[0] == "bob/random"}
    assert set(mine) == {("bob/random", "alice/greedy"), ("bob/random", "carol/first")}
    assert shown_pairs(answer) == mine
    page, expected = settled_read(service, lambda: service.request(
        "/bots/bob/random")[1].decode())
    assert page_pairs(page) == {pair: result for pair, result in expected.items()
                                if pair[0] == "bob/random"}
    status, body = service.request("/api/ladders/chess-2p/head-to-head")
    assert status == 404 and json.loads(body) == {"error": "no such ladder"}


# -- authors ------------------------------------------------------------------------------------

BROKEN = ("import sys\nprint('SECRET-STRATEGY-NOTE: open with the lotus', file=sys.stderr)\n"
          "sys.exit(3)\n")


@pytest.fixture(scope="module")
def rejected(service, tmp_path_factory) -> dict:
    """A submission of bob's that fails its check, as bob's token sees it (reason, log)."""
    bot = make_bot(tmp_path_factory.mktemp("broken") / "broken", "broken", BROKEN)
    status, answer = service.upload(pack_folder(bot), service.tokens["bob"])
    assert status == 202, answer
    verdict = service.verdict(answer["id"], service.tokens["bob"], timeout=180)
    assert verdict["status"] == "rejected" and verdict["reason"], verdict
    assert "SECRET-STRATEGY-NOTE" in verdict["log"]
    return verdict


def test_an_author_page_lists_bots_versions_and_submissions(service, rejected):
    page = service.request("/authors/bob")[1].decode()
    assert re.findall(r'<tr class="author-version" data-bot="([^"]+)"', page) == [
        "broken", "random"]
    shown = dict(re.findall(r'<tr class="submission" data-id="(\d+)" data-status="(\w+)"',
                            page))
    assert shown == {str(s["id"]): s["status"] for s in
                     service.get("/api/submissions", service.tokens["bob"])["submissions"]}
    assert shown[str(rejected["id"])] == "rejected"
    assert service.request("/authors/nobody")[0] == 404


def test_another_author_or_a_stranger_never_sees_why_a_submission_was_rejected(service,
                                                                               rejected):
    reason, secret = html.escape(rejected["reason"]), "SECRET-STRATEGY-NOTE"
    mine = service.request("/authors/bob", token=service.tokens["bob"])
    assert reason in mine[1].decode()   # bob sees his reasons on his page
    for token in (None, service.tokens["alice"]):
        for path in ("/authors/bob", f"/submissions/{rejected['id']}", "/bots/bob/broken",
                     f"/api/submissions/{rejected['id']}", "/api/bots/bob/broken"):
            status, body = service.request(path, token=token)
            text = body.decode()
            assert status == 200, path
            assert reason not in text and rejected["reason"] not in text, path
            assert secret not in text and service.tokens["bob"] not in text, path
        status, body = service.request("/api/submissions?limit=500", token=token)
        assert status == (401 if token is None else 200)
        assert str(rejected["id"]) not in [str(s["id"]) for s in
                                           json.loads(body).get("submissions", [])]


def test_my_submissions_are_a_click_away_when_signed_in_and_only_mine_show_reasons(
        service, browser, rejected):
    from selenium.webdriver.common.by import By
    sign_in(browser, service, "bob")
    browser.find_element(By.ID, "my-submissions").click()
    settled(browser, lambda driver: driver.current_url.endswith("/authors/bob#submissions"))
    rows = {row.get_attribute("data-id"): row for row in
            browser.find_elements(By.CSS_SELECTOR, "tr.submission")}
    assert rejected["reason"] in rows[str(rejected["id"])].find_element(
        By.CSS_SELECTOR, ".reason").text
    sign_in(browser, service, "alice")
    browser.get(service.url + "/authors/bob")
    assert browser.find_elements(By.CSS_SELECTOR, f'tr.submission[data-id="{rejected["id"]}"]')
    assert not browser.find_elements(By.CSS_SELECTOR, ".reason")
    assert rejected["reason"] not in browser.find_element(By.TAG_NAME, "body").text
    browser.find_element(By.ID, "my-submissions").click()
    settled(browser, lambda driver: driver.current_url.endswith("/authors/alice#submissions"))
    browser.delete_all_cookies()


def test_an_authors_submissions_are_paged_by_cursor_in_the_api(service, rejected):
    token = service.tokens["bob"]
    every = [s["id"] for s in service.get("/api/submissions?limit=500", token)["submissions"]]
    walked, cursor = [], ""
    while True:
        page = service.get(f"/api/submissions?limit=1&cursor={cursor}", token)
        walked += [s["id"] for s in page["submissions"]]
        if not (cursor := page["next_cursor"]):
            break
    assert walked == every and len(every) == 2 and rejected["id"] in every


# -- live standings -------------------------------------------------------------------------------

def shown_games(browser) -> int:
    from selenium.webdriver.common.by import By
    return sum(int(row.get_attribute("data-games"))
               for row in browser.find_elements(By.CSS_SELECTOR, "tr.ladder-row"))


def test_the_ladder_page_shows_new_matches_without_a_reload(service, browser):
    from selenium.webdriver.common.by import By
    browser.get(f"{service.url}/ladders/{LADDER}")
    browser.execute_script("window.loadedOnce = 'this page, not a reload';")
    count, games = int(browser.find_element(By.ID, "match-count").text), shown_games(browser)
    wait_for_a_new_match(service, len(service.stored_match_ids()))
    settled(browser, lambda driver: int(driver.find_element(By.ID, "match-count").text) > count)
    # The same page (its script's variable is still there), its table redrawn from the API.
    assert browser.execute_script("return window.loadedOnce") == "this page, not a reload"
    assert browser.find_element(By.CSS_SELECTOR, "table.ladder").get_attribute("data-updated")
    assert int(browser.find_element(By.ID, "match-count").text) <= len(service.stored_match_ids())
    settled(browser, lambda driver: shown_games(driver) > games)
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.ladder-row")
    assert {row.get_attribute("data-bot") for row in rows} == {
        f"{author}/{bot}" for author, bot in BOTS}
    assert all(row.find_element(By.CSS_SELECTOR, "a").get_attribute("href").endswith(
        "/bots/" + row.get_attribute("data-bot")) for row in rows)


def test_the_match_being_played_shows_on_its_ladder_until_it_is_stored(service):
    deadline = time.monotonic() + 120
    while True:
        # Read before the API answers: a match it shows in play was not stored then, while
        # one read after may be (a mandala match between sample bots takes well under 1 s).
        stored = service.stored_match_ids()
        if playing := service.get(f"/api/ladders/{LADDER}")["playing"]:
            break
        assert time.monotonic() < deadline, "no match in play for 120 s"
        time.sleep(0.2)
    assert len(playing) == 1   # one worker plays one match at a time (the next waits)
    match = playing[0]
    assert match["ladder"] == LADDER and match["id"] not in stored
    assert {label.split("@")[0] for label in match["bots"]} <= {
        f"{author}/{bot}" for author, bot in BOTS} and len(match["bots"]) == 2
    while match["id"] not in service.stored_match_ids():
        assert time.monotonic() < deadline + 120, f"{match['id']} not stored in 120 s"
        time.sleep(0.2)
    assert match["id"] not in [m["id"] for m in
                               service.get(f"/api/ladders/{LADDER}")["playing"]]


def test_a_paced_service_plays_a_minutes_worth_at_once_then_keeps_its_pace(service):
    # --matches-per-minute 60 (PACED): unpaced, these bots play some 20 matches a second.
    deadline = time.monotonic() + 120
    while len(service.stored_match_ids()) < 60:   # the first minute's worth, at once
        assert time.monotonic() < deadline, "fewer than 60 matches in 120 s"
        time.sleep(0.2)
    time.sleep(5)
    # Since the start: 60, one a second more, and one round (2 tables, 2 seatings) begun
    # before the bucket ran dry.
    allowed = 60 + (time.monotonic() - service.started) + 4
    assert len(service.stored_match_ids()) <= allowed
    # Its pages and API say so, for authors who wonder why their bots wait.
    assert service.get("/api/ladders")["matches_per_minute"] == 60
    assert service.get(f"/api/ladders/{LADDER}")["matches_per_minute"] == 60
    for path in ("/", f"/ladders/{LADDER}"):
        page = service.request(path)[1].decode()
        assert "paced: at most 60 matches a minute over all ladders" in page, path


# -- a phone's width ------------------------------------------------------------------------------

PAGES = ["/", f"/ladders/{LADDER}", "/bots", "/bots/alice/greedy", "/authors/bob", "MATCH",
         "MATCH/replay", "SUBMISSION", "/submit", "/login", "/no/such/page"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_fits_a_390_pixel_screen(service, browser, rejected, path,
                                            tmp_path_factory):
    if path.startswith("MATCH"):
        newest = service.get(f"/api/matches?ladder={LADDER}&limit=1")["matches"][0]
        path = path.replace("MATCH", newest["url"])
    path = path.replace("SUBMISSION", f"/submissions/{rejected['id']}")
    sign_in(browser, service, "bob")   # signed in: the header is at its widest
    try:
        with phone(browser):
            browser.get(service.url + path)
            width, scrolled, inner = widths(browser)
            name = path.strip("/").replace("/", "_") or "home"
            shot = tmp_path_factory.mktemp("phone") / f"{name}.png"
            assert browser.save_screenshot(str(shot)), shot
        print(f"{path}: {scrolled} px of {inner}, screenshot {shot}")
        assert width == inner == 390 and scrolled <= inner, (path, width, scrolled, inner)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(shot.read_bytes()[16:20], "big") == 390   # the PNG's width
    finally:
        browser.delete_all_cookies()
