"""Spins the CPU for a fixed time (seconds of CPU, the first argument) at its first move of
every match, then plays the first legal move: a pooled process of it uses up its CPU-time
limit (RLIMIT_CPU, over the process's whole life) after a few matches."""
import sys
import time

from arena.sdk import Bot


class ThinksHard(Bot):
    name = "thinks_hard"

    def new_match(self, match):
        self.thought = False

    def act(self, observation, legal_moves):
        if not self.thought:
            self.thought = True
            until = time.process_time() + float(sys.argv[1])
            while time.process_time() < until:
                pass
        return legal_moves[0]


if __name__ == "__main__":
    ThinksHard().run()
