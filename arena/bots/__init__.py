"""Bots as the arena sees them: manifests (`arena.bots.manifest`, no gRPC) and the gRPC host
that runs bot processes (`arena.bots.host`).

`from arena.bots import BotHost, BotSpec` works as before; the host's names are loaded on
first use, so resolving or checking a bot does not import gRPC.
"""
from __future__ import annotations

from arena.bots.manifest import (BUILTIN, BotSpec, BuiltinBot, folder_hash, is_builtin,
                                 resolve_bot)

_HOST_NAMES = ("BotHost", "BotProcess", "BotSeat", "PROTOCOL_VERSION", "MAX_MOVE_CHARS",
               "MAX_BOT_MESSAGE_BYTES", "DEFAULT_LOG_CAP", "SESSION_METADATA", "EXIT_GRACE")

__all__ = ["BUILTIN", "BotSpec", "BuiltinBot", "folder_hash", "is_builtin", "resolve_bot",
           *_HOST_NAMES]


def __getattr__(name: str):
    if name in _HOST_NAMES:
        from arena.bots import host
        return getattr(host, name)
    raise AttributeError(f"module 'arena.bots' has no attribute {name!r}")
