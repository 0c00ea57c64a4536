"""Sleeps argv[1] seconds before it connects to the arena, then plays the first legal move."""
import sys
import time

from arena.sdk import Bot


class SlowStart(Bot):
    name = "slow_start"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    time.sleep(float(sys.argv[1]))
    SlowStart().run()
