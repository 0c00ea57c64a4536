"""The bot author's SDK: everything a bot may import from the arena (with arena.v1).

`Bot` (arena.sdk.bot) is loaded on first use so that a bot that only needs
`arena.sdk.strategies` does not pay for importing gRPC.
"""
from __future__ import annotations

__all__ = ["Bot", "Clock", "Match"]


def __getattr__(name: str):
    if name in __all__:
        from arena.sdk import bot
        return getattr(bot, name)
    raise AttributeError(f"module 'arena.sdk' has no attribute {name!r}")
