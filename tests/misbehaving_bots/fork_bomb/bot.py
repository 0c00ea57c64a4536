"""At its first act, forks without end: every process it makes forks too."""
import os
import sys
import time

from arena.sdk import Bot


class ForkBomb(Bot):
    name = "fork_bomb"

    def act(self, observation, legal_moves):
        print("fork_bomb: bombing", file=sys.stderr, flush=True)
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.01)  # at the process limit: try again


if __name__ == "__main__":
    ForkBomb().run()
