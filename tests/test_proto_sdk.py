"""The SDK's side of the protocol, in-process: what a bot is told of its clock and match, and
how it survives its own bugs (the traceback goes to stderr, the bot keeps serving)."""
from __future__ import annotations

import pytest

from arena import wire
from arena.clock import SeatClock, TimeControl
from arena.sdk import Bot, Clock
from arena.v1 import arena_pb2

OBSERVATION = {"seat": 0, "to_move": 0, "phase": "turn"}


def act_for(clock_control: TimeControl, *, spend: float = 0.0) -> arena_pb2.ActRequest:
    """The act the arena sends for a decision under `clock_control` after `spend` s used."""
    clock = SeatClock(clock_control)
    if spend:
        assert clock.charge(clock.for_move(), spend)
    message = wire.act_message(7, "m1", 3, "mandala", OBSERVATION, ["pass"], clock.for_move())
    return arena_pb2.ArenaMessage.FromString(message.SerializeToString()).act


class Recorder(Bot):
    name = "recorder"

    def act(self, observation, legal_moves):
        self.seen = (observation, legal_moves, self.clock)
        return legal_moves[0]


@pytest.mark.parametrize("control, spend, told", [
    (TimeControl(move_time=1.5), 0.0, Clock(remaining=None, move_limit=1.5, allowed=1.5)),
    (TimeControl(move_time=None, bank=10.0, increment=0.1), 2.0,
     Clock(remaining=8.1, move_limit=None, allowed=8.1)),
    (TimeControl(move_time=1.0, bank=0.4), 0.0, Clock(remaining=0.4, move_limit=1.0,
                                                      allowed=0.4)),
    # A used-up bank (the margin let the last move overdraw it) and a limit under half a
    # millisecond are still limits: 1 ms, never 0, which would read "no limit".
    (TimeControl(move_time=None, bank=0.2), 0.23, Clock(remaining=0.001, move_limit=None,
                                                        allowed=0.001)),
    (TimeControl(move_time=0.0004), 0.0, Clock(remaining=None, move_limit=0.001,
                                               allowed=0.001)),
])
def test_the_bot_is_told_its_clock_in_seconds(control, spend, told):
    bot = Recorder()
    reply = bot._answer(act_for(control, spend=spend))
    assert (reply.act_id, reply.move, reply.error) == (7, "pass", "")
    observation, legal_moves, clock = bot.seen
    assert observation.items() >= OBSERVATION.items()
    assert (legal_moves, clock) == (["pass"], told)


def test_the_bot_is_told_its_match_and_time_control():
    bot = Recorder()
    message = wire.new_match_message("m4", "mandala", {"variant": 2}, 1, 2,
                                     TimeControl(move_time=None, bank=10.0, increment=0.25),
                                     rng_seed=2**63 - 1)
    bot._start(message.new_match)
    assert bot.match.game == "mandala" and (bot.match.seat, bot.match.players) == (1, 2)
    assert bot.match.options == {"variant": "2"} and bot.match.rng_seed == 2**63 - 1
    assert (bot.match.move_time, bot.match.bank, bot.match.increment) == (None, 10.0, 0.25)


class Buggy(Bot):
    """Its act raises at every other call; its hooks always raise."""

    name = "buggy"
    calls = 0

    def act(self, observation, legal_moves):
        self.calls += 1
        if self.calls % 2:
            raise RuntimeError(f"bug number {self.calls}")
        return legal_moves[-1]

    def new_match(self, match):
        raise KeyError("a bug in new_match")

    def match_over(self, result):
        raise ValueError("a bug in match_over")


def test_errors_in_the_bots_code_are_logged_and_it_keeps_serving(capsys):
    bot = Buggy()
    control = TimeControl(move_time=1.0)
    bot._start(wire.new_match_message("m1", "mandala", {}, 0, 2, control, 5).new_match)
    assert bot.match.match_id == "m1"   # the failing hook did not stop the match
    failed = bot._answer(act_for(control))
    assert (failed.act_id, failed.move) == (7, "")
    assert failed.error == "RuntimeError: bug number 1"
    answered = bot._answer(act_for(control))   # the next request is served normally
    assert (answered.move, answered.error) == ("pass", "")
    result = {"scores": [0, 1], "ranks": [2, 1], "end": "forfeit",
              "forfeit": {"seat": 0, "reason": "error"}}
    bot._finish(wire.match_over_message("m1", result).match_over)
    assert bot.games_played == 1
    log = capsys.readouterr().err
    assert log.count("Traceback") == 3
    for says in ("KeyError: 'a bug in new_match'", "RuntimeError: bug number 1",
                 "ValueError: a bug in match_over"):
        assert says in log


def test_a_move_that_is_not_text_is_reported_as_the_bots_error(capsys):
    class NotText(Bot):
        def act(self, observation, legal_moves):
            return 3

    reply = NotText()._answer(act_for(TimeControl()))
    assert reply.error == "TypeError: act returned int 3, not a move string"
    assert "Traceback" in capsys.readouterr().err


class PlyAsArgument(Bot):
    name = "ply-argument"

    def act(self, observation, legal_moves, ply):
        self.seen = (ply, self.ply)
        return legal_moves[0]


class PlyAsAttribute(Bot):
    name = "ply-attribute"

    def act(self, observation, legal_moves):
        self.seen = self.ply
        return legal_moves[0]


def test_act_is_given_the_ply_as_an_argument_when_it_asks_and_as_self_ply():
    # The act's ply is 3 (act_for): the record entry the move becomes, as replays number it.
    asking = PlyAsArgument()
    assert asking._answer(act_for(TimeControl())).move == "pass"
    assert asking.seen == (3, 3)
    assert asking.ply is None   # only during act: a stale ply would mislabel a later log line
    classic = PlyAsAttribute()   # the two-argument act of every existing bot still works
    assert classic._answer(act_for(TimeControl())).error == ""
    assert classic.seen == 3
