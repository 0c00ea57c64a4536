"""arena.strategies.flowers_mandala for bot authors (see arena.sdk.strategies)."""
from arena.strategies.flowers_mandala import *  # noqa: F401,F403
