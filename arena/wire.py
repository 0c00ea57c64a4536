"""Arena-side conversions between engine values and protocol messages (arena.v1).

Seconds become whole milliseconds here and nowhere else. Observations are converted
mechanically: the engine's dict has exactly the field names of the game's message, so the
message's constructor takes it as is (nested dicts for nested messages) and the SDK's
conversion gives the same dict back. The constructor builds the same message as
`json_format.ParseDict` about eight times faster (tests/test_proto_observations.py checks
both claims on every observation of every game); like ParseDict it refuses unknown fields.
"""
from __future__ import annotations

import math

from google.protobuf import message_factory

from arena.clock import MoveClock, TimeControl
from arena.v1 import arena_pb2


def millis(seconds: float) -> int:
    """Seconds (zero or more) to whole wire milliseconds."""
    return max(0, min(2**32 - 1, round(seconds * 1000)))


def limit_millis(seconds: float | None) -> int:
    """A time limit in wire milliseconds, where 0 means "no such limit": None (or infinity)
    is 0, and any real limit is at least 1, even a bank that is used up or a limit under
    half a millisecond, so that a bot is never told it has no limit when it has almost no time.
    """
    if seconds is None or math.isinf(seconds):
        return 0
    return max(1, millis(seconds))


def observation_field(game_id: str) -> str:
    """The ActRequest oneof field that carries `game_id`'s observation."""
    return game_id.replace("-", "_")


def observation_message(game_id: str, observation: dict):
    """The game's typed observation message for the engine's dict.

    Raises ValueError (unknown field) or TypeError (wrong value type) when the dict does not
    fit the message: a bug in the game's observation or its proto.
    """
    descriptor = arena_pb2.ActRequest.DESCRIPTOR.fields_by_name[
        observation_field(game_id)].message_type
    return message_factory.GetMessageClass(descriptor)(**observation)


def new_match_message(match_id: str, game_id: str, options: dict, seat: int, players: int,
                      time_control: TimeControl, rng_seed: int) -> arena_pb2.ArenaMessage:
    return arena_pb2.ArenaMessage(new_match=arena_pb2.NewMatch(
        match_id=match_id, game=game_id,
        options={key: str(value) for key, value in options.items()},
        seat=seat, players=players, rng_seed=rng_seed,
        time_control=arena_pb2.TimeControl(
            move_time_ms=limit_millis(time_control.move_time),
            bank_ms=limit_millis(time_control.bank),
            increment_ms=millis(time_control.increment))))


def act_message(act_id: int, match_id: str, ply: int, game_id: str, observation: dict,
                legal_moves: list[str], clock: MoveClock) -> arena_pb2.ArenaMessage:
    # Built in place from dicts: an ActRequest made first would be copied into the message.
    return arena_pb2.ArenaMessage(act={
        "act_id": act_id, "match_id": match_id, "ply": ply, "legal_moves": legal_moves,
        "clock": {"remaining_ms": limit_millis(clock.remaining),
                  "move_limit_ms": limit_millis(clock.move_limit),
                  "allowed_ms": limit_millis(clock.allowed)},
        observation_field(game_id): observation})


def match_over_message(match_id: str, result: dict) -> arena_pb2.ArenaMessage:
    forfeit = result.get("forfeit") or {}
    return arena_pb2.ArenaMessage(match_over=arena_pb2.MatchOver(
        match_id=match_id, scores=result["scores"], ranks=result["ranks"], end=result["end"],
        forfeit_seat=forfeit.get("seat", 0), forfeit_reason=forfeit.get("reason", "")))
