"""Sleeps for 85% of the allowed time on each of its first 5 moves of a match, then answers
at once: on time by itself, using next to no CPU, unless the arena is kept from reading
its reply (a short match for the test that needs it on time when nothing is in the way)."""
import time

from arena.sdk import Bot

SLOW_MOVES = 5


class Punctual(Bot):
    name = "punctual"

    def new_match(self, match):
        self.moves = 0

    def act(self, observation, legal_moves):
        self.moves += 1
        if self.moves <= SLOW_MOVES:
            time.sleep(0.85 * (self.clock.allowed or 0.1))
        return legal_moves[0]


if __name__ == "__main__":
    Punctual().run()
