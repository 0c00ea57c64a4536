"""Sample bot `random`: plays any legal move, uniformly, in every game."""
import random

from arena.sdk import Bot


class RandomBot(Bot):
    name = "random"
    version = "1"

    def new_match(self, match):
        # The arena's per-match seed makes the bot's choices reproducible.
        self.rng = random.Random(match.rng_seed)

    def act(self, observation, legal_moves):
        return self.rng.choice(legal_moves)


if __name__ == "__main__":
    RandomBot().run()
