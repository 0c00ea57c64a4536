"""engine.shuffle deals exactly what `random.Random.shuffle` deals (the same seed, the same
deck), and leaves the drawing to the generator when it is not a plain `random.Random`."""
from __future__ import annotations

import random

from engine.shuffle import shuffle


def test_shuffle_gives_the_standard_librarys_order_and_leaves_the_rng_in_the_same_state():
    for length in (0, 1, 2, 3, 7, 64, 65, 88, 108, 300):
        for seed in range(40):
            ours, theirs = list(range(length)), list(range(length))
            rng_ours, rng_theirs = random.Random(seed), random.Random(seed)
            shuffle(ours, rng_ours)
            rng_theirs.shuffle(theirs)
            assert ours == theirs, (length, seed)
            assert rng_ours.random() == rng_theirs.random()


def test_a_generator_of_its_own_shuffles_as_it_always_did():
    class Reversing(random.Random):
        def shuffle(self, x, *args):          # a subclass that deals its own way
            x.reverse()

    cards = [1, 2, 3]
    shuffle(cards, Reversing(1))
    assert cards == [3, 2, 1]
