"""The bot author's SDK: everything a bot may import from the arena (with arena.v1)."""
