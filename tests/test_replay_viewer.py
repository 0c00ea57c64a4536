"""The replay viewer in real headless Chromium, for each game: matches played by `arena play`
with a sandboxed bot that logs (tests/league_bots/chatty: `ply K chose MOVE` at each act, and
forged arena lines), replayed by `arena replay --format html --logs`. At a decision the page
draws the seat's cards, lists the engine's legal moves with the played one marked and shows
that act's log lines; a forfeit is marked at its ply; `#ply-K` opens at K, the keys step; a
390 px window needs no sideways scrolling; cards are drawn in their colours; a page stays
small. Screenshots go to each test's tmp_path."""
from __future__ import annotations

import colorsys
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser import chromium, phone, widths

from arena.actlogs import BEFORE_FIRST_ACT, match_logs, split_log
from arena.match import StrategySeat, play_match
from arena.render.replay import render_replay_html, steps
from arena.sandbox import log_lines
from engine import records
from engine.games.flowers_scoring import COLOUR_NAME

ROOT = Path(__file__).resolve().parent.parent
CHATTY = ROOT / "tests" / "league_bots" / "chatty"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
GAMES = ["mandala", "flowers-mandala", "flowers"]
HOSTILE = '</script><script>window.pwned = 1</script><b id="bold">x</b>'

pytestmark = pytest.mark.sandbox


def arena(*args) -> subprocess.CompletedProcess:
    done = subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


# One game in the quick selection, all three in the full suite.
@pytest.fixture(scope="module", params=[
    pytest.param(game, marks=() if game == "mandala" else pytest.mark.slow) for game in GAMES])
def played(request, tmp_path_factory) -> tuple[dict, Path, Path]:
    """A match of two sandboxed chatty bots: its record, its logs folder, and the page
    `arena replay RECORD --format html --logs FOLDER` made of them."""
    folder = tmp_path_factory.mktemp(request.param)
    record = folder / "match.json"
    arena("play", request.param, "--bot", CHATTY, "--bot", CHATTY, "--seed", 7,
          "--record", record, "--quiet")
    page = folder / "replay.html"
    page.write_text(arena("replay", record, "--format", "html", "--logs",
                          folder / "match.logs").stdout)
    return json.loads(record.read_text()), folder / "match.logs", page


def positions(record: dict) -> list:
    """The state before each record entry, and after the last one."""
    return [step.state for step in steps(record)]


def decision(record: dict) -> int:
    """A ply where a seat chose among several moves, past the first few."""
    states = positions(record)
    return next(ply for ply, (seat, _) in enumerate(record["moves"])
                if ply > 4 and isinstance(seat, int) and len(states[ply].legal_moves()) > 1)


def shown_cards(browser, game: str, seat: int) -> int:
    selector = f"#seat-{seat} .garden .card" if game == "flowers" else f"#seat-{seat} .card.hand"
    return len(browser.find_elements("css selector", selector))


def engine_cards(game: str, state, seat: int) -> int:
    """Cards the engine says the seat holds (flowers: the cells of its garden)."""
    observation = state.observation(seat)
    return (len(observation["gardens"][seat]["cells"]) if game == "flowers"
            else len(observation["hand"]))


@pytest.mark.slow
def test_at_a_decision_the_viewer_shows_cards_legal_moves_and_that_acts_log(browser, played,
                                                                             tmp_path):
    record, _logs, page = played
    game = record["game"]
    ply = decision(record)
    state = positions(record)[ply]
    seat, move = record["moves"][ply]
    browser.get(f"{page.as_uri()}#ply-{ply}")
    assert browser.find_element("id", "ply-link").text == f"ply {ply}"
    for each in range(len(record["players"])):
        assert shown_cards(browser, game, each) == engine_cards(game, state, each) > 0
    legal = [item.text for item in browser.find_elements("css selector", "#legal li")]
    assert legal == state.legal_moves()
    played_move, = browser.find_elements("css selector", "#legal li.played")
    assert played_move.text == move
    logs = browser.find_element("id", "logs").text
    assert f"log of seat {seat} (chatty" in logs and f"ply {ply} chose {move}" in logs
    assert f"tail of {ply}" in logs   # the unfinished line, ended by the next act
    assert "ply 999; process 1.1 ==" in logs   # the forged line: the bot's own text
    assert "chose" not in logs.replace(f"ply {ply} chose {move}", "")   # only this act
    assert browser.save_screenshot(str(tmp_path / f"{game}-decision.png"))
    # The keys step; Home and End jump.
    body = browser.find_element("tag name", "body")
    body.send_keys("\ue014")   # ArrowRight
    assert browser.find_element("id", "ply-link").text == f"ply {ply + 1}"
    body.send_keys("\ue012", "\ue012")   # ArrowLeft twice
    assert browser.find_element("id", "ply-link").text == f"ply {ply - 1}"
    body.send_keys("\ue011")   # Home
    assert browser.find_element("id", "ply-link").text == "ply 0"
    body.send_keys("\ue010")   # End
    last = len(record["moves"])
    assert browser.find_element("id", "ply-link").text == f"ply {last}"
    assert browser.current_url.endswith(f"#ply-{last}")
    assert browser.find_element("id", "final").text.strip() == \
        positions(record)[-1].render_result().strip()


def test_each_log_line_is_attributed_to_the_act_that_printed_it(played):
    record, logs, _page = played
    found = match_logs(sorted(logs.glob("*.log")), "play seed 7")
    assert set(found) == {0, 1}
    for seat, plies in found.items():
        decided = {ply for ply, (mover, _) in enumerate(record["moves"]) if mover == seat}
        assert set(plies) - {BEFORE_FIRST_ACT} == decided   # no ply 999: the forgeries
        for ply in sorted(decided):
            # The bot reads its NewMatch when first thawed: its lines come with its first act.
            hello = ["hello before the first act"] if ply == min(decided) else []
            forged = f"== arena: match m{seat + 1} ply 999; process 1.1 =="
            assert plies[ply] == hello + [f"ply {ply} chose {record['moves'][ply][1]}", forged,
                                          f"note\\x0d{forged}", f"tail of {ply}"]
    # The forged lines are in the log as the bot's, behind its process tag.
    lines = log_lines(next(logs.glob("*.log")))
    assert all(line.startswith("== arena: match play seed 7") for line in lines
               if line.startswith("== arena:"))
    assert 999 not in {ply for plies in split_log(lines).values() for ply in plies}


def test_a_forfeit_is_marked_at_its_ply(browser, played, tmp_path):
    record, logs, _page = played
    game = record["game"]
    ply = decision(record)
    seat = record["moves"][ply][0]
    forfeited = dict(record, moves=record["moves"][:ply], times=record["times"][:ply],
                     cpu_times=record["cpu_times"][:ply],
                     result=records.forfeit_result(len(record["players"]), seat, "timeout",
                                                   "no move within 0.500 s"))
    page = tmp_path / "forfeit.html"
    page.write_text(render_replay_html(forfeited, logs=match_logs(sorted(logs.glob("*.log")),
                                                                  "play seed 7")))
    browser.get(f"{page.as_uri()}#ply-{ply - 1}")
    assert not browser.find_element("id", "forfeit").is_displayed()
    browser.find_element("tag name", "body").send_keys("\ue010")   # End
    marker = browser.find_element("id", "forfeit")
    assert marker.is_displayed() and marker.text == (
        f"Forfeit at ply {ply}: seat {seat} (chatty ({record['bots'][seat]['version'][:8]}))"
        " (timeout): no move within 0.500 s")
    legal = [item.text for item in browser.find_elements("css selector", "#legal li")]
    assert legal == positions(forfeited)[-1].legal_moves()
    assert browser.find_elements("css selector", "#legal li.played") == []
    assert "to decide" in browser.find_element("id", "what").text
    assert browser.save_screenshot(str(tmp_path / f"{game}-forfeit.png"))


def test_a_390_px_window_needs_no_sideways_scrolling(browser, played, tmp_path):
    record, _logs, page = played
    with phone(browser):
        for ply in (0, decision(record), len(record["moves"])):
            browser.get(f"{page.as_uri()}#ply-{ply}")
            assert browser.find_element("id", "ply-link").text == f"ply {ply}"
            width, scrolled, _ = widths(browser)
            assert width == 390 and scrolled <= width, (ply, width, scrolled)
        assert browser.save_screenshot(str(tmp_path / f"{record['game']}-390px.png"))


HUES = {"red": (345, 15), "orange": (15, 42), "yellow": (42, 70), "green": (70, 170),
        "blue": (170, 260), "purple": (260, 345)}   # degrees, as a person names colours


def colour_name(css: str) -> str:
    """The name a person gives a computed CSS colour (`rgb(r, g, b)` or `rgba(...)`)."""
    red, green, blue, *alpha = (float(number) for number in re.findall(r"[\d.]+", css))
    if alpha and alpha[0] == 0:
        return "none"   # transparent: no colour drawn at all
    hue, saturation, value = colorsys.rgb_to_hsv(red / 255, green / 255, blue / 255)
    if value < 0.25:
        return "black"
    if saturation < 0.25:
        return "grey"
    degrees = hue * 360
    return next(name for name, (low, high) in HUES.items()
                if (low <= degrees < high) or (low > high and (degrees >= low or degrees < high)))


def held_colours(game: str, state, seat: int) -> tuple[str, list[str]]:
    """The seat's cards as the page draws them (a selector) and their colours by the engine:
    the hand, or in flowers each garden cell's top card (named by its initial)."""
    observation = state.observation(seat)
    if game == "flowers":
        cells = observation["gardens"][seat]["cells"]
        return f"#seat-{seat} .garden .card", [COLOUR_NAME[cell["cards"][-1][0]] for cell in cells]
    return f"#seat-{seat} .card.hand", list(observation["hand"])


def test_cards_are_drawn_in_the_colours_the_engine_names(browser, played):
    record, _logs, page = played
    game, seats = record["game"], range(len(record["players"]))
    states = positions(record)
    # A decision where the seats hold two colours or more (an early garden may be all blue).
    ply = next(ply for ply in range(decision(record), len(states)) if len(
        {colour for seat in seats for colour in held_colours(game, states[ply], seat)[1]}) > 1)
    named, drawn = [], []
    browser.get(f"{page.as_uri()}#ply-{ply}")
    for seat in seats:
        selector, colours = held_colours(game, states[ply], seat)
        named += colours
        drawn += browser.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]),"
            " (node) => getComputedStyle(node).backgroundColor)", selector)
    assert [colour_name(css) for css in drawn] == named
    # One colour, one shade: cards of a colour look alike, and unlike every other colour's.
    shades = dict(zip(named, drawn))
    assert len(set(zip(named, drawn))) == len(shades) == len(set(shades.values()))


PAGE_BYTES = 250_000
"""A replay page loads in about a second on a 2 Mbit/s mobile link. Pages grow with the
match: 60-160 KB today (measured on 30 random deals of each game; the largest a long 4-player
flowers-mandala), so 150 KB would fail on a long deal; the deals here change with each run."""
FRAME_BYTES = 2_000
"""Per ply, at most ~1.3 KB today (mostly the legal moves): each frame holds what changed.
Whole positions per frame would be 4-8 KB at 4 players."""


def assert_small(page: str, record: dict) -> None:
    size = len(page.encode())
    assert size < PAGE_BYTES, f"{size} bytes"
    assert size < FRAME_BYTES * (len(record["moves"]) + 1) + 30_000, (   # + script, style
        f"{size} bytes for {len(record['moves'])} moves")


def test_a_page_with_the_bots_logs_stays_small(played):
    record, _logs, page = played
    assert_small(page.read_text(), record)


@pytest.mark.parametrize("game", ["flowers-mandala", "flowers"])
def test_a_4_player_page_stays_small(game):
    seats = [StrategySeat(bot, game) for bot in ("greedy", "random", "greedy", "random")]
    record = play_match(game, 4, None, 7, seats)
    assert_small(render_replay_html(record), record)


def test_what_bots_wrote_stays_text(browser, played, tmp_path):
    record, _logs, _page = played
    hostile = dict(record, players=[HOSTILE, record["players"][1]])
    page = tmp_path / "hostile.html"
    page.write_text(render_replay_html(hostile, logs={0: {0: [HOSTILE, "&lt;b&gt;"]}}))
    browser.get(page.as_uri())
    assert HOSTILE in browser.find_element("id", "seat-0").text
    assert browser.find_element("id", "logs").text.endswith(f"{HOSTILE}\n&lt;b&gt;")
    assert browser.find_elements("id", "bold") == []
    assert browser.execute_script("return window.pwned === undefined")
    assert page.read_text().count("<script") == 2   # the data and the viewer's own


@pytest.mark.slow
def test_a_league_match_gets_its_logs_from_the_league(tmp_path):
    folder = tmp_path / "lg"
    arena("league", "run", "--game", "mandala", "--bot", CHATTY, "--bot", "greedy",
          "--deals", 1, "--seed", 2, "--out", folder, "--quiet")
    match_id = "d0000:chatty,greedy"
    page = arena("replay", folder, "--match", match_id, "--format", "html").stdout
    data = json.loads(page.split('id="replay-data">')[1].split("</script>")[0])
    record, = [json.loads(line) for line in arena("league", "export", folder).stdout.splitlines()
               if json.loads(line)["match"] == match_id]
    assert set(data["logs"]) == {"0"}   # chatty's seat; the built-in greedy has no log
    lines = data["logs"]["0"]
    assert lines and all(int(ply) == BEFORE_FIRST_ACT or
                         record["moves"][int(ply)][0] == 0 for ply in lines)


# -- the service ---------------------------------------------------------------------------------
BOB_SECRET = """
import random, sys
from arena.sdk import Bot, strategies

class Quiet(Bot):
    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)

    def act(self, observation, legal_moves, ply):
        print(f"bob's secret at ply {ply}", file=sys.stderr, flush=True)
        return strategies.get("random", self.match.game)(observation, legal_moves, self.rng)

Quiet().run()
"""


@pytest.mark.slow
def test_the_service_shows_a_bots_log_lines_to_its_author_only(tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait
    from serving import make_bot
    from test_serve import sign_in, started_service

    from arena.serve.uploads import pack_folder

    service = started_service(tmp_path)
    try:
        for author, folder in (("alice", CHATTY),
                               ("bob", make_bot(tmp_path / "quiet", "quiet", BOB_SECRET))):
            status, answer = service.upload(pack_folder(folder), service.tokens[author])
            assert status == 202, answer
            verdict = service.verdict(answer["id"], service.tokens[author])
            assert verdict["status"] == "admitted", verdict
        deadline = time.monotonic() + 240
        while not (matches := service.get("/api/matches?ladder=mandala-2p")["matches"]):
            assert time.monotonic() < deadline, "no match played in 240 s"
            time.sleep(1)
        match = matches[-1]
        seat_of = {bot.split("@")[0]: seat for seat, bot in enumerate(match["bots"])}

        def viewer(token: str | None) -> dict:
            status, body = service.request(f"/matches/{match['id']}/replay", token=token)
            assert status == 200
            page = body.decode()
            data = json.loads(page.split('id="replay-data">')[1].split("</script>")[0])
            return page, data["logs"]

        page, logs = viewer(None)
        assert logs == {} and "chose" not in page and "secret" not in page
        page, logs = viewer(service.tokens["bob"])
        assert set(logs) == {str(seat_of["bob/quiet"])} and "chose" not in page
        assert "bob's secret at ply" in page
        page, logs = viewer(service.tokens["alice"])
        assert set(logs) == {str(seat_of["alice/chatty"])} and "secret" not in page
        assert any(f"ply {ply} chose" in " ".join(lines) for ply, lines in
                   logs[str(seat_of["alice/chatty"])].items())
        # The viewer runs in a sandbox of its own; the match page runs no script and frames it.
        with urllib.request.urlopen(f"{service.url}/matches/{match['id']}/replay") as answer:
            policy = answer.headers["Content-Security-Policy"]
        assert "sandbox allow-scripts" in policy and "frame-ancestors 'self'" in policy
        with urllib.request.urlopen(f"{service.url}/matches/{match['id']}") as answer:
            policy, html = answer.headers["Content-Security-Policy"], answer.read().decode()
        assert "script-src" not in policy and "frame-src 'self'" in policy
        assert f'src="/matches/{match["id"]}/replay"' in html and "chose" not in html
        # In Chromium, signed in: the match page's frame shows alice her bot's lines.
        ply = next(int(ply) for ply in logs[str(seat_of["alice/chatty"])] if int(ply) >= 0)
        with chromium() as browser:
            sign_in(browser, service, "alice")
            browser.get(f"{service.url}/matches/{match['id']}")
            browser.switch_to.frame(browser.find_element("css selector", "iframe.replay"))
            WebDriverWait(browser, 30).until(lambda driver: driver.find_elements("id", "logs"))
            browser.execute_script(f"location.hash = '#ply-{ply}'")
            WebDriverWait(browser, 10).until(lambda driver: driver.find_element(
                "id", "ply-link").text == f"ply {ply}")
            assert f"ply {ply} chose" in browser.find_element("id", "logs").text
    finally:
        service.stop()
