"""Every observation of every game crosses the wire unchanged.

For each registered game and player count, over random play, each seat's observation dict
fills the game's typed message (no unknown field, no wrong type) and the SDK's conversion
gives back an equal dict: a subprocess bot sees exactly what an in-process strategy sees.
The arena's and the SDK's fast conversions also agree with json_format's ParseDict and
MessageToDict, the documented meaning of the mapping.
"""
from __future__ import annotations

import random

import pytest
from google.protobuf import json_format

from arena import wire
from arena.clock import SeatClock, TimeControl
from arena.sdk.bot import observation_dict
from arena.v1 import arena_pb2
from engine import registry
from engine.core import CHANCE

GAMES_PER_CASE = 4

CASES = [(game_id, players) for game_id, game in registry.games().items()
         for players in range(game.min_players, game.max_players + 1)]


def over_the_wire(game_id: str, observation: dict, legal_moves: list[str]) -> dict:
    """What a bot's act receives after the arena sent this observation."""
    clock = SeatClock(TimeControl()).for_move()
    sent = wire.act_message(1, "m1", 0, game_id, observation, legal_moves, clock)
    received = arena_pb2.ArenaMessage.FromString(sent.SerializeToString()).act
    assert received.WhichOneof("observation") == wire.observation_field(game_id)
    assert list(received.legal_moves) == legal_moves
    return observation_dict(received)


def agrees_with_json_format(game_id: str, observation: dict) -> bool:
    fast = wire.observation_message(game_id, observation)
    parsed = json_format.ParseDict(observation, type(fast)())
    printed = json_format.MessageToDict(parsed, preserving_proto_field_name=True,
                                        always_print_fields_with_no_presence=True)
    act = arena_pb2.ActRequest(**{wire.observation_field(game_id): parsed})
    return fast == parsed and observation_dict(act) == printed


@pytest.mark.parametrize("game_id, players", CASES)
def test_every_observation_round_trips(game_id, players):
    game = registry.get(game_id)
    for seed in range(GAMES_PER_CASE):
        rng = random.Random(seed)
        state = game.new_state(players, {}, seed=seed)
        while True:
            legal = state.legal_moves()
            for seat in range(players):
                observation = state.observation(seat)
                assert over_the_wire(game_id, observation, legal) == observation
            if seed == 0:
                assert agrees_with_json_format(game_id, state.observation(0))
            mover = state.to_move()
            if mover is None:
                break
            state.apply(state.sample_chance(rng) if mover == CHANCE else rng.choice(legal))


def test_every_game_has_its_observation_field():
    fields = {field.name for field in
              arena_pb2.ActRequest.DESCRIPTOR.oneofs_by_name["observation"].fields}
    assert {wire.observation_field(game_id) for game_id in registry.ids()} <= fields


def test_an_observation_key_the_message_lacks_is_refused():
    with pytest.raises(ValueError, match="no_such_field"):
        wire.observation_message("mandala", {"no_such_field": 1})


def test_a_message_the_fast_conversion_does_not_handle_goes_to_json_format():
    # A well-known type (and any message with floats, bytes, maps ...) is converted by
    # json_format itself, so a future field of such a type reaches the bot all the same.
    from google.protobuf import duration_pb2, struct_pb2

    from arena.sdk.messages import message_to_dict
    value = struct_pb2.Struct()
    value.update({"name": "mandala", "seats": [1.0, 2.0]})
    assert message_to_dict(value) == {"name": "mandala", "seats": [1.0, 2.0]}
    assert message_to_dict(duration_pb2.Duration(seconds=3)) == "3s"
