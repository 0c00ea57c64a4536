"""Accounts and honest ladder pages, through a real `arena serve` (uvicorn, SQLite, sandboxed
matches) and headless Chromium: a ladder's time control fixed when it is made, paused ladders,
provisional ratings ranked apart, timestamps, token rotation and retired bots.

The tests of this module share one service; fixtures bring it to what a test starts from (the
authors' bots admitted and playing, one of them retired), so each also runs alone. Its data
folder also holds a
ladder this run does not serve (flowers-2p), with standings written into the database before
the start: a paused ladder keeps them as they are (no match is played on it), and reaching a
53-match rating by playing would take minutes.
"""
from __future__ import annotations

import json
import re
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from arena import sqlite
from arena.serve import db as servedb
from arena.serve.db import ServiceDB
from arena.serve.uploads import pack_folder
from engine import registry
from browser import settled, sign_in
from serving import PACED, SAMPLES, Service, arena, free_port

pytestmark = pytest.mark.sandbox

MOVE_TIME = "0.2"
PAUSED = "flowers-2p"
# (bot, Elo, 95% half-width, matches) on the paused ladder: `lucky` has the best Elo from 2
# matches, `wide` enough matches but a wide interval; only `veteran` is established.
SEEDED = [("lucky", 200.0, 300.0, 2), ("wide", 50.0, 150.0, 40), ("veteran", 10.0, 60.0, 53)]
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
PAGE_UTC = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def seed_paused_ladder(data: Path) -> None:
    """The flowers-2p ladder with three rated versions by carol, as a refit stores them."""
    db = ServiceDB.open(data)
    db.ensure_ladder("flowers", 2, registry.get("flowers").rules(), None)
    records = []
    with db.transaction() as conn:
        author = conn.execute("INSERT INTO authors (name, token_hash, created) VALUES "
                              "('carol', 'not-a-token-hash', 0)").lastrowid
        for rank, (name, elo, interval, games) in enumerate(SEEDED, start=1):
            bot = conn.execute("INSERT INTO bots (author_id, name) VALUES (?, ?)",
                               (author, name)).lastrowid
            version = conn.execute(
                "INSERT INTO versions (bot_id, ladder, version, folder, status, submitted) "
                "VALUES (?, ?, ?, '', 'admitted', ?)",
                (bot, PAUSED, f"{rank:02d}" * 32, time.time())).lastrowid
            conn.execute("INSERT INTO standings VALUES (?, ?, ?, ?, ?)",
                         (version, PAUSED, elo, interval, games))
            records.append({"rank": rank, "bot": f"carol/{name}", "version": f"{rank:02d}" * 4,
                            "elo": elo, "interval": interval, "games": games,
                            "version_id": version})
        conn.execute("UPDATE ladders SET standings = ? WHERE id = ?",
                     (json.dumps({"confidence": 0.95, "deals": 60, "anchor": None,
                                  "virtual_draws": False, "ladder": records}), PAUSED))


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    where = tmp_path_factory.mktemp("accounts")
    running = Service(where / "data", free_port(), where / "serve.log",
                      ["--workers", "1", "--move-time", MOVE_TIME, "--ladder", "mandala:2", *PACED])
    for name in ("alice", "bob"):
        running.add_author(name)
    seed_paused_ladder(running.data)
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def admitted(service) -> dict[str, tuple[dict, dict]]:
    """alice/random and bob/greedy submitted and admitted, and a match stored on their
    ladder; per author, the upload's answer and its verdict."""
    submitted = {}
    for author, bot in (("alice", "random"), ("bob", "greedy")):
        status, answer = service.upload(pack_folder(SAMPLES / bot), service.tokens[author])
        assert status == 202, answer
        submitted[author] = answer, service.verdict(answer["id"], service.tokens[author])
    deadline = time.monotonic() + 180
    while not service.get("/api/matches?ladder=mandala-2p")["matches"]:
        assert time.monotonic() < deadline, "no match played in 180 s"
        time.sleep(1)
    return submitted


@pytest.fixture
def alice_random_retired(service, admitted) -> None:
    """alice/random retired: by the test of its page when that ran first, else here, by the
    form of its page."""
    if not service.get("/api/bots/alice/random")["retired"]:
        service.request("/bots/alice/random/retire",
                        data=f"token={service.tokens['alice']}".encode(), method="POST",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert service.get("/api/bots/alice/random")["retired"]


def stored_time_controls(data: Path) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{data / 'service.sqlite'}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT id, time_control FROM ladders"))
    finally:
        conn.close()


def one_line_refusal(done, *words: str) -> None:
    """A refusal as the CLI must give it: non-zero, one line, no traceback."""
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]


# -- time control -------------------------------------------------------------------------------

def test_every_ladder_shows_its_time_control(service):
    for path in ("/", "/ladders/mandala-2p"):
        status, body = service.request(path)
        assert status == 200 and "0.2 s per move" in body.decode(), path
    status, body = service.request(f"/ladders/{PAUSED}")
    assert "1 s per move" in body.decode()   # made with the default one
    summary = {ladder["id"]: ladder for ladder in service.get("/api/ladders")["ladders"]}
    assert summary["mandala-2p"]["time_control"]["move_time"] == 0.2
    assert summary["mandala-2p"]["time_control_text"].startswith("0.2 s per move")


@pytest.mark.parametrize("options, asked", [(["--move-time", "0.5"], "0.5 s per move"),
                                            (["--tc", "10+0.1"], "bank 10 s"),
                                            (["--startup-time", "3"], "start-up 3 s")])
def test_another_time_control_for_an_existing_ladder_is_refused(service, options, asked):
    before = stored_time_controls(service.data)
    done = arena("serve", "--data", str(service.data), "--port", str(free_port()),
                 "--ladder", "mandala:2", *options, check=False, timeout=120)
    one_line_refusal(done, "mandala-2p", "0.2 s per move", asked, "--data")
    assert stored_time_controls(service.data) == before


def test_a_refused_start_makes_no_new_ladder_either(service):
    done = arena("serve", "--data", str(service.data), "--port", str(free_port()),
                 "--ladder", "flowers-mandala:2", "--ladder", "mandala:2", "--move-time", "0.5",
                 check=False, timeout=120)
    one_line_refusal(done, "mandala-2p")
    assert "flowers-mandala-2p" not in stored_time_controls(service.data)


def test_a_restart_without_time_options_keeps_the_stored_time_control(service):
    db = ServiceDB.open(service.data)
    ladder = db.ensure_ladder("mandala", 2, registry.get("mandala").rules(), None)
    assert ladder.time_control["move_time"] == 0.2


# -- paused ladders and provisional ratings ----------------------------------------------------

def test_a_ladder_not_served_in_this_run_is_paused(service):
    summary = {ladder["id"]: ladder for ladder in service.get("/api/ladders")["ladders"]}
    assert summary[PAUSED]["paused"] is True and summary["mandala-2p"]["paused"] is False
    assert service.get(f"/api/ladders/{PAUSED}")["paused"] is True
    home = service.request("/")[1].decode()
    paused_part = home[home.index(f'href="/ladders/{PAUSED}"'):]
    assert "paused" in paused_part.split("<table")[0]
    assert "live" in home[home.index('href="/ladders/mandala-2p"'):].split("<table")[0]


def test_provisional_ratings_are_marked_and_ranked_below_established_ones(service):
    rows = service.get(f"/api/ladders/{PAUSED}")["ladder"]
    assert [(row["bot"], row["rank"], row["provisional"]) for row in rows] == [
        ("carol/veteran", 1, False), ("carol/lucky", 2, True), ("carol/wide", 3, True)]


def test_ladder_page_on_a_phone_wide_window(service, browser):
    from selenium.webdriver.common.by import By
    browser.set_window_size(390, 900)
    try:
        browser.get(service.url + f"/ladders/{PAUSED}")
        rows = browser.find_elements(By.CSS_SELECTOR, "tr.ladder-row")
        assert [row.get_attribute("data-bot") for row in rows] == [
            "carol/veteran", "carol/lucky", "carol/wide"]
        assert [row.get_attribute("data-provisional") for row in rows] == ["no", "yes", "yes"]
        assert len(browser.find_elements(By.CSS_SELECTOR, "tr.provisional .provisional-mark")) == 2
        note = browser.find_element(By.CSS_SELECTOR, ".provisional-note").text
        assert "fewer than 30 matches" in note and "± 100 Elo" in note
        assert "paused" in browser.find_element(By.CSS_SELECTOR, ".state").text
        assert browser.execute_script("return document.documentElement.clientWidth") <= 400
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    finally:
        browser.set_window_size(1280, 1600)


# -- bots, timestamps ----------------------------------------------------------------------------

def test_submissions_versions_and_matches_show_when_they_happened(service, admitted):
    for author, (answer, verdict) in admitted.items():
        assert verdict["status"] == "admitted", verdict
        assert ISO_UTC.fullmatch(verdict["created"]) and ISO_UTC.fullmatch(verdict["decided"])
        assert verdict["created"] <= verdict["decided"]
        page = service.request(f"/submissions/{answer['id']}", token=service.tokens[author])[1]
        assert len(PAGE_UTC.findall(page.decode())) == 2   # submitted and decided
    played = service.get("/api/matches?ladder=mandala-2p")["matches"][0]
    assert ISO_UTC.fullmatch(played["started"]) and ISO_UTC.fullmatch(played["stored"])
    stored = datetime.fromisoformat(played["stored"])
    assert abs((datetime.now(timezone.utc) - stored).total_seconds()) < 300
    match_page = service.request(played["url"])[1].decode()
    assert stored.strftime("%Y-%m-%d %H:%M UTC") in match_page
    ladder_page = service.request("/ladders/mandala-2p")[1].decode()
    assert stored.strftime("%Y-%m-%d %H:%M UTC") in ladder_page
    version = service.get("/api/bots/alice/random")["versions"][0]
    assert ISO_UTC.fullmatch(version["submitted"])
    bot_page = service.request("/bots/alice/random")[1].decode()
    assert datetime.fromisoformat(version["submitted"]).strftime("%Y-%m-%d %H:%M UTC") \
        in bot_page


# -- accounts ------------------------------------------------------------------------------------

def test_a_rotated_token_works_and_the_old_one_stops_at_once(service, admitted):
    old = service.tokens["bob"]
    assert service.request("/api/submissions", token=old)[0] == 200
    new = arena("author", "rotate-token", "bob", "--data", str(service.data)).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", new) and new != old
    status, body = service.request("/api/submissions", token=old)
    assert status == 401 and json.loads(body)["error"]
    assert service.get("/api/submissions", token=new)["submissions"]
    service.tokens["bob"] = new


@pytest.mark.parametrize("args, words", [
    (["author", "rotate-token", "nobody"], ["no author 'nobody'"]),
    (["author", "retire-bot", "alice", "nobot"], ["no bot 'nobot'"]),
    (["author", "retire-bot", "bob", "random"], ["author 'bob' has no bot 'random'"]),
])
def test_account_commands_refuse_unknown_names_in_one_line(service, args, words):
    one_line_refusal(arena(*args, "--data", str(service.data), check=False), *words)


def test_account_commands_refuse_a_folder_without_a_service(tmp_path):
    for args in (["rotate-token", "alice"], ["retire-bot", "alice", "random"]):
        done = arena("author", *args, "--data", str(tmp_path / "nothing"), check=False)
        one_line_refusal(done, "no service database", "--data")
        assert not (tmp_path / "nothing").exists()


def test_an_author_cannot_retire_another_authors_bot(service, browser, admitted):
    from selenium.webdriver.common.by import By
    sign_in(browser, service, "bob")
    browser.get(service.url + "/bots/alice/random")
    assert not browser.find_elements(By.ID, "retire-form")   # not bob's bot: no form
    # Nor by posting the form anyway, with bob's cookie or bob's token.
    for headers, data in (({"Cookie": f"arena_token={service.tokens['bob']}"}, b""),
                          ({}, f"token={service.tokens['bob']}".encode())):
        status, body = service.request("/bots/alice/random/retire", data=data, method="POST",
                                       headers={**headers, "Content-Type":
                                                "application/x-www-form-urlencoded"})
        assert status == 403 and b"another author" in body, (status, body)
    status, _ = service.request("/bots/alice/random/retire", data=b"", method="POST",
                                headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 401
    assert service.get("/api/bots/alice/random")["retired"] is None


def matches_of(service: Service, bot: str) -> int:
    return len(service.get(f"/api/matches?bot={bot}&limit=500")["matches"])


def test_its_author_retires_a_bot_from_its_page_and_it_plays_no_more(service, browser,
                                                                    admitted):
    from selenium.webdriver.common.by import By
    played = matches_of(service, "alice/random")
    assert played > 0
    sign_in(browser, service, "alice")
    browser.get(service.url + "/bots/alice/random")
    browser.find_element(By.ID, "retire").click()
    settled(browser, lambda driver: "Retired" in driver.find_element(By.ID, "retired").text)
    assert not browser.find_elements(By.ID, "retire-form")
    answer = service.get("/api/bots/alice/random")
    assert ISO_UTC.fullmatch(answer["retired"])
    assert [version["status"] for version in answer["versions"]] == ["retired"]
    assert answer["versions"][0]["history"], "its rating history stays"

    time.sleep(5)   # a match being played when it was retired may still land
    landed = matches_of(service, "alice/random")
    assert landed >= played
    time.sleep(4)   # several matches' time: the ladder played them back to back before
    assert matches_of(service, "alice/random") == landed   # scheduled no more
    assert [row["bot"] for row in service.ladder()] == ["bob/greedy"]
    ladder_page = service.request("/ladders/mandala-2p")[1].decode()
    retired_part = ladder_page[ladder_page.index("Retired bots"):]
    assert "alice/random" in retired_part
    bots = service.get("/api/bots")["bots"]
    assert bots[-1]["bot"] == "alice/random" and bots[-1]["retired"]   # listed apart, last


def test_a_retired_bot_submitted_again_is_refused_in_one_line(service, alice_random_retired):
    done = arena("submit", str(SAMPLES / "random"), "--server", service.url, "--token",
                 service.tokens["alice"], "--ladder", "mandala:2", check=False)
    one_line_refusal(done, "alice/random is retired", "another name")


def test_retiring_a_retired_bot_from_its_page_answers_409_in_one_line(service,
                                                                     alice_random_retired):
    # The shared error handlers turn the author's impossible request into a conflict.
    status, body = service.request(
        "/bots/alice/random/retire", data=f"token={service.tokens['alice']}".encode(),
        method="POST", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 409 and b"alice/random is already retired" in body, (status, body)
    assert b"Traceback" not in body
    assert service.get("/api/bots/alice/random")["retired"]


def test_retire_bot_on_the_command_line(service, admitted):
    done = arena("author", "retire-bot", "bob", "greedy", "--data", str(service.data))
    assert done.stdout.strip() == "bob/greedy is retired"
    assert service.get("/api/bots/bob/greedy")["retired"]
    assert "Retired" in service.request("/bots/bob/greedy")[1].decode()
    one_line_refusal(arena("author", "retire-bot", "bob", "greedy", "--data",
                           str(service.data), check=False), "already retired")


# -- old databases -------------------------------------------------------------------------------

def test_a_schema_1_database_is_upgraded_and_keeps_its_rows(tmp_path):
    old_tables = servedb._SCHEMA.replace(servedb._HEAD_TO_HEAD, "").replace(
        "    retired   REAL,                     -- when its author retired it: no more matches\n",
        "").replace(
        ",\n    node           TEXT                 -- the Ray node that played it (NULL: "
        "this machine)\n", "\n")
    assert "retired" not in old_tables.split("CREATE TABLE versions")[0]
    assert "node" not in old_tables
    old_kind = sqlite.Kind(servedb.APP, 1, (1,), old_tables, "arena service database", "",
                           servedb.ServiceDBError)
    def fill(conn) -> None:
        conn.execute("INSERT INTO authors (name, token_hash, created) VALUES ('ann', 'h', 1)")
        conn.executemany("INSERT INTO pairs VALUES ('mandala-2p', ?, ?, ?, ?)",
                         [(0, 1, 2, 1.0), (1, 2, 1, 0.5), (2, 1, 2, 0.0), (3, 1, 3, 1.0)])
    sqlite.create(tmp_path / servedb.DB_NAME, old_kind, fill)
    db = ServiceDB.open(tmp_path)
    assert sqlite.marker(db.connection()) == (servedb.APP, servedb.SCHEMA_VERSION)
    assert db.query("SELECT name FROM authors") == [("ann",)]
    assert db.query("SELECT retired FROM bots") == []   # the column is there
    assert db.query("SELECT node FROM matches") == []   # and schema 4's
    # The head-to-head totals are made from the pairs already stored.
    assert sorted(db.query("SELECT first, second, games, points FROM head_to_head")) == [
        (1, 2, 2, 1.0), (1, 3, 1, 1.0), (2, 1, 1, 0.5)]


# -- provisional, as a rule ----------------------------------------------------------------------

def test_provisional_means_few_matches_or_a_wide_interval():
    from arena.serve.views import PROVISIONAL_INTERVAL, PROVISIONAL_MATCHES, is_provisional
    assert is_provisional(PROVISIONAL_MATCHES - 1, 10.0)
    assert is_provisional(PROVISIONAL_MATCHES, PROVISIONAL_INTERVAL + 1)
    assert is_provisional(500, None)
    assert not is_provisional(PROVISIONAL_MATCHES, PROVISIONAL_INTERVAL)


def test_provisional_rows_move_below_and_los_next_stays_only_between_true_neighbours():
    from arena.serve.views import provisional_apart
    fit_order = [{"bot": "a/new", "games": 2, "interval": 400.0, "los_next_pct": 70.0,
                  "elo": 90.0, "version_id": 3},
                 {"bot": "b/old", "games": 90, "interval": 40.0, "los_next_pct": 80.0,
                  "elo": 20.0, "version_id": 1},
                 {"bot": "c/old", "games": 90, "interval": 45.0, "los_next_pct": None,
                  "elo": -10.0, "version_id": 2}]
    rows = provisional_apart(fit_order)
    assert [(row["rank"], row["bot"], row["provisional"], row["los_next_pct"]) for row in rows] \
        == [(1, "b/old", False, 80.0), (2, "c/old", False, None), (3, "a/new", True, None)]


def test_a_bot_retired_while_its_version_is_checked_is_not_admitted(tmp_path):
    from arena.serve.admission import Verdict, decide
    from arena.serve.authors import add_author, retire_bot
    db = ServiceDB.open(tmp_path)
    db.ensure_ladder("mandala", 2, registry.get("mandala").rules(), None)
    add_author(db, "ann")
    with db.transaction() as conn:
        conn.execute("INSERT INTO bots (author_id, name) VALUES (1, 'late')")
        conn.execute("INSERT INTO versions (bot_id, ladder, version, folder, status, "
                     "submitted) VALUES (1, 'mandala-2p', 'ab', '', 'checking', 0)")
        conn.execute("INSERT INTO submissions (author_id, ladder, bot_name, version_id, "
                     "status, created) VALUES (1, 'mandala-2p', 'late', 1, 'checking', 0)")
    retire_bot(db, "ann", "late")
    decide(db, 1, db.version(1), Verdict(True, "", ""))
    assert db.version(1).status == "retired" and db.admitted("mandala-2p") == []
    assert db.one("SELECT status FROM submissions WHERE id = 1") == ("admitted",)
