"""Hostile test bot `seed_cracker`: tries to rebuild its deal from seeds it can guess.

At its first decision of a match in seat 0 (ply 0, when the observation is exactly the deal's
starting view) it deals every candidate seed with the engine and compares. The candidates:
seeds a person would type (0 .. TYPED), the deal seeds of the old unkeyed league scheme
(sha256 of "arena-deal:LEAGUE:DEAL" for small league seeds), and those of its candidates
whose old unkeyed seat hash equals its rng_seed. It logs `cracker: RNG_SEED searched N
candidates, found none`, or for a hit `cracker: RNG_SEED CRACKED seed S setup SETUP` with
the whole deal that seed makes (every hand, cup and the deck's order): a claim a test can
check against the real deal. A seat's first view is small, so some seed may show it by
chance, and even deal the other hands the same (hands are a handful of colours), yet be
wrong about the deck. Then it plays randomly.
"""
import hashlib
import json
import random
import sys

from arena.sdk import Bot
from engine import registry

TYPED = 3000
LEAGUE_SEEDS, DEALS = 100, 20


def old_deal_seed(league_seed: int, deal_index: int) -> int:
    digest = hashlib.sha256(f"arena-deal:{league_seed}:{deal_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def old_seat_seed(match_seed: int, seat: int) -> int:
    digest = hashlib.sha256(f"arena-seat:{match_seed}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def candidates() -> list[int]:
    typed = list(range(TYPED))
    league = [old_deal_seed(league, deal) for league in range(LEAGUE_SEEDS)
              for deal in range(DEALS)]
    return typed + league


def crack(game_id: str, players: int, options: dict, seat: int, observation: dict,
          rng_seed: int) -> tuple[int | None, dict | None, int]:
    """(the first seed whose deal shows exactly `observation` to `seat`, or None; that deal's
    setup; candidates tried). A seed whose old seat hash is `rng_seed` is tried first."""
    game = registry.get(game_id)
    seeds = candidates()
    seeds.sort(key=lambda seed: old_seat_seed(seed, seat) != rng_seed)
    for seed in seeds:
        state = game.new_state(players, options, seed=seed)
        if state.observation(seat) == observation:
            return seed, state.setup, len(seeds)
    return None, None, len(seeds)


class SeedCracker(Bot):
    name = "seed_cracker"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        self.first = True

    def act(self, observation, legal_moves):
        match = self.match
        if self.first and match.seat == 0:
            options = registry.get(match.game).parse_options(
                [f"{key}={value}" for key, value in match.options.items()])
            seed, setup, tried = crack(match.game, match.players, options, match.seat,
                                       observation, match.rng_seed)
            if seed is None:
                print(f"cracker: {match.rng_seed} searched {tried} candidates, found none",
                      file=sys.stderr)
            else:
                print(f"cracker: {match.rng_seed} CRACKED seed {seed} setup "
                      f"{json.dumps(setup)}", file=sys.stderr)
            sys.stderr.flush()
        self.first = False
        return self.rng.choice(legal_moves)


if __name__ == "__main__":
    SeedCracker().run()
