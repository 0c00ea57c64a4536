"""`shuffle(cards, rng)`: `rng.shuffle(cards)`, the same order from the same draws, in half the
time.

Dealing shuffles a whole deck at the start of every match, and in a random playout that
shuffle costs as much as a fifth of the game. The standard library's shuffle calls a helper
per card (`_randbelow`); this one draws the same random bits inline, so a seed deals exactly
the deck it always dealt. tests/test_shuffle.py checks that against `random.Random.shuffle`.
"""
from __future__ import annotations

import random
from typing import Any


def shuffle(cards: list[Any], rng: random.Random) -> None:
    """Shuffles `cards` in place exactly as `rng.shuffle(cards)` would."""
    if type(rng) is not random.Random:     # a subclass may draw its numbers otherwise
        rng.shuffle(cards)
        return
    getrandbits = rng.getrandbits
    # CPython's Random.shuffle: for i from the last index down to 1, swap card i with card
    # j = _randbelow(i + 1), which draws bit_length(i + 1) bits until the number is <= i. The
    # i are taken in runs of one bit length.
    runs = _RUNS.get(len(cards))
    if runs is None:
        runs = _runs(len(cards))
    for bits, first, stop in runs:
        for i in range(first, stop, -1):
            j = getrandbits(bits)
            while j > i:
                j = getrandbits(bits)
            cards[i], cards[j] = cards[j], cards[i]


def _runs(n: int) -> list[tuple[int, int, int]]:
    """The indices i from n - 1 down to 1 in runs of the same bit_length(i + 1): (bits,
    first i, the i past the run's last)."""
    runs = []
    i = n - 1
    while i > 0:
        bits = (i + 1).bit_length()
        stop = max((1 << bits - 1) - 2, 0)   # bit_length(stop + 1) is bits - 1 (or stop is 0)
        runs.append((bits, i, stop))
        i = stop
    return runs


_RUNS = {n: _runs(n) for n in range(257)}   # every deck dealt here
