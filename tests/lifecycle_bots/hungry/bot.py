"""Computes for 40% of each move's allowed time, counted in CPU time, then plays a legal
move: on time on a machine that gives it its core, late on one that does not."""
import time

from arena.sdk import Bot


class Hungry(Bot):
    name = "hungry"

    def act(self, observation, legal_moves):
        budget = 0.4 * (self.clock.allowed or 0.1)
        start = time.thread_time()
        while time.thread_time() - start < budget:
            pass
        return legal_moves[0]


if __name__ == "__main__":
    Hungry().run()
