"""Bot logs per match: a league's log of a bot holds one header line per match, written by the
arena, and the bot's own lines each start with its process tag, so a bot that prints fake
headers (even behind carriage returns and terminal escapes) cannot pass one off; `arena play`
keeps logs beside its record or in --logs, and leaves no temporary folder behind."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.store import Store

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parent.parent
FORGER = ROOT / "tests" / "league_bots" / "forger"
CRASH = ROOT / "tests" / "misbehaving_bots" / "crash_mid_match"
GREEDY = ROOT / "sample_bots" / "greedy"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
HEADER = re.compile(r"== arena: match (.+?): mandala, seat (\d) of 2, [\d-]+ [\d:]+ UTC; "
                    r"process (\d+\.\d+) ==")
ACT = re.compile(r"== arena: match (.+?) ply (\d+); process (\d+\.\d+) ==")


def arena(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)


@pytest.mark.slow
def test_a_league_log_has_one_arena_header_per_match_and_no_forged_one(tmp_path):
    folder = tmp_path / "lg"
    done = arena("league", "run", "--game", "mandala", "--deals", 3, "--seed", 1, "--bot",
                 FORGER, "--bot", GREEDY, "--out", folder, "--quiet", "--workers", 2)
    assert done.returncode == 0, done.stderr
    with Store.open(folder) as store:
        matches = store.finished_ids()
    log, = (folder / "logs").glob("forger-*.log")
    lines = log.read_text().splitlines()
    arena_lines = [line for line in lines if not re.match(r"\d+\.\d+\| ", line)]
    headers = [HEADER.fullmatch(line) for line in arena_lines if not ACT.fullmatch(line)]
    assert all(headers), arena_lines[:3]
    assert sorted(header[1] for header in headers) == sorted(matches)   # each match once
    tags = {header[3] for header in headers}
    acts = [ACT.fullmatch(line) for line in arena_lines if ACT.fullmatch(line)]
    assert acts and {act[1] for act in acts} == set(matches) and {act[3] for act in acts} <= tags
    for line in lines:
        if not HEADER.fullmatch(line) and not ACT.fullmatch(line):
            tag, _, text = line.partition("| ")
            assert tag in tags and "\r" not in text and "\x1b" not in text
    # Each fake header is there as the bot's text, visibly so.
    assert sum("d9999:fake,forger" in line for line in lines) == 4 * len(matches)
    assert any(line.endswith("| note\\x0d== arena: match d9999:fake,forger: mandala, seat 0 of "
                             "2, 2000-01-01 00:00:00 UTC; process 1.1 ==") for line in lines)
    assert any(line.endswith("| and an unfinished line") for line in lines)
    # The sample bot's log has its headers too: the matches it played.
    greedy_log, = (folder / "logs").glob("greedy-*.log")
    greedy_headers = [HEADER.fullmatch(line) for line in greedy_log.read_text().splitlines()]
    assert sorted(header[1] for header in greedy_headers if header) == sorted(matches)


def test_play_keeps_logs_beside_the_record_or_in_logs(tmp_path):
    record = tmp_path / "match.json"
    done = arena("play", "mandala", "--seed", 3, "--bot", FORGER, "--bot", GREEDY,
                 "--record", record)
    assert done.returncode == 0, done.stderr
    logs = tmp_path / "match.logs"
    assert f"  bot logs in {logs}\n" in done.stdout and record.is_file()
    forger_log, = logs.glob("forger-*.log")
    header = HEADER.fullmatch(forger_log.read_text().splitlines()[0])
    assert header and header[1] == "play seed 3" and header[2] == "0"
    other = tmp_path / "elsewhere"
    done = arena("play", "mandala", "--bot", GREEDY, "--bot", FORGER, "--logs", other,
                 "--quiet")
    assert done.returncode == 0 and len(list(other.glob("*.log"))) == 2


def test_play_without_record_removes_its_temporary_logs_after_showing_a_forfeiters(tmp_path):
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    done = arena("play", "mandala", "--seed", 2, "--bot", GREEDY, "--bot", CRASH, env=env)
    assert done.returncode == 0, done.stderr
    assert "(temporary: --logs FOLDER or --record keeps them)" in done.stdout
    assert "end forfeit" in done.stdout
    assert "the end of crash_mid_match-" in done.stderr and "seat 1 of 2" in done.stderr
    assert list(private_tmp.iterdir()) == []   # no arena-logs-* (nor sockets) left behind
    done = arena("play", "mandala", "--bot", GREEDY, "--bot", GREEDY, "--quiet", env=env)
    assert done.returncode == 0 and list(private_tmp.iterdir()) == []


# -- line separators: a log's lines end at "\n" only -------------------------------------------

FORGED_HEADER = ROOT / "tests" / "misbehaving_bots" / "forged_header"
SHOWN_SEPARATORS = ("\\u2028", "\\u2029", "\\x85", "\\x0b", "\\x0c", "\\x1c")
"""The forged_header bot's separators, as the arena shows them."""
FORGERY = ("note{0}== arena: match m9: mandala, seat 1 of 2, 2000-01-01 00:00:00 UTC; process 2.1 "
           "=={0}2.1| Traceback: the OTHER bot crashed")


def forged_lines(text: str) -> list[str]:
    """The lines of `text`, as any reader splits them (`str.splitlines`: also at U+2028 and
    the rest), that pass for the arena's own: its fake header, or the other process's line."""
    return [line for line in text.splitlines()
            if line.startswith("== arena: match m9") or line.startswith("2.1| ")]


def shows_each_forgery_on_one_line(text: str) -> bool:
    lines = text.split("\n")
    return all(any(line.endswith(FORGERY.format(shown)) for line in lines)
               for shown in SHOWN_SEPARATORS)


@pytest.mark.parametrize("escaping", ["on", "off"])
def test_a_header_forged_behind_a_line_separator_stays_one_escaped_line_in_the_log(
        tmp_path, monkeypatch, escaping):
    from arena import sandbox
    from arena.sandbox import logdrain
    if escaping == "off":   # the control: the drain as it was, escaping control bytes only
        monkeypatch.setattr(logdrain, "_CONTROL", re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]"))
    log = tmp_path / "forged_header.log"
    bot = sandbox.spawn([sys.executable, "bot.py"], FORGED_HEADER, env={}, log_path=log,
                        log_prefix="1.1| ")
    try:
        assert bot.wait(60) == 1
    finally:
        bot.kill()
    text = log.read_text()
    if escaping == "on":
        assert forged_lines(text) == [] and len(text.splitlines()) == 6
        assert shows_each_forgery_on_one_line(text), text
    else:
        assert len(forged_lines(text)) == 2 * 3, text   # U+2028, U+2029 and U+0085 split


def test_bot_check_shows_a_forged_header_as_one_escaped_line(tmp_path):
    done = arena("bot", "check", FORGED_HEADER)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "start-up  FAIL" in done.stdout
    assert forged_lines(done.stdout + done.stderr) == [], done.stdout
    assert shows_each_forgery_on_one_line(done.stdout), done.stdout


def test_excerpts_of_a_log_with_raw_separators_split_at_newlines_only(tmp_path):
    """A log written before the drain escaped separators (or by anything else): the
    excerpt `arena bot check`, `arena play` and the service show splits it at "\\n" only."""
    from arena.botcheck import _excerpt
    raw = "".join("1.1| " + FORGERY.format(separator) + "\n"
                  for separator in ("\u2028", "\u2029", "\u0085", "\r"))
    (tmp_path / "old.log").write_text(raw)
    assert len(forged_lines(raw)) == 2 * 4   # the control: str.splitlines is fooled
    excerpt = _excerpt(tmp_path)
    assert forged_lines(excerpt) == [] and len(excerpt.splitlines()) == 1 + 4, excerpt
    assert "1.1| " + FORGERY.format("\\x0d") in excerpt


def test_the_services_check_excerpt_shows_a_forged_header_as_one_escaped_line(tmp_path):
    from arena.serve.compliance import compliance_check
    from arena.serve.db import Ladder, Version
    version = Version(1, 1, "mallory", "forged_header", "mandala-2p", "v1",
                      str(FORGED_HEADER), "pending", 0.0)
    ladder = Ladder("mandala-2p", "mandala", 2, "mandala/1", {"move_time": 1.0})
    verdict = compliance_check(version, ladder, tmp_path / "check")
    assert not verdict.passed, verdict
    assert forged_lines(verdict.log_excerpt) == [], verdict.log_excerpt
    assert shows_each_forgery_on_one_line(verdict.log_excerpt), verdict.log_excerpt


def test_the_drain_writes_arena_lines_sent_through_the_pipe_in_order_and_no_forged_one(
        tmp_path):
    """The arena's act lines travel in the bot's own pipe behind a secret nonce: in order
    with the bot's output, after what it left unfinished, written only before its next line;
    the same text from the bot, even with a wrong nonce, stays the bot's, behind its tag."""
    import threading

    from arena.sandbox import logdrain

    nonce = b"0123456789abcdef0123456789abcdef"
    read_end, write_end = os.pipe()
    log = tmp_path / "bot.log"
    drain = threading.Thread(target=logdrain.drain,
                             args=(read_end, log, 1 << 20, b"1.1| ", nonce))
    drain.start()
    def act(ply):
        return b"== arena: match m ply %d; process 1.1 ==" % ply
    for chunk in (nonce + logdrain.BEFORE_OUTPUT + act(0) + b"\n", b"thinking about 0\n",
                  b"unfinished ", nonce + logdrain.BEFORE_OUTPUT + act(1) + b"\n",
                  nonce + logdrain.BEFORE_OUTPUT + act(2) + b"\n",    # a silent act
                  nonce + logdrain.BEFORE_OUTPUT + act(3) + b"\n",
                  act(9) + b"\n", b"x" + nonce[:-1] + b"?" + act(8) + b"\n",
                  nonce + logdrain.ALWAYS + b"== arena: match n: mandala ==\n"):
        os.write(write_end, chunk)
    os.close(write_end)
    drain.join(timeout=10)
    assert log.read_text().splitlines() == [
        "== arena: match m ply 0; process 1.1 ==", "1.1| thinking about 0", "1.1| unfinished ",
        "== arena: match m ply 3; process 1.1 ==",
        "1.1| == arena: match m ply 9; process 1.1 ==",
        f"1.1| x{nonce[:-1].decode()}?== arena: match m ply 8; process 1.1 ==",
        "== arena: match n: mandala =="]


def test_c1_terminal_controls_in_a_bots_output_are_written_as_text(tmp_path):
    # U+009B and U+009D start a terminal's CSI and OSC where a terminal acts on C1 controls
    # (xterm): "clear the screen" and a forged verdict, were they written as they are.
    from arena.sandbox import logdrain
    read_end, write_end = os.pipe()
    os.write(write_end, "\u009b2J\u009bHarena: all checks passed \u009d0;title\u009c\n"
             .encode())
    os.close(write_end)
    log = tmp_path / "c1.log"
    logdrain.drain(read_end, log, 1 << 20, b"1.1| ")
    text = log.read_text()
    assert text == "1.1| \\x9b2J\\x9bHarena: all checks passed \\x9d0;title\\x9c\n", text
    assert logdrain.log_text(log) == text
    raw = tmp_path / "raw.log"   # one written before the drain escaped them: shown as text too
    raw.write_text("1.1| \u009b2J\n")
    assert logdrain.log_text(raw) == "1.1| \\x9b2J\n"
