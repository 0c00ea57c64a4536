"""Thinks 0.1 s (or as many seconds as its first argument says), then plays a random legal
move (seeded per match, as the sample bot `random` is): a long match."""
import random
import sys
import time

from arena.sdk import Bot

THINK = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1


class Slow(Bot):
    name = "slow"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)

    def act(self, observation, legal_moves):
        time.sleep(THINK)
        return self.rng.choice(legal_moves)


if __name__ == "__main__":
    Slow().run()
