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
    # j = _randbelow(i + 1), which draws bit_length(i + 1) bits until the number is <= i.
    bit_lengths = _BIT_LENGTHS if len(cards) <= len(_BIT_LENGTHS) else _bit_lengths(len(cards))
    for i in range(len(cards) - 1, 0, -1):
        bits = bit_lengths[i]
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


def _bit_lengths(n: int) -> list[int]:
    """bit_length(i + 1) for i below n."""
    return [(i + 1).bit_length() for i in range(n)]


_BIT_LENGTHS = _bit_lengths(256)          # enough for every deck dealt here
