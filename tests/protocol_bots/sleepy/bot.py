"""Thinks for a fixed time (seconds, the first argument) before each move, then plays the first."""
import sys
import time

from arena.sdk import Bot


class Sleepy(Bot):
    name = "sleepy"

    def act(self, observation, legal_moves):
        time.sleep(float(sys.argv[1]))
        return legal_moves[0]


if __name__ == "__main__":
    Sleepy().run()
