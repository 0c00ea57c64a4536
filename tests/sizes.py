"""How many games the property tests play: their counts times ARENA_TEST_SCALE (default 1),
or `pytest --scale X`. A count scaled down stays at least 1 game.

    ARENA_TEST_SCALE=0.5 python3 -m pytest tests/test_mandala_properties.py    # a quick look
    python3 -m pytest --scale 10 -m slow                                       # a long soak

Statistical checks (greedy beats random) keep their counts: fewer games would make them flaky.
The rules' property modules played twice their counts until 2026-12-06: at half of those, the
engine's line and branch coverage (coverage.py --branch over `engine`) was the same, line for
line, so the suite plays half (`--scale 2`: at least the old counts).
"""
from __future__ import annotations

import os

MIN_SCALE = 0.5


def scale() -> float:
    value = os.environ.get("ARENA_TEST_SCALE", "1")
    try:
        factor = float(value)
    except ValueError:
        raise SystemExit(f"ARENA_TEST_SCALE must be a number, not {value!r}") from None
    if factor < MIN_SCALE:   # fewer games and the coverage checks (e.g. "hidden cards
        # were shuffled often enough") cannot be met: they would fail, not the rules
        raise SystemExit(f"ARENA_TEST_SCALE must be at least {MIN_SCALE}, not {value!r}")
    return factor


def scaled(count: int) -> int:
    """`count` games at the chosen scale (at least 1)."""
    return max(1, round(count * scale()))
