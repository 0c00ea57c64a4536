"""The ready-made strategies for bot authors: the arena's own built-in bots
(arena.strategies), under the SDK's name. `strategies.get("greedy", game)` and the game
modules (`from arena.sdk.strategies import flowers`) work as they always have."""
from arena.strategies import NAMES, Strategy, get, random_move

__all__ = ["NAMES", "Strategy", "get", "random_move"]
