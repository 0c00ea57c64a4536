"""Arena's authoritative game engines: pure rules, no I/O. See engine/core.py."""
from engine.core import (CHANCE, EngineError, Game, GameNotOverError, IllegalMoveError,
                         InvalidOptionError, InvalidSetupError, Option, PlayerCountError, State)

__all__ = ["CHANCE", "EngineError", "Game", "GameNotOverError", "IllegalMoveError",
           "InvalidOptionError", "InvalidSetupError", "Option", "PlayerCountError", "State"]
