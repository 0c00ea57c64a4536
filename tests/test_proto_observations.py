"""Every observation of every game crosses the wire unchanged.

For each registered game and player count, over random play, each seat's observation dict
fills the game's typed message (no unknown field, no wrong type) and the SDK's conversion
gives back an equal dict: a subprocess bot sees exactly what an in-process strategy sees.
"""
from __future__ import annotations

import random

import pytest

from arena import wire
from arena.sdk.bot import observation_dict
from arena.v1 import arena_pb2
from engine import registry
from engine.core import CHANCE

GAMES_PER_CASE = 4

CASES = [(game_id, players) for game_id, game in registry.games().items()
         for players in range(game.min_players, game.max_players + 1)]


def over_the_wire(game_id: str, observation: dict) -> dict:
    act = arena_pb2.ActRequest()
    wire.fill_observation(act, game_id, observation)
    received = arena_pb2.ActRequest.FromString(act.SerializeToString())
    assert received.WhichOneof("observation") == wire.observation_field(game_id)
    return observation_dict(received)


@pytest.mark.parametrize("game_id, players", CASES)
def test_every_observation_round_trips(game_id, players):
    game = registry.get(game_id)
    for seed in range(GAMES_PER_CASE):
        rng = random.Random(seed)
        state = game.new_state(players, {}, seed=seed)
        while True:
            for seat in range(players):
                observation = state.observation(seat)
                assert over_the_wire(game_id, observation) == observation
            mover = state.to_move()
            if mover is None:
                break
            state.apply(state.sample_chance(rng) if mover == CHANCE
                        else rng.choice(state.legal_moves()))


def test_every_game_has_its_observation_field():
    fields = {field.name for field in
              arena_pb2.ActRequest.DESCRIPTOR.oneofs_by_name["observation"].fields}
    assert {wire.observation_field(game_id) for game_id in registry.ids()} <= fields
