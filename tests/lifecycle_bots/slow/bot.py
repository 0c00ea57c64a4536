"""Thinks 0.1 s, then plays a random legal move: a long match."""
import random
import time

from arena.sdk import Bot


class Slow(Bot):
    name = "slow"

    def act(self, observation, legal_moves):
        time.sleep(0.1)
        return random.choice(legal_moves)


if __name__ == "__main__":
    Slow().run()
