"""`arena replay`: a stored match again, from a record file or a league folder, as text (the
same lines `arena play` printed while it played) and as one page that real headless Chromium
steps through with its buttons and arrow keys, showing whatever bots named escaped."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.render.replay import render_replay_html, steps
from engine import records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
HOSTILE = '</script><script>window.pwned = 1</script><b id="bold">x</b>'


def arena(*args, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    if check and done.returncode != 0:
        raise AssertionError(done.stderr)
    return done


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, str]:
    """A flowers-mandala match of built-in bots: its record and what `arena play` printed."""
    record = tmp_path_factory.mktemp("replay") / "match.json"
    done = arena("play", "flowers-mandala", "--players", 3, "--seed", 11, "--bot", "random",
                 "--bot", "greedy", "--bot", "random", "--record", record)
    return record, done.stdout


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("replay-league") / "lg"
    arena("league", "run", "--game", "mandala", "--bot", "random", "--bot", "greedy",
          "--deals", 2, "--seed", 4, "--out", folder, "--quiet")
    return folder


def moves_part(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ply 0 "))
    return [line for line in lines[start:] if not line.startswith("record written")]


def test_text_replay_prints_what_play_printed_move_by_move(played):
    record, printed = played
    replayed = arena("replay", record).stdout
    assert moves_part(replayed) == moves_part(printed)
    seed = json.loads(record.read_text())["seed"]   # the deal's seed (arena.keys)
    assert replayed.splitlines()[0] == f"flowers-mandala, 3 players, seed {seed}"
    assert replayed.splitlines()[4].startswith(f"  seed {seed} is the match's derived seed")
    assert replayed.splitlines()[5] == "start"


def test_a_league_match_is_replayed_by_its_id(league):
    done = arena("replay", league, "--match", "d0001:greedy,random")
    assert "seat 0: greedy (builtin)" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("result: scores")
    missing = arena("replay", league, check=False)
    assert missing.returncode == 2 and "--match ID" in missing.stderr
    unknown = arena("replay", league, "--match", "d9:x,y", check=False)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (f"arena: error: league {league} has no match 'd9:x,y' "
                                      "(its first: d0000:random,greedy, d0000:greedy,random, "
                                      "d0001:random,greedy)")


def test_a_record_that_does_not_replay_is_refused_in_one_line(played, tmp_path):
    record = json.loads(played[0].read_text())
    record["moves"][3][1] = "play 9 purple 9"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    done = arena("replay", bad, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("arena: error:") and len(done.stderr.splitlines()) == 1


def test_the_page_steps_through_the_plies_in_chromium(browser, played, tmp_path):
    record = json.loads(played[0].read_text())
    record["players"][1] = HOSTILE   # a name a hostile bot could choose
    plies = len(record["moves"])
    page = tmp_path / "replay.html"
    page.write_text(render_replay_html(record))
    browser.get(page.as_uri())
    def text(element_id):
        return browser.find_element("id", element_id).text
    assert text("ply-link") == "ply 0" and text("counter") == f"of {plies}"
    first = record["moves"][0]
    assert text("what").startswith(f"ply 0: seat {first[0]} (random (builtin)) played "
                                   f"{first[1]}")
    def table():
        return browser.find_element("id", "table").get_attribute("innerHTML")
    start_table = table()
    body = browser.find_element("tag name", "body")
    body.send_keys("\ue014")   # ArrowRight
    assert text("ply-link") == "ply 1" and browser.current_url.endswith("#ply-1")
    assert text("what").startswith(f"ply 1: seat 1 ({HOSTILE} (builtin)) played ")
    assert table() != start_table   # the first move is drawn
    browser.find_element("id", "next").click()
    assert text("ply-link") == "ply 2"
    body.send_keys("\ue012")   # ArrowLeft
    assert text("ply-link") == "ply 1"
    assert not browser.find_element("id", "final").is_displayed()
    browser.find_element("id", "last").click()
    assert text("ply-link") == f"ply {plies}" and text("what").endswith("the end of the match")
    final = list(steps(record))[-1].state.render_result()
    assert text("final") == final.strip() and "rank 1" in final
    assert text("result") == (f"scores {record['result']['scores']}, ranks "
                              f"{record['result']['ranks']}, end normal")
    # The hostile name is text on the page, nowhere markup or script.
    assert HOSTILE in browser.title
    assert browser.find_elements("id", "bold") == []
    assert browser.execute_script("return window.pwned === undefined")
    assert HOSTILE in text("seat-1")
    shot = tmp_path / "replay.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_the_html_format_of_the_cli_is_the_page(league):
    done = arena("replay", league, "--match", "d0000:random,greedy", "--format", "html")
    assert done.stdout.startswith("<!doctype html>")
    assert "random (builtin) vs greedy (builtin)" in done.stdout
    assert done.stdout.count('<script>') == 1   # the page's own script, nothing else


def test_a_forfeited_match_replays_to_its_forfeit(played, tmp_path):
    record = json.loads(played[0].read_text())
    # Cut before a seat's move (not a chance move): that seat is to move, and forfeits.
    kept = next(ply for ply in range(7, len(record["moves"]))
                if isinstance(record["moves"][ply][0], int))
    mover = record["moves"][kept][0]
    record["moves"] = record["moves"][:kept]
    record["times"] = record["times"][:kept]
    record["result"] = records.forfeit_result(3, mover, "timeout", "no move within 1.000 s")
    path = tmp_path / "forfeit.json"
    path.write_text(json.dumps(record))
    lines = arena("replay", path).stdout.rstrip().splitlines()
    name = record["players"][mover]
    assert lines[-2] == (f"forfeit by seat {mover} ({name}), timeout: no move within 1.000 s")
    assert lines[-1].startswith("result: scores") and lines[-1].endswith("end forfeit")
    assert f"ply {kept - 1} " in "\n".join(lines) and f"ply {kept} " not in "\n".join(lines)
    page = render_replay_html(record)
    assert f"forfeit by seat {mover} (timeout): no move within 1.000 s" in page


def test_the_clock_shows_time_used_and_left_in_the_bank(browser, played, tmp_path):
    record = json.loads(played[0].read_text())
    record["time_control"] = {"move_time": None, "bank": 10.0, "increment": 0.5,
                              "startup": 10.0, "margin": 0.05}
    own = [(seat, took) for (seat, _), took in zip(record["moves"], record["times"])
           if seat == 2]
    used = sum(took for _, took in own)
    page = tmp_path / "replay.html"
    page.write_text(render_replay_html(record))
    browser.get(page.as_uri() + f"#ply-{len(record['moves'])}")
    clock = browser.find_element("css selector", "#seat-2 .clock").text
    assert clock == f"used {used:.3f} s, bank {10.0 + 0.5 * len(own) - used:.3f} s"
    assert "clock: bank 10 s + 0.5 s per move" in page.read_text()


def test_logs_without_the_html_format_are_refused_in_one_line(played, tmp_path):
    done = arena("replay", played[0], "--logs", tmp_path, check=False)
    assert done.returncode == 2 and done.stderr == (
        "arena: error: --logs shows log lines in the html page: add --format html\n")
