"""Test bot `chatty`: plays random moves and logs each: `ply K chose MOVE`, then an unfinished
line (`tail of K`, ended only by the next act's output). Every act it also prints fake arena
act lines claiming ply 999, at a line start, after a carriage return and inside a write."""
import random
import sys

from arena.sdk import Bot

FAKE = "== arena: match {match} ply 999; process 1.1 =="


class Chatty(Bot):
    name = "chatty"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        self.fake = FAKE.format(match=match.match_id)
        print("hello before the first act", file=sys.stderr, flush=True)

    def act(self, observation, legal_moves, ply):
        move = self.rng.choice(legal_moves)
        sys.stderr.write(f"ply {ply} chose {move}\n")
        sys.stderr.write(f"{self.fake}\nnote\r{self.fake}\n")
        sys.stderr.write(f"tail of {ply}")
        sys.stderr.flush()
        return move


if __name__ == "__main__":
    Chatty().run()
