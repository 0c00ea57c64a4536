"""`arena serve` end to end: a real service process on a free port with a fresh data folder,
real authors, real submissions (through `arena submit` and through the web form in headless
Chromium), real sandboxed matches, then kill -9 and a restart.

The tests of this module share one service and run in order: the ladder first gets its two
sample bots, then the rest of the module adds bots and authors to it.
"""
from __future__ import annotations

import http.client
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tarfile
import time
import urllib.request
from pathlib import Path

import pytest

from arena import sandbox
from arena.serve.uploads import pack_folder
from browser import settled, sign_in
from serving import PACED, SAMPLES, Service, arena, free_port, make_bot, random_player

SUBMISSIONS_PER_HOUR = 8

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]   # end to end, many seconds each


def started_service(where: Path) -> Service:
    """A service started with a fresh data folder in `where` and two authors, alice and bob
    (their tokens in `tokens`)."""
    running = Service(where / "data", free_port(), where / "serve.log",
                      ["--workers", "1", "--move-time", "0.5", *PACED,
                       "--submissions-per-hour", str(SUBMISSIONS_PER_HOUR)])
    for name in ("alice", "bob"):
        running.add_author(name)
    running.start()
    return running


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = started_service(tmp_path_factory.mktemp("serve"))
    yield running
    running.stop()


def tar_of(entries: list[tarfile.TarInfo], contents: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in entries:
            data = contents.get(entry.name)
            if data is not None:
                entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


# -- the ladder ----------------------------------------------------------------------------------

def test_bots_submitted_by_cli_and_web_form_are_ranked_greedy_above_random(service, browser,
                                                                            tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    done = arena("submit", str(SAMPLES / "greedy"), "--server", service.url, "--token",
                 service.tokens["alice"], "--ladder", "mandala:2", "--wait")
    assert "admitted" in done.stdout

    packed = tmp_path / "random.tar.gz"
    packed.write_bytes(pack_folder(SAMPLES / "random"))
    sign_in(browser, service, "bob")   # the form submits for the signed-in author
    browser.get(service.url + "/submit")
    browser.find_element(By.ID, "bot").send_keys(str(packed))
    browser.find_element(By.ID, "send").click()
    WebDriverWait(browser, 60).until(lambda driver: "/submissions/" in driver.current_url)
    submission = int(browser.current_url.rstrip("/").rsplit("/", 1)[1])
    assert service.verdict(submission, service.tokens["bob"])["status"] == "admitted"
    browser.refresh()
    assert browser.find_element(By.CSS_SELECTOR, ".status").text == "admitted"

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        rows = service.ladder()
        if ([row["bot"] for row in rows] == ["alice/greedy", "bob/random"]
                and rows[0]["interval"] is not None and rows[1]["interval"] is not None
                and rows[0]["elo"] - rows[0]["interval"] > rows[1]["elo"] + rows[1]["interval"]):
            break
        time.sleep(2)
    else:
        raise AssertionError(f"greedy is not yet above random with separate intervals: {rows}")
    assert rows[0]["games"] == rows[1]["games"] > 0
    # The rows are those of `arena ladder --format json`.
    assert {"rank", "bot", "version", "elo", "interval", "games", "score_pct", "wins", "draws",
            "losses", "forfeits", "los_next_pct"} <= set(rows[0])


def test_every_match_plays_a_deal_of_its_own_so_no_version_meets_a_deal_twice(service):
    # Ladder bots are untrusted: a bot's processes may talk through the host, so no deal is
    # played in two seatings (arena.serve.player).
    conn = sqlite3.connect(f"file:{service.data / 'service.sqlite'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT table_no, seed, versions FROM matches").fetchall()
    finally:
        conn.close()
    by_table: dict[int, list] = {}
    for table, seed, versions in rows:
        by_table.setdefault(table, []).append((seed, tuple(json.loads(versions))))
    seeds = [seed for _, seed, _ in rows]
    assert len(set(seeds)) == len(seeds)   # no two matches share a deal
    for games in by_table.values():
        seatings = [seats for _, seats in games]
        assert len(set(seatings)) == len(seatings)   # each seating at most once
        if len(seatings) == 2:
            assert seatings[0] == seatings[1][::-1]


def test_the_deal_key_never_enters_a_bot_folder(service):
    conn = sqlite3.connect(f"file:{service.data / 'service.sqlite'}?mode=ro", uri=True)
    try:
        key = conn.execute("SELECT value FROM secrets WHERE name = 'deal_key'").fetchone()[0]
    finally:
        conn.close()
    for path in (service.data / "bots").rglob("*"):
        assert not path.is_file() or key.encode() not in path.read_bytes()
        assert not os.access(path, os.W_OK) or os.geteuid() == 0
    version = next((service.data / "bots" / "alice" / "greedy").iterdir())
    assert oct(version.stat().st_mode & 0o777) == oct(0o555)


# -- admission ---------------------------------------------------------------------------------

def test_a_broken_bot_is_rejected_with_its_reason_and_log_for_its_author_only(service, browser,
                                                                             tmp_path):
    from selenium.webdriver.common.by import By

    broken = make_bot(tmp_path / "broken", "broken",
                      "import sys\nprint('<script>window.pwned = 1</script> cannot start', "
                      "file=sys.stderr)\nsys.exit(3)\n")
    done = arena("submit", str(broken), "--server", service.url, "--token",
                 service.tokens["alice"], "--wait", check=False)
    assert done.returncode == 1
    assert "rejected" in done.stdout and "crash" in done.stdout
    submission = int(done.stdout.split()[1].rstrip(":"))
    mine = service.get(f"/api/submissions/{submission}", service.tokens["alice"])
    assert mine["status"] == "rejected" and "crash" in mine["reason"]
    assert "<script>window.pwned = 1</script>" in mine["log"]
    theirs = service.get(f"/api/submissions/{submission}", service.tokens["bob"])
    assert theirs["status"] == "rejected" and "reason" not in theirs and "log" not in theirs
    assert str(service.data) not in mine["reason"]

    # The page shows the log escaped: text, not a script.
    sign_in(browser, service, "alice")
    browser.get(f"{service.url}/submissions/{submission}")
    assert browser.find_element(By.CSS_SELECTOR, ".status").text == "rejected"
    assert "<script>window.pwned = 1</script>" in browser.find_element(By.CSS_SELECTOR,
                                                                       "pre.log").text
    assert browser.execute_script("return window.pwned === undefined")
    assert "alice/broken" not in [row["bot"] for row in service.ladder()]


def test_another_authors_token_cannot_see_logs_or_replace_a_bot(service, browser, tmp_path):
    from selenium.webdriver.common.by import By

    alice, bob = service.tokens["alice"], service.tokens["bob"]
    status, body = service.request("/api/bots/alice/greedy/logs", token=bob)
    assert status == 403 and "another author" in json.loads(body)["error"]
    status, _ = service.request("/api/bots/alice/greedy/logs")
    assert status == 401
    assert service.get("/api/bots/alice/greedy/logs", alice)["logs"]

    # Bob's bot named "greedy" is bob/greedy: alice/greedy keeps its admitted version.
    before = service.get("/api/bots/alice/greedy")["versions"]
    impostor = tmp_path / "impostor"
    shutil.copytree(SAMPLES / "greedy", impostor)
    (impostor / "bot.py").write_text((impostor / "bot.py").read_text() + "\n# bob's copy\n")
    status, answer = service.upload(pack_folder(impostor), bob)
    assert status == 202
    assert service.verdict(answer["id"], bob)["status"] == "admitted"
    after = service.get("/api/bots/alice/greedy")["versions"]
    assert [(v["id"], v["version"], v["status"]) for v in after] == [
        (v["id"], v["version"], v["status"]) for v in before]
    assert service.get("/api/bots/bob/greedy")["versions"][0]["status"] == "admitted"
    bots = {bot["bot"]: bot for bot in service.get("/api/bots")["bots"]}
    assert bots["bob/greedy"]["ladders"] == bots["alice/greedy"]["ladders"] == ["mandala-2p"]

    # Pages: bob signed in sees no logs on alice's bot page, alice does.
    sign_in(browser, service, "bob")
    browser.get(service.url + "/bots/alice/greedy")
    assert "Logs" not in browser.find_element(By.TAG_NAME, "main").text
    sign_in(browser, service, "alice")
    browser.get(service.url + "/bots/alice/greedy")
    assert "Logs (only you see these)" in browser.find_element(By.TAG_NAME, "main").text


SNOOP = random_player("""
def attempt(what, action):
    try:
        result = action()
        print(f"snoop: {what}: GOT {result!r}", file=sys.stderr)
    except Exception as error:
        print(f"snoop: {what}: {type(error).__name__}", file=sys.stderr)

attempt("database", lambda: open(DATA + "/service.sqlite", "rb").read(64))
attempt("other bot", lambda: open(OTHER, "rb").read(64))
attempt("plant", lambda: open("/bot/planted.txt", "w").write("x"))
attempt("network", lambda: __import__("socket").create_connection(("127.0.0.1", PORT), 2))
""")


def test_a_hostile_bot_reaches_neither_the_database_nor_other_bots_nor_the_service(service,
                                                                                   tmp_path):
    alice = service.tokens["alice"]
    other = next((service.data / "bots" / "bob" / "random").iterdir()) / "bot.py"
    code = (f"DATA = {str(service.data)!r}\nOTHER = {str(other)!r}\nPORT = {service.port}\n"
            + SNOOP)
    snoop = make_bot(tmp_path / "snoop", "snoop", code)
    status, answer = service.upload(pack_folder(snoop), alice)
    assert status == 202
    verdict = service.verdict(answer["id"], alice)
    assert verdict["status"] == "admitted", verdict
    log = verdict["log"]
    for what in ("database", "other bot", "plant", "network"):
        assert f"snoop: {what}: " in log and f"snoop: {what}: GOT" not in log, log
    assert "snoop: database: FileNotFoundError" in log
    assert not (next((service.data / "bots" / "alice" / "snoop").iterdir())
                / "planted.txt").exists()


def test_a_new_version_replaces_the_old_one_which_keeps_its_history(service, tmp_path):
    alice = service.tokens["alice"]
    first = [v for v in service.get("/api/bots/alice/greedy")["versions"]
             if v["status"] == "admitted"][0]
    changed = tmp_path / "greedy2"
    shutil.copytree(SAMPLES / "greedy", changed)
    (changed / "NOTES.txt").write_text("version 2\n")
    status, answer = service.upload(pack_folder(changed), alice)
    assert status == 202
    assert service.verdict(answer["id"], alice)["status"] == "admitted"
    versions = {v["id"]: v for v in service.get("/api/bots/alice/greedy")["versions"]}
    assert versions[first["id"]]["status"] == "retired"
    assert versions[first["id"]]["games"] >= first["games"] > 0
    assert versions[first["id"]]["history"]
    new_version = answer_version(service, answer["id"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:   # listed from the next refit on
        listed = [row["version_id"] for row in service.ladder() if row["bot"] == "alice/greedy"]
        if listed == [new_version]:
            break
        time.sleep(0.5)
    assert listed == [new_version]
    # The same content again is not a new version.
    status, refused = service.upload(pack_folder(changed), alice)
    assert status == 409 and "already submitted" in refused["error"]


def answer_version(service: Service, submission: int) -> int:
    versions = service.get("/api/bots/alice/greedy")["versions"]
    wanted = service.get(f"/api/submissions/{submission}")["version"]
    return next(v["id"] for v in versions if v["version"] == wanted)


# -- uploads -----------------------------------------------------------------------------------

def test_uploads_with_dotdot_links_or_devices_are_refused_and_leave_nothing(service):
    dave = service.add_author("dave")   # refused uploads count against his hourly limit
    manifest = b'name = "sneaky"\ncommand = ["python3", "bot.py"]\ngames = ["mandala"]\n'

    def file(name: str) -> tarfile.TarInfo:
        return tarfile.TarInfo(name)

    dotdot = tar_of([file("bot.toml"), file("../escaped.txt")],
                    {"bot.toml": manifest, "../escaped.txt": b"out"})
    link = tarfile.TarInfo("bot.py")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    symlink = tar_of([file("bot.toml"), link], {"bot.toml": manifest})
    device = tarfile.TarInfo("null")
    device.type = tarfile.CHRTYPE
    absolute = tar_of([file("bot.toml"), file("/tmp/absolute.txt")],
                      {"bot.toml": manifest, "/tmp/absolute.txt": b"x"})
    refusals = []
    for data, words in ((dotdot, "'..'"), (symlink, "a link"),
                        (tar_of([file("bot.toml"), device], {"bot.toml": manifest}),
                         "a device file"), (absolute, "absolute path"),
                        (b"not a tar at all", "not a gzipped tar")):
        status, answer = service.upload(data, dave)
        assert status == 400, answer
        assert words in answer["error"]
        refusals.append(answer["error"])
    # Each is listed for its author, refused with its reason, and stored nowhere.
    listed = service.get("/api/submissions", dave)["submissions"]
    assert [(s["status"], s["reason"], s["version"]) for s in reversed(listed)] == [
        ("refused", reason, None) for reason in refusals]
    assert not (service.data / "escaped.txt").exists()
    assert not list((service.data / "bots").glob("*/sneaky"))
    assert not list((service.data / "staging").iterdir())


def test_bad_requests_get_one_line_of_json(service):
    alice = service.tokens["alice"]
    status, answer = service.upload(pack_folder(SAMPLES / "first"), "not-a-token")
    assert status == 401 and "token" in answer["error"]
    status, answer = service.upload(pack_folder(SAMPLES / "first"), alice, ladder="chess:2")
    assert status == 404 and "not served" in answer["error"]
    # Over the size cap: refused on its Content-Length, before the body is read.
    conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)
    conn.putrequest("POST", "/api/submissions?ladder=mandala:2")
    conn.putheader("Authorization", f"Bearer {alice}")
    conn.putheader("Content-Length", str(50 * 1024 * 1024))
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413 and "limit" in json.loads(response.read())["error"]
    conn.close()
    for path in ("/api/nothing", "/api/ladders/chess-2p", "/api/matches?limit=lots",
                 "/api/submissions/999999", "/api/bots/nobody/nothing"):
        status, body = service.request(path)
        assert 400 <= status < 500 and body.count(b"\n") <= 1, (path, status, body)
        assert json.loads(body)["error"]


# -- pages -------------------------------------------------------------------------------------

def test_pages_in_chromium(service, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(service.url + "/")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.ladder-row")
    assert {"alice/greedy", "bob/random"} <= {row.get_attribute("data-bot") for row in rows}
    for row in rows:   # a bar wherever the interval is known
        known = row.get_attribute("data-interval") != ""
        bars = row.find_elements(By.CSS_SELECTOR, ".bar .span")
        assert len(bars) == known and all(bar.size["width"] > 0 for bar in bars)
    assert any(row.find_elements(By.CSS_SELECTOR, ".bar .span") for row in rows)

    browser.get(service.url + "/ladders/mandala-2p")
    browser.find_element(By.CSS_SELECTOR, "table.matches a").click()
    WebDriverWait(browser, 30).until(lambda driver: "/matches/" in driver.current_url)
    moves = browser.find_elements(By.CSS_SELECTOR, "table.moves tbody tr")
    assert len(moves) > 10
    # The replay viewer of `arena replay`, stepping through the record in its frame.
    match_url = browser.current_url
    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, "iframe.replay"))
    settled(browser,   # the frame's document loads after the page's
            lambda driver: driver.find_elements(By.ID, "ply-link")
            and driver.find_element(By.ID, "ply-link").text == "ply 0")
    browser.find_element(By.ID, "next").click()
    WebDriverWait(browser, 10).until(
        lambda driver: driver.find_element(By.ID, "ply-link").text == "ply 1")
    assert browser.find_element(By.ID, "table").text
    browser.find_element(By.ID, "last").click()
    assert browser.find_element(By.ID, "result").text
    browser.switch_to.default_content()
    assert browser.current_url == match_url
    browser.find_element(By.CSS_SELECTOR, "table.seats a").click()
    WebDriverWait(browser, 30).until(lambda driver: "/bots/" in driver.current_url)
    assert browser.find_element(By.CSS_SELECTOR, "table.versions")
    browser.get(service.url + "/bots/bob/random")   # played from the start: a long history
    assert len(browser.find_element(By.CSS_SELECTOR, "svg.history polyline")
               .get_attribute("points").split()) >= 2

    browser.get(service.url + "/submit")
    form = browser.find_element(By.ID, "submit-form")
    assert form.get_attribute("enctype") == "multipart/form-data"
    assert [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#ladder option")] == [
        "mandala-2p"]
    browser.get(service.url + "/no/such/page")
    assert "Error 404" in browser.find_element(By.TAG_NAME, "h1").text

    # Pages run no script (the replay viewer its own, inline, in its sandbox; the ladder page
    # the service's /live.js, no inline one), and say so.
    with urllib.request.urlopen(service.url + "/bots/bob/random", timeout=30) as response:
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    with urllib.request.urlopen(service.url + "/ladders/mandala-2p", timeout=30) as response:
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self';" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]


# -- crash and restart -------------------------------------------------------------------------

SLOW_STARTER = random_player("time.sleep(4)   # well inside the 10 s start-up budget")


def test_kill_9_and_restart_keep_every_stored_match_and_go_on(service, tmp_path):
    assert service.process is not None
    # A submission whose check is under way when the service is killed: a bot slow to start.
    slow = make_bot(tmp_path / "slow", "slow", SLOW_STARTER)
    status, answer = service.upload(pack_folder(slow), service.tokens["bob"])
    assert status == 202
    time.sleep(1.0)
    assert service.get(f"/api/submissions/{answer['id']}")["status"] == "checking"
    workers = subprocess.run(["ps", "-o", "pid=", "--ppid", str(service.process.pid)],
                             capture_output=True, text=True).stdout.split()
    before = service.stored_match_ids()
    assert before
    os.kill(service.process.pid, signal.SIGKILL)
    service.process.wait()
    kept = service.stored_match_ids()
    assert before <= kept
    deadline = time.monotonic() + 30
    while any(sandbox.running(int(pid)) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)   # the match workers die with the service
    assert not any(sandbox.running(int(pid)) for pid in workers)

    service.start()
    deadline = time.monotonic() + 120
    while len(service.stored_match_ids()) <= len(kept) and time.monotonic() < deadline:
        time.sleep(1)
    after = service.stored_match_ids()
    assert kept < after
    # The check the kill interrupted is run again after the restart.
    assert service.verdict(answer["id"], service.tokens["bob"])["status"] == "admitted"


def test_submissions_per_author_are_rate_limited(service, tmp_path):
    token = service.add_author("carol")
    statuses = []
    for index in range(SUBMISSIONS_PER_HOUR + 1):
        bot = make_bot(tmp_path / f"bot{index}", f"quick{index}",
                       "import sys\nsys.exit(1)\n")
        statuses.append(service.upload(pack_folder(bot), token))
    assert [status for status, _ in statuses] == [202] * SUBMISSIONS_PER_HOUR + [429]
    assert "try again in" in statuses[-1][1]["error"]
