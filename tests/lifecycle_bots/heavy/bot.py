"""Holds 500 MiB of touched memory for its whole life, and plays random legal moves."""
import random

from arena.sdk import Bot

BALLAST = bytearray(500 * 1024 * 1024)
for offset in range(0, len(BALLAST), 4096):
    BALLAST[offset] = 1   # touched: resident, not just reserved


class Heavy(Bot):
    name = "heavy"

    def act(self, observation, legal_moves):
        return random.choice(legal_moves)


if __name__ == "__main__":
    Heavy().run()
