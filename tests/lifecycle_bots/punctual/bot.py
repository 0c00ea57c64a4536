"""Sleeps for 85% of each move's allowed time, then plays a legal move: on time by itself,
using next to no CPU, unless the arena is kept from reading its reply."""
import time

from arena.sdk import Bot


class Punctual(Bot):
    name = "punctual"

    def act(self, observation, legal_moves):
        time.sleep(0.85 * (self.clock.allowed or 0.1))
        return legal_moves[0]


if __name__ == "__main__":
    Punctual().run()
