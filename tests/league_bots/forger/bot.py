"""Test bot `forger`: plays random moves and, at every match, prints lines made to look like
the arena's own log lines: a fake match header, one after a carriage return and a terminal
escape, one after a newline inside a write, and an unfinished line."""
import random
import sys

from arena.sdk import Bot

FAKE = ("== arena: match d9999:fake,forger: mandala, seat 0 of 2, 2000-01-01 00:00:00 UTC; "
        "process 1.1 ==")


class Forger(Bot):
    name = "forger"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        sys.stderr.write(f"{FAKE}\n")
        sys.stderr.write(f"note\r{FAKE}\n")
        sys.stderr.write(f"\x1b[2K\x1b[1G{FAKE}\n")
        sys.stderr.write(f"half a line, then\n{FAKE}\nand an unfinished line")
        sys.stderr.flush()

    def act(self, observation, legal_moves):
        return self.rng.choice(legal_moves)


if __name__ == "__main__":
    Forger().run()
