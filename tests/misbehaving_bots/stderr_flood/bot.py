"""Writes 1 GiB to stderr before it connects, then plays legal moves."""
import os

from arena.sdk import Bot


class StderrFlood(Bot):
    name = "stderr_flood"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    block = b"flood\n" * ((1 << 20) // 6)
    written = 0
    while written < 1 << 30:
        written += os.write(2, block)
    StderrFlood().run()
