"""Sample bot `greedy`: the built-in one-ply heuristic of each game, run as a subprocess."""
import random

from arena.sdk import Bot, strategies


class GreedyBot(Bot):
    name = "greedy"
    version = "1"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)

    def act(self, observation, legal_moves):
        choose = strategies.get("greedy", self.match.game)
        return choose(observation, legal_moves, self.rng)


if __name__ == "__main__":
    GreedyBot().run()
