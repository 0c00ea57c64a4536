"""`arena bench ratings`: time the Elo fit and its intervals on simulated leagues.

The simulator draws match outcomes from known true ratings, in the shapes a league produces,
so both the benchmark and the tests can check the fit against the truth:

- 2 players: every deal is a seat-swapped pair. With probability `hand_luck` the deal has a
  lucky hand, and the two games are antithetic (one shared uniform U and 1 - U), so the
  results of a pair pull in opposite directions, as real paired deals do. Each game on its
  own wins, draws and loses with probabilities whose expected score is exactly the
  Bradley-Terry (Elo) expectation: the fit's model holds for every single game.
- 3-4 players: every deal is played in each seat rotation of a random table; a seat's
  finish is its strength plus Gumbel noise, so any two seats compare exactly as
  Bradley-Terry says (the difference of two Gumbel variables is logistic).
- 1 player: every bot plays every deal; the score is strength plus Gumbel noise plus a deal
  difficulty common to all bots (which the per-deal comparison cancels).
"""
from __future__ import annotations

import itertools
import math
import time
from statistics import NormalDist
from typing import Sequence

from arena.stats.ratings import ELO_PER_LOGIT, Outcome, fit_elo, ladder, pairwise_results
import numpy as np   # after arena.stats, which sets numpy's threads


def simulate(true_elo: Sequence[float], deals: int, players: int = 2, *, draw_share: float = 0.4,
             hand_luck: float = 0.5, round_robin: bool = False, form: float = 0.0,
             table_deals: bool = False, seed: int = 0) -> list[Outcome]:
    """Outcomes of `deals` simulated deals among bots "b0", "b1", ... of the given ratings.

    2-player games only: `draw_share` is the fraction of the closer side's winning chance
    turned into draws; `round_robin` plays every pair on each deal (as a league does) instead
    of one random pair; `form` (0 to 1) is how much a deal suits some bots more than others
    in all their games on it, at every table: a bot's form on the deal, shared by its games,
    shifts the normal quantile behind each game's uniform U (U stays uniform, so every game
    still follows the Elo expectation). `table_deals` gives every table of a round its own
    deal, as leagues schedule them: the form is then drawn per table, and the deal label names
    the table (`deals` counts rounds).
    """
    rng = np.random.default_rng(seed)
    normal = NormalDist()
    strength = np.asarray(true_elo, dtype=float) / ELO_PER_LOGIT
    bots = [f"b{i}" for i in range(len(strength))]
    outcomes: list[Outcome] = []

    def add(seats: Sequence[int], ranks: Sequence[int], scores: Sequence[float], deal: str):
        outcomes.append(Outcome(f"m{len(outcomes)}", len(outcomes),
                                tuple(bots[s] for s in seats), tuple(int(r) for r in ranks),
                                tuple(float(x) for x in scores), deal))

    for deal_index in range(deals):
        deal = f"d{deal_index}"
        if players == 1:
            finish = strength + rng.gumbel(size=len(strength)) + rng.normal()
            for bot in range(len(strength)):
                add([bot], [1], [finish[bot]], deal)
        elif players == 2:
            tables = (itertools.combinations(range(len(strength)), 2) if round_robin
                      else [rng.choice(len(strength), size=2, replace=False)])
            shape = rng.normal(size=len(strength)) if form else None
            for a, b in tables:
                if table_deals:
                    deal = f"d{deal_index}:b{a}+b{b}"
                    shape = rng.normal(size=len(strength)) if form else None
                expected = 1.0 / (1.0 + math.exp(strength[b] - strength[a]))
                draw = draw_share * 2 * min(expected, 1 - expected)
                if shape is None:
                    first_u = rng.random()
                    second_u = 1 - first_u if rng.random() < hand_luck else rng.random()
                else:   # a low U wins for a: a's good form lowers both of the pair's Us
                    shift = form * (shape[b] - shape[a]) / math.sqrt(2)
                    first_z = rng.normal()
                    second_z = -first_z if rng.random() < hand_luck else rng.normal()
                    first_u, second_u = (normal.cdf(shift + math.sqrt(1 - form ** 2) * z)
                                         for z in (first_z, second_z))
                _add_pair(add, a, b, expected, draw, first_u, second_u, deal)
        else:
            table = rng.choice(len(strength), size=players, replace=False)
            for shift in range(players):
                seats = np.roll(table, shift)
                finish = strength[seats] + rng.gumbel(size=players)
                ranks = [1 + int(np.sum(finish > f)) for f in finish]
                add(seats, ranks, finish, deal)
    return outcomes


def _add_pair(add, a: int, b: int, expected: float, draw: float, first_u: float,
              second_u: float, deal: str) -> None:
    """The seat-swapped games of a against b on one deal, from each game's uniform U."""
    for seats, u in (((a, b), first_u), ((b, a), second_u)):
        # Points of bot a: win below the first cut, draw up to the second.
        points = 1.0 if u < expected - draw / 2 else 0.5 if u < expected + draw / 2 else 0.0
        a_rank, b_rank = (1, 2) if points == 1 else (1, 1) if points == 0.5 else (2, 1)
        ranks = (a_rank, b_rank) if seats[0] == a else (b_rank, a_rank)
        add(seats, ranks, [3 - r for r in ranks], deal)


def run(matches: int = 100_000, bots: int = 20, seed: int = 1) -> list[str]:
    """Times the fit on `matches` simulated 2-player matches; returns the report lines."""
    rng = np.random.default_rng(seed)
    true_elo = rng.normal(0, 200, size=bots)
    outcomes = simulate(true_elo, deals=matches // 2, players=2, seed=seed)

    started = time.perf_counter()
    pairs = pairwise_results(outcomes)
    split = time.perf_counter()
    fit = fit_elo(pairs)
    fitted = time.perf_counter()
    table = ladder(outcomes)
    whole = time.perf_counter()

    centred = true_elo - true_elo.mean()
    order = [int(bot[1:]) for bot in fit.bots]
    inside = np.abs(fit.elo - centred[order]) <= fit.interval()
    return [
        f"ratings: {len(outcomes)} matches among {bots} bots, {table.deals} deals",
        f"  split into pairwise results  {split - started:7.3f} s",
        f"  Elo fit + 95% intervals      {fitted - split:7.3f} s",
        f"  split + fit + intervals      {fitted - started:7.3f} s   (target < 2 s)",
        f"  ladder from scratch (+ LOS)  {whole - fitted:7.3f} s",
        f"  true rating inside interval  {int(inside.sum())}/{len(fit.bots)}",
    ]
