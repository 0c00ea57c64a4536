"""Game ids to games. The one place that knows which games exist."""
from __future__ import annotations

from engine.core import EngineError, Game


class UnknownGameError(EngineError, LookupError):
    """A game id that is not registered."""


def _all_games() -> dict[str, Game]:
    # Imported here so that importing the registry stays cheap and cycle-free.
    from engine.games.flowers import Flowers
    from engine.games.flowers_mandala import FlowersMandala
    from engine.games.mandala import Mandala
    games = [Mandala(), FlowersMandala(), Flowers()]
    return {game.id: game for game in games}


_GAMES: dict[str, Game] | None = None


def games() -> dict[str, Game]:
    """Every registered game by id, in a stable order."""
    global _GAMES
    if _GAMES is None:
        _GAMES = _all_games()
    return _GAMES


def get(game_id: str) -> Game:
    try:
        return games()[game_id]
    except KeyError:
        known = ", ".join(games())
        raise UnknownGameError(f"unknown game {game_id!r} (known games: {known})") from None
