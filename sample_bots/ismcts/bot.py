"""Sample bot `ismcts`: information-set MCTS on the engine, guided by the greedy heuristic.

In `flowers` it searches the draws (where the hidden pile and the other gardens matter) and
lays the drawn card where greedy's estimate says: a placement hides nothing, and the search's
averages over later turns chose worse cells than that one-ply estimate (4 of 12 games won
against greedy placing by search, 8 of 12 drawing by search and placing by greedy).

Thinks for a share of its clock (arena.sdk.ismcts.time_budget), or for a fixed number of
iterations with `--iterations N`: then its moves depend only on the match's rng_seed and what
it is shown, so a match against deterministic bots replays exactly.
"""
import argparse
import random
import time

from arena.sdk import Bot, strategies
from arena.sdk.ismcts import Searcher, time_budget
from engine import registry


class IsmctsBot(Bot):
    name = "ismcts"
    version = "1"

    def __init__(self, iterations=None):
        super().__init__()
        self.iterations = iterations

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        game = registry.get(match.game)
        options = game.parse_options([f"{key}={value}" for key, value in match.options.items()])
        self.searcher = Searcher(match.game, options)
        self.greedy = strategies.get("greedy", match.game)

    def act(self, observation, legal_moves):
        started = time.perf_counter()
        if len(legal_moves) == 1:
            return legal_moves[0]
        hint = self.greedy(observation, legal_moves, self.rng)
        if self.match.game == "flowers" and observation["phase"] == "place":
            return hint
        seconds = None
        if self.iterations is None:
            clock = self.clock
            seconds = time_budget(clock.remaining, clock.move_limit, clock.allowed,
                                  self.match.increment) - (time.perf_counter() - started)
        return self.searcher.search(observation, legal_moves, self.rng,
                                    iterations=self.iterations, seconds=seconds,
                                    hint=hint).move


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations per move instead of a share of the clock")
    IsmctsBot(parser.parse_args().iterations).run()
