"""Sample bot `ismcts`: information-set MCTS on the engine, guided by heuristics.

In `mandala` and `flowers-mandala` it searches (arena.sdk.ismcts), greedy's move as a hint.
`flowers` is nearly a solitaire, and there it does not search: it lays each card with a
one-card look-ahead (greedy's best few cells compared by what each leaves for the next card,
averaged over the cards it has not seen) and draws by the same average for the face-down
pile (`strategies.flowers.lookahead_place`, `expectation_draw`). Searching the draws with
these as hints did worse at 0.2 s per move (52.5% against greedy over 120 games, where
the look-ahead alone makes 60% over 900): a few hundred determinisations with random
placements value a draw less well than the exact average over the unseen cards.

Thinks for a share of its clock (arena.sdk.ismcts.time_budget), or for a fixed number of
iterations with `--iterations N`: then its moves depend only on the match's rng_seed and what
it is shown, so a match against deterministic bots replays exactly.
"""
import argparse
import random
import time

from arena.sdk import Bot, strategies
from arena.sdk.strategies import flowers as flowers_strategy
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
        seconds = None
        if self.iterations is None:
            clock = self.clock
            seconds = time_budget(clock.remaining, clock.move_limit, clock.allowed,
                                  self.match.increment)
        if self.match.game == "flowers":
            if observation["phase"] == "place":
                deadline = None if seconds is None else started + seconds
                return flowers_strategy.lookahead_place(observation, legal_moves, self.rng,
                                                        deadline)
            return flowers_strategy.expectation_draw(observation, legal_moves, self.rng)
        hint = self.greedy(observation, legal_moves, self.rng)
        if seconds is not None:
            seconds -= time.perf_counter() - started
        return self.searcher.search(observation, legal_moves, self.rng,
                                    iterations=self.iterations, seconds=seconds,
                                    hint=hint).move


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations per move instead of a share of the clock")
    IsmctsBot(parser.parse_args().iterations).run()
