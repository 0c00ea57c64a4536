"""The arena's side of the bot protocol, with scripted bots over the fake transport
(tests/fake_transport.py): real gRPC on the host's real socket, no bubblewrap, no processes.

Each rule: what a bot sends, and the forfeit (or the normal end) the arena makes of it.
"""
from __future__ import annotations

import logging
import time

import pytest

from arena.bots import MAX_MOVE_CHARS, BotHost
from arena.clock import TimeControl
from arena.match import StrategySeat, play_match
from engine import records
from fake_transport import CRASH, HANG_UP, FakeSpawn, fake_spec, first_legal, reply

TIME = TimeControl(move_time=2.0, startup=10.0)


def match_against_random(script, *, name: str = "scripted", seed: int = 5) -> dict:
    """One mandala match: the scripted bot in seat 0, the built-in random bot in seat 1."""
    spawn = FakeSpawn({name: script})
    with BotHost(spawn=spawn) as host, host.seat(fake_spec(name)) as seat:
        return play_match("mandala", 2, {}, seed, [seat, StrategySeat("random", "mandala")],
                          TIME)


def forfeit_of(record: dict) -> dict:
    assert record["result"]["end"] == "forfeit", record["result"]
    assert record["result"]["forfeit"]["seat"] == 0
    return record["result"]["forfeit"]


def test_a_bot_that_answers_every_act_plays_to_a_normal_end_that_verifies():
    record = match_against_random(first_legal)
    assert record["result"]["end"] == "normal"
    assert records.verify(record)["ok"]


def test_a_reply_to_another_act_is_a_protocol_forfeit():
    forfeit = forfeit_of(match_against_random(
        lambda message: reply(message, message.act.legal_moves[0], act_id=10**6)))
    assert forfeit["reason"] == "protocol" and "answered act 1000000" in forfeit["detail"]


def test_bytes_that_are_no_move_reply_are_a_protocol_forfeit():
    forfeit = forfeit_of(match_against_random(lambda message: b"\xff\xff\xff not protobuf"))
    assert forfeit["reason"] == "protocol" and "not a MoveReply" in forfeit["detail"]


def test_a_move_longer_than_any_notation_is_a_protocol_forfeit():
    forfeit = forfeit_of(match_against_random(
        lambda message: reply(message, "x" * (MAX_MOVE_CHARS + 1))))
    assert forfeit["reason"] == "protocol"
    assert f"a move of {MAX_MOVE_CHARS + 1} characters" in forfeit["detail"]


def test_a_move_that_is_not_legal_forfeits_as_illegal():
    forfeit = forfeit_of(match_against_random(lambda message: reply(message, "no-such-move")))
    assert forfeit["reason"] == "illegal"


def test_closing_the_stream_instead_of_moving_is_a_protocol_forfeit():
    forfeit = forfeit_of(match_against_random(lambda message: HANG_UP))
    assert forfeit["reason"] == "protocol" and "ended its stream" in forfeit["detail"]


def test_dying_instead_of_moving_is_a_crash_forfeit():
    forfeit = forfeit_of(match_against_random(lambda message: CRASH))
    assert forfeit["reason"] == "crash" and "exited with status 1" in forfeit["detail"]


def test_no_reply_within_the_move_time_is_a_timeout_forfeit():
    def slow(message):
        time.sleep(TIME.move_time + 1.5)
        return first_legal(message)
    forfeit = forfeit_of(match_against_random(slow))
    assert forfeit["reason"] == "timeout" and "no move within" in forfeit["detail"]


@pytest.mark.parametrize("version", [2, 99])
def test_a_bot_of_another_protocol_version_cannot_start(version):
    spawn = FakeSpawn({"old": first_legal}, protocol_version=version)
    with BotHost(spawn=spawn) as host, host.seat(fake_spec("old")) as seat:
        record = play_match("mandala", 2, {}, 1, [seat, StrategySeat("random", "mandala")],
                            TIME)
    forfeit = forfeit_of(record)
    assert forfeit["reason"] == "crash" and "before its handshake" in forfeit["detail"]


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_wire_traffic_is_logged_at_debug():
    logger, collect = logging.getLogger("arena.bots.process"), Collect()
    level = logger.level
    logger.addHandler(collect)
    logger.setLevel(logging.DEBUG)
    try:
        match_against_random(first_legal)
    finally:
        logger.removeHandler(collect)
        logger.setLevel(level)
    lines = collect.lines
    assert any(line.startswith("to scripted: new_match {") for line in lines)
    assert any(line.startswith("to scripted: act {") for line in lines)
    assert any(line.startswith("from scripted: act_id: 1 move: ") for line in lines)
