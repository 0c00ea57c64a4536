"""arena.strategies.mandala for bot authors (see arena.sdk.strategies)."""
from arena.strategies.mandala import *  # noqa: F401,F403
