"""Hostile test bot `deal_memory`: one identity per process; logs the matches it meets.

A process that met one deal in two seatings would know, in the second, the hand it held in
the first. This bot logs `memory: PROCESS new RNG_SEED SEAT` at every new match and
`memory: PROCESS over RNG_SEED` at every MatchOver, so a test can map each match to its deal
and check that no process met a deal twice, and that every MatchOver arrived. It also
fingerprints the starting view of every deal it meets in seat 0 at ply 0 (the whole
observation) and logs `memory: PROCESS REPEAT` if one comes back. It plays randomly.
"""
import json
import random
import secrets
import sys

from arena.sdk import Bot

PROCESS = secrets.token_hex(6)


class DealMemory(Bot):
    name = "deal_memory"

    def __init__(self):
        super().__init__()
        self.seen: set[str] = set()

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        self.first = True
        self.log(f"new {match.rng_seed} {match.seat}")

    def act(self, observation, legal_moves):
        if self.first and self.match.seat == 0 and observation.get("to_move", 0) == 0:
            fingerprint = json.dumps(observation, sort_keys=True)
            if fingerprint in self.seen:
                self.log("REPEAT")
            self.seen.add(fingerprint)
        self.first = False
        return self.rng.choice(legal_moves)

    def match_over(self, result):
        self.log(f"over {self.match.rng_seed}")

    def log(self, text):
        print(f"memory: {PROCESS} {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    DealMemory().run()
