"""Sleeps argv[1] seconds before it connects to the arena, then plays the first legal move.
It sleeps before it imports anything: all its start-up is the sleep, so on a loaded machine
the arena cannot mistake it for a bot kept off the CPU (its imports would wait for one)."""
import sys
import time

if __name__ == "__main__":
    time.sleep(float(sys.argv[1]))

from arena.sdk import Bot  # noqa: E402


class SlowStart(Bot):
    name = "slow_start"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    SlowStart().run()
