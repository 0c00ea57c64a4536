"""One match: the runner's rules for moves, clocks and forfeits, and full matches between
real sandboxed bots over real gRPC whose records verify."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena import sandbox
from arena.bots import BotSpec
from arena.clock import SeatClock, TimeControl
from arena.match import (FROZEN_CPU_BURST, FROZEN_CPU_PER_MOVE, Seat, StrategySeat,
                         play_match)
from engine.records import forfeit_result
from engine import records

SAMPLE_BOTS = Path(__file__).parent.parent / "sample_bots"
TEST_BOTS = Path(__file__).parent / "protocol_bots"
needs_sandbox = pytest.mark.sandbox


class Stubborn(Seat):
    """Always plays the same text, legal or not."""

    name, version = "stubborn", "test"

    def __init__(self, move: str):
        self.move = move

    def act(self, observation, legal_moves, clock, ply=0):
        return self.move


def builtin(name: str, game: str = "mandala") -> StrategySeat:
    return StrategySeat(name, game)


# -- the runner, in-process ------------------------------------------------------------------
class FrozenSpender(StrategySeat):
    """A random player whose processes (scripted) use `spent(k)` seconds of CPU in the k-th
    time it is frozen, and `after_reply` seconds between each reply and its freeze."""

    frozen_between_moves = True

    def __init__(self, spent, after_reply: float = 0.0):
        super().__init__("random", "mandala")
        self.name = "spender"
        self.spent, self.after_reply = spent, after_reply
        self.cpu, self.freezes, self.frozen = 0.0, 0, False

    def act(self, observation, legal_moves, clock, ply=0):
        self.cpu += self.after_reply   # counted only once the seat is frozen
        return super().act(observation, legal_moves, clock, ply)

    def rest(self):
        self.frozen = True
        self.freezes += 1

    def cpu_seconds(self):
        if self.frozen:   # what it takes frozen shows at its next move's count
            self.cpu += self.spent(self.freezes)
            self.frozen = False
        return self.cpu


def frozen_spender_result(spent, after_reply: float = 0.0) -> dict:
    # Fixed bot seeds: the secret ones change with the arena's key, and about 1 deal in 100
    # ends before the 18th gap that the steady spender's test needs.
    return play_match("mandala", 2, {}, 3, [FrozenSpender(spent, after_reply),
                                            builtin("random")], bot_seeds=(1, 2))["result"]


def test_a_bot_frozen_between_moves_may_use_the_freezers_moment_and_one_host_spike():
    assert frozen_spender_result(lambda k: 0.0005)["end"] == "normal"
    spike = FROZEN_CPU_BURST * 0.9   # once, as a loaded host gave an honest bot 16 ms
    assert frozen_spender_result(lambda k: spike if k == 5 else 0.0005)["end"] == "normal"


def test_cpu_between_a_reply_and_the_freeze_is_not_taken_while_frozen():
    # No other seat is asked to move before the freeze: that CPU takes nobody's time.
    assert frozen_spender_result(lambda k: 0.0, after_reply=0.05)["end"] == "normal"


def test_a_bot_taking_the_burst_at_once_forfeits_for_fair_play():
    result = frozen_spender_result(lambda k: FROZEN_CPU_BURST * 1.2 if k == 1 else 0)
    assert result["forfeit"]["reason"] == "fair-play" and result["forfeit"]["seat"] == 0
    assert "used 24 ms of CPU while frozen between its moves in this match (1 gap; at most 20 " \
        "ms" in result["forfeit"]["detail"]


def test_a_bot_taking_a_little_at_every_move_forfeits_once_it_adds_up():
    steady = FROZEN_CPU_PER_MOVE * 1.5   # under the burst each time, over the rate
    result = frozen_spender_result(lambda k: steady)
    assert result["forfeit"]["reason"] == "fair-play", result
    used, moves, allowed = map(int, re.search(
        r"used (\d+) ms .* in this match \((\d+) gaps; at most (\d+) ms",
        result["forfeit"]["detail"]).groups())
    # burst + rate * (n - 1) < 1.5 * rate * n  <=>  n > 2 * burst / rate - 2 (18 gaps)
    assert abs(moves - (2 * FROZEN_CPU_BURST / FROZEN_CPU_PER_MOVE - 2)) <= 1 and used >= allowed


def test_a_match_records_every_move_with_its_time_and_the_bots():
    record = play_match("mandala", 2, {}, 3, [builtin("random"), builtin("greedy")])
    assert records.verify(record)["ok"]
    assert len(record["times"]) == len(record["moves"])
    assert all(seconds >= 0 for seconds in record["times"])
    assert record["bots"] == [{"name": "random", "version": "builtin"},
                              {"name": "greedy", "version": "builtin"}]
    assert record["time_control"]["move_time"] == 1.0


def test_chance_moves_are_drawn_from_the_seed_and_recorded():
    # Same deal seed and bot seeds: the same match, chance moves included.
    runs = [play_match("flowers-mandala", 3, {}, 21, [builtin("random", "flowers-mandala")
                                                      for _ in range(3)], bot_seeds=(4, 5, 6))
            for _ in range(2)]
    assert runs[0]["moves"] == runs[1]["moves"]
    assert any(seat == "chance" for seat, _ in runs[0]["moves"])
    assert records.verify(runs[0])["ok"]


def test_an_illegal_move_forfeits_and_the_other_player_wins():
    record = play_match("mandala", 2, {}, 3, [builtin("random"), Stubborn("pass please")])
    result = record["result"]
    assert result["end"] == "forfeit"
    assert result["forfeit"]["seat"] == 1 and result["forfeit"]["reason"] == "illegal"
    assert "'pass please'" in result["forfeit"]["detail"]
    assert result["ranks"] == [1, 2] and result["scores"] == [1, 0]
    assert records.verify(record) == {"ok": True, "scores": [1, 0], "ranks": [1, 2],
                                      "end": "forfeit", "forfeit": result["forfeit"]}


def test_with_more_players_the_forfeiter_is_last_and_the_others_share_first():
    seats = [builtin("random", "flowers"), Stubborn("nonsense"), builtin("random", "flowers")]
    result = play_match("flowers", 3, {}, 4, seats)["result"]
    assert result["forfeit"]["seat"] == 1
    assert result["ranks"] == [1, 3, 1]
    assert result["scores"] == [1, 0, 1]


def test_forfeit_result_for_four_players():
    assert forfeit_result(4, 2, "timeout") == {
        "scores": [1, 1, 0, 1], "ranks": [1, 1, 4, 1], "end": "forfeit",
        "forfeit": {"seat": 2, "reason": "timeout"}}


# -- clocks ----------------------------------------------------------------------------------
def test_a_per_move_limit_allows_that_much_plus_the_margin():
    clock = SeatClock(TimeControl(move_time=0.5, margin=0.05))
    move = clock.for_move()
    assert move.allowed == 0.5 and move.remaining is None
    assert move.deadline == pytest.approx(0.55)
    assert clock.charge(move, 0.54)
    assert not clock.charge(move, 0.56)


def test_a_bank_shrinks_by_the_time_used_and_grows_by_the_increment():
    clock = SeatClock(TimeControl(move_time=None, bank=2.0, increment=0.1))
    assert clock.charge(clock.for_move(), 0.5)
    assert clock.bank == pytest.approx(1.6)
    assert clock.for_move().allowed == pytest.approx(1.6)


def test_with_both_limits_a_move_gets_the_smaller():
    clock = SeatClock(TimeControl(move_time=1.0, bank=0.3))
    assert clock.for_move().allowed == pytest.approx(0.3)


@pytest.mark.parametrize("text, bank, increment", [("10+0.1", 10.0, 0.1), ("5", 5.0, 0.0)])
def test_tc_text(text, bank, increment):
    control = TimeControl.from_cli(None, text)
    assert (control.move_time, control.bank, control.increment) == (None, bank, increment)


# -- real bots over gRPC -----------------------------------------------------------------------
@needs_sandbox
@pytest.mark.parametrize("game, players", [("mandala", 2), ("flowers-mandala", 3),
                                           ("flowers", 2)])
def test_sample_bots_play_a_full_match_whose_record_verifies(host, game, players):
    specs = [BotSpec.load(SAMPLE_BOTS / name) for name in ("greedy", "random", "greedy")]
    seats = [host.seat(spec) for spec in specs[:players]]
    try:
        record = play_match(game, players, {}, 12, seats, TimeControl(move_time=2.0))
    finally:
        for seat in seats:
            seat.close()
    assert record["result"]["end"] == "normal", record["result"]
    assert records.verify(record)["ok"]
    assert [bot["version"] for bot in record["bots"]] == [spec.version for spec in
                                                           specs[:players]]


@needs_sandbox
def test_a_subprocess_bot_plays_exactly_like_the_same_strategy_in_process(host):
    with host.seat(BotSpec.load(SAMPLE_BOTS / "random")) as remote:
        over_grpc = play_match("mandala", 2, {}, 9, [remote, builtin("greedy")],
                               bot_seeds=(3, 4))
    in_process = play_match("mandala", 2, {}, 9, [builtin("random"), builtin("greedy")],
                            bot_seeds=(3, 4))
    assert over_grpc["moves"] == in_process["moves"]
    assert over_grpc["result"] == in_process["result"]


@needs_sandbox
@pytest.mark.serial   # forfeits on a short clock: timed with nothing beside it
def test_a_move_over_the_per_move_limit_forfeits_on_time(host):
    with host.seat(BotSpec.load(TEST_BOTS / "sleepy")) as sleepy:   # 0.15 s per move
        record = play_match("mandala", 2, {}, 1, [sleepy, builtin("random")],
                            TimeControl(move_time=0.05, margin=0.02))
        pid = sleepy.process.process.pid
    assert record["moves"] == []
    assert record["result"]["forfeit"]["seat"] == 0
    assert record["result"]["forfeit"]["reason"] == "timeout"
    assert not sandbox.running(pid)


@needs_sandbox
@pytest.mark.serial   # forfeits on a short clock: timed with nothing beside it
def test_an_empty_bank_forfeits_on_time(host):
    with host.seat(BotSpec.load(TEST_BOTS / "sleepy")) as sleepy:   # 0.15 s per move
        record = play_match("mandala", 2, {}, 1, [builtin("random"), sleepy],
                            TimeControl(move_time=None, bank=0.8, increment=0.0))
    result = record["result"]
    assert result["forfeit"] == {"seat": 1, "reason": "timeout",
                                 "detail": result["forfeit"]["detail"]}
    sleepy_times = [seconds for (seat, _), seconds in zip(record["moves"], record["times"])
                    if seat == 1]
    assert 3 <= len(sleepy_times) <= 5
    assert sum(sleepy_times) <= 0.8 + TimeControl().margin   # a last move may use the margin
    assert records.verify(record)["ok"]


@needs_sandbox
def test_a_bot_whose_code_raises_forfeits_at_once_and_plays_the_next_match(host):
    with host.seat(BotSpec.load(TEST_BOTS / "raises")) as raises:
        first = play_match("mandala", 2, {}, 2, [raises, builtin("random")])
        pid = raises.process.process.pid
        second = play_match("mandala", 2, {}, 3, [builtin("random"), raises])
        assert raises.process.process.pid != pid   # the forfeiter was ended and restarted
    for record, seat in ((first, 0), (second, 1)):
        assert record["result"]["forfeit"]["seat"] == seat
        assert record["result"]["forfeit"]["reason"] == "error"
        detail = record["result"]["forfeit"]["detail"]
        assert "RuntimeError: a bug in the bot\\x1b[2J\\r\\nscores [99, 0]" in detail, detail
        assert detail.isprintable(), detail   # no escape, no line break: shown, not obeyed
        assert sum(1 for mover, _ in record["moves"] if mover == seat) == 2
    log = (host.log_dir / f"raises-{raises.version}.log").read_text()
    assert "Traceback" in log and "a bug in the bot" in log
