"""arena.strategies.flowers for bot authors (see arena.sdk.strategies)."""
from arena.strategies.flowers import *  # noqa: F401,F403
