"""Test bot `pinned`: random moves; at each match it reports the CPUs it may run on and
whether it could widen them to every CPU of the machine (tests/test_pinning.py)."""
import os
import random
import sys

from arena.sdk import Bot


class PinnedBot(Bot):
    name = "pinned"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        before = sorted(os.sched_getaffinity(0))
        try:
            os.sched_setaffinity(0, range(os.cpu_count()))
            widened = "widened"
        except OSError as error:
            widened = f"refused {error.errno}"
        after = sorted(os.sched_getaffinity(0))
        print(f"pinned: cpus {before} then {after}, {widened}", file=sys.stderr, flush=True)

    def act(self, observation, legal_moves):
        return self.rng.choice(legal_moves)


if __name__ == "__main__":
    PinnedBot().run()
