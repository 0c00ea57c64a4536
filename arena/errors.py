"""Base of the platform's errors. Every message says what is wrong and what to do about it."""


class ArenaError(Exception):
    """An error of the platform (not of a game's rules) that a user can act on."""
