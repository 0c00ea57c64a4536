"""What mirrored deals buy: the variance of a mirrored set of games (one deal in every seat
rotation) against as many independent games (a deal of their own each, seats rotated alike),
per game and player count, for close and for distant bots (and, asked for by name, for
`search`: ismcts at a few iterations against greedy). Played in process with the engines
and the SDK's strategies.

A table is bot A against `players - 1` copies of bot B. For each of `deals` deals the table
plays every rotation of its seats, as a league's mirrored mode does; A's result in a game is
its share of pairwise points (1 per opponent beaten, 1/2 per tie), what the ratings see.

- Mirrored: the variance, over deals, of A's mean result over the rotations of one deal.
- Independent: the same mean over rotations each on a deal of its own. Games of different
  deals are independent, so its variance is the sum of the per-rotation variances (each
  estimated over deals from the very same games) over players squared.

The ratio independent / mirrored is what mirroring buys: a mirrored set of n games is worth
n x ratio independent games (ratio 1: nothing; 2: a pair counts as four games). Its 90%
interval is a bootstrap over deals. With one player (`flowers` 1p) the comparison is of two
bots on one shared deal: the variance of A's score minus B's on a shared deal against on
two deals of their own.

Deals and chance draws come from a seed as in `arena.match.play_match`; each game's bots
draw from generators of their own, so two seatings of one deal differ in the bots' random
choices as they would in a league.
"""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

from arena.stats.botstats import pairwise_share
from arena.sdk import strategies
from arena.sdk.ismcts import Searcher
from arena.sdk.strategies import Strategy
from engine import registry
from engine.core import CHANCE

CONFIGURATIONS = (("mandala", 2), ("flowers-mandala", 2), ("flowers-mandala", 3),
                  ("flowers-mandala", 4), ("flowers", 2), ("flowers", 1))
"""Every game and player count a league plays (flowers 1p: shared deals between bots)."""
NOISE = 0.1
"""Share of random moves of the close opponent, `greedy-noisy`."""
SEARCH_ITERATIONS = 30
"""ISMCTS iterations per move of the `search` pairing: close to greedy, and fast enough."""
BOOTSTRAP = 200
"""Resamples of the deals for the ratio's interval."""


def noisy(strategy: Strategy, share: float) -> Strategy:
    """`strategy`, but a random legal move instead with probability `share`."""
    def choose(observation: dict, legal_moves: list, rng: random.Random) -> str:
        if rng.random() < share:
            return rng.choice(legal_moves)
        return strategy(observation, legal_moves, rng)
    return choose


def searching(game_id: str, iterations: int) -> Strategy:
    """The ismcts sample bot's search at a fixed iteration count, greedy's move as its hint."""
    searcher, greedy = Searcher(game_id), strategies.get("greedy", game_id)

    def choose(observation: dict, legal_moves: list, rng: random.Random) -> str:
        if len(legal_moves) == 1:
            return legal_moves[0]
        hint = greedy(observation, legal_moves, rng)
        return searcher.search(observation, legal_moves, rng, iterations=iterations,
                               hint=hint).move
    return choose


PAIRINGS: dict[str, tuple[str, str, Callable[[str], tuple[Strategy, Strategy]]]] = {
    "close": ("greedy", f"greedy-noisy ({NOISE:.0%} random moves)",
              lambda game: (strategies.get("greedy", game),
                            noisy(strategies.get("greedy", game), NOISE))),
    "distant": ("greedy", "random",
                lambda game: (strategies.get("greedy", game), strategies.random_move)),
    "search": (f"ismcts ({SEARCH_ITERATIONS} iterations)", "greedy",
               lambda game: (searching(game, SEARCH_ITERATIONS), strategies.get("greedy", game))),
}
"""Kind -> (bot A, bot B, the two strategies for a game)."""
DEFAULT_KINDS = ("close", "distant")
"""`search` is some 30 times slower: asked for by name."""


def play(game_id: str, seed: int, seating: Sequence[Strategy], bot_seed: str) -> list:
    """One game of the strategies in `seating` on the deal `seed`: (scores, ranks)."""
    state = registry.get(game_id).new_state(len(seating), seed=seed)
    chance_rng = random.Random(f"arena-chance:{seed}")   # as arena.match draws chance
    rngs = [random.Random(f"{bot_seed}:{seat}") for seat in range(len(seating))]
    while not state.is_over():
        mover = state.to_move()
        if mover == CHANCE:
            state.apply(state.sample_chance(chance_rng))
            continue
        state.apply(seating[mover](state.observation(mover), state.legal_moves(), rngs[mover]))
    return [state.scores(), state.ranks()]


def deal_results(game_id: str, players: int, kind: str, deals: int, seed: int
                 ) -> list[list[float]]:
    """Per deal, A's result in each seating (rotation r puts A in seat r); with one player,
    [A's score, B's score] on the shared deal."""
    a, b = PAIRINGS[kind][2](game_id)
    rows = []
    for deal in range(deals):
        deal_seed = random.Random(f"arena-bench-seating:{seed}:{deal}").getrandbits(63)
        if players == 1:
            rows.append([float(play(game_id, deal_seed, [bot], f"{deal}:{index}")[0][0])
                         for index, bot in enumerate((a, b))])
            continue
        row = []
        for rotation in range(players):
            seating = [b] * players
            seating[rotation] = a
            _, ranks = play(game_id, deal_seed, seating, f"{deal}:{rotation}")
            row.append(pairwise_share(ranks, rotation))
        rows.append(row)
    return rows


def variance_ratio(rows: Sequence[Sequence[float]], solo: bool = False
                   ) -> tuple[float, float, float]:
    """(independent variance, mirrored variance, ratio) of the set's result from per-deal
    rows (solo: of A's score minus B's)."""
    n = len(rows[0])
    if solo:   # A - B on one deal, against A and B each on a deal of its own
        mirrored = statistics.variance([row[0] - row[1] for row in rows])
        independent = sum(statistics.variance([row[i] for row in rows]) for i in range(2))
    else:
        mirrored = statistics.variance([statistics.fmean(row) for row in rows])
        independent = sum(statistics.variance([row[i] for row in rows])
                          for i in range(n)) / n ** 2
    if not mirrored:   # no spread at all (A always wins): nothing for mirroring to cancel
        return independent, mirrored, math.inf if independent else math.nan
    return independent, mirrored, independent / mirrored


@dataclass(frozen=True)
class Figure:
    game: str
    players: int
    kind: str
    bot_a: str
    bot_b: str
    deals: int
    a_mean: float
    """A's mean result (share of pairwise points; with one player, its mean score minus B's)."""
    independent_variance: float
    mirrored_variance: float
    ratio: float
    ratio_low: float
    ratio_high: float
    """The ratio's 90% bootstrap interval over deals."""

    @property
    def worth(self) -> float:
        """Independent games one mirrored set is worth (2 games per set with one player)."""
        return max(self.players, 2) * self.ratio

    def to_json(self) -> dict:
        """JSON has no NaN or infinity: a ratio without a finite value is null."""
        figures = {**asdict(self), "worth_games": round(self.worth, 2)}
        return {key: None if isinstance(value, float) and not math.isfinite(value) else value
                for key, value in figures.items()}


def measure(game_id: str, players: int, kind: str, deals: int, seed: int = 1) -> Figure:
    if deals < 3:
        raise ValueError(f"the variances need at least 3 deals, not {deals}")
    rows = deal_results(game_id, players, kind, deals, seed)
    solo = players == 1
    independent, mirrored, ratio = variance_ratio(rows, solo)
    rng = random.Random(f"arena-bench-seating-bootstrap:{seed}")
    ratios = sorted(variance_ratio([rng.choice(rows) for _ in rows], solo)[2]
                    for _ in range(BOOTSTRAP))
    ratios = [value for value in ratios if not math.isnan(value)] or [math.nan]
    mean = (statistics.fmean(row[0] - row[1] for row in rows) if solo
            else statistics.fmean(statistics.fmean(row) for row in rows))
    bot_a, bot_b = PAIRINGS[kind][:2]
    return Figure(game_id, players, kind, bot_a, bot_b, deals, round(mean, 3),
                  round(independent, 5), round(mirrored, 5), round(ratio, 2),
                  round(ratios[int(0.05 * len(ratios))], 2),
                  round(ratios[int(0.95 * len(ratios))], 2))


def measure_all(configurations: Sequence[tuple[str, int]], kinds: Sequence[str], deals: int,
                seed: int = 1) -> list[Figure]:
    return [measure(game_id, players, kind, deals, seed)
            for game_id, players in configurations for kind in kinds]
