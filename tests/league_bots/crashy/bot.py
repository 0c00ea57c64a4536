"""Test bot `crashy`: random moves, but its process exits at its third decision whenever the
arena's per-match seed is divisible by 3 (a crash mid-match, reproducible)."""
import os
import random

from arena.sdk import Bot


class CrashyBot(Bot):
    name = "crashy"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        self.crash_at = 2 if match.rng_seed % 3 == 0 else None
        self.decisions = 0

    def act(self, observation, legal_moves):
        if self.decisions == self.crash_at:
            os._exit(3)
        self.decisions += 1
        return self.rng.choice(legal_moves)


if __name__ == "__main__":
    CrashyBot().run()
