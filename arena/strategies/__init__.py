"""Ready-made move choosers: the built-in bots the arena plays in process (arena.match), and
what bot authors use through the SDK (`arena.sdk.strategies` gives them these).

A strategy is `choose(observation, legal_moves, rng) -> move`: it sees exactly what a bot
sees (the observation dict of engine/core.py and the sorted legal moves), never the state.
Per game, `arena/strategies/<game module>.py` defines `greedy`.
"""
from __future__ import annotations

import importlib
import random
from typing import Callable

Strategy = Callable[[dict, list, random.Random], str]

NAMES = ("random", "greedy")


def random_move(observation: dict, legal_moves: list, rng: random.Random) -> str:
    """Any legal move, uniformly."""
    return rng.choice(legal_moves)


def get(name: str, game_id: str) -> Strategy:
    """The strategy `name` for game `game_id`; LookupError naming the known ones."""
    if name == "random":
        return random_move
    if name == "greedy":
        module = importlib.import_module(
            f"arena.strategies.{game_id.replace('-', '_')}")
        return module.greedy
    raise LookupError(f"unknown built-in bot {name!r} (built-in bots: {', '.join(NAMES)})")
