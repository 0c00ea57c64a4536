"""Game ids to games. The one place that knows which games exist."""
from __future__ import annotations

import importlib

from engine.core import EngineError, Game


class UnknownGameError(EngineError, LookupError):
    """A game id that is not registered."""


# id -> "module:Class"; modules are imported on first use so the registry stays cheap.
_WHERE = {
    "mandala": "engine.games.mandala:Mandala",
    "flowers-mandala": "engine.games.flowers_mandala:FlowersMandala",
    "flowers": "engine.games.flowers:Flowers",
}
_LOADED: dict[str, Game] = {}


def ids() -> list[str]:
    return list(_WHERE)


def get(game_id: str) -> Game:
    """The game with this id; UnknownGameError naming the known ids."""
    if game_id not in _WHERE:
        raise UnknownGameError(
            f"unknown game {game_id!r} (known games: {', '.join(_WHERE)})")
    if game_id not in _LOADED:
        module_name, class_name = _WHERE[game_id].split(":")
        _LOADED[game_id] = getattr(importlib.import_module(module_name), class_name)()
    return _LOADED[game_id]


def games() -> dict[str, Game]:
    """Every registered game by id, in a stable order."""
    return {game_id: get(game_id) for game_id in _WHERE}
