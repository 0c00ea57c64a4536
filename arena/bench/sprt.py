"""SPRT on simulated game pairs: how many pairs a decision takes, pentanomial (pairs) against
trinomial (games as if independent), on the very same games.

The simulated games are like duplicate card games: each deal favours one seat by DEAL_ELO
(either seat, at random), NEW plays it once in each seat, and a game is drawn with
probability DRAW. NEW's underlying strength is calibrated so that its expected score is
exactly that of the requested logistic Elo difference.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from arena.stats import sprt

DEAL_ELO = 200.0    # how much a deal favours one seat
DRAW = 0.1          # chance of a drawn game


def _mean_score(strength: float) -> float:
    win = sprt.logistic_score
    return DRAW * 0.5 + (1 - DRAW) * (win(strength + DEAL_ELO) + win(strength - DEAL_ELO)) / 2


def strength_for(elo: float) -> float:
    """The underlying strength whose expected score (over deals) is logistic_score(elo)."""
    target, low, high = sprt.logistic_score(elo), -2000.0, 2000.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if _mean_score(middle) < target else (low, middle)
    return (low + high) / 2


def _game(rng: random.Random, strength: float) -> float:
    if rng.random() < DRAW:
        return 0.5
    return 1.0 if rng.random() < sprt.logistic_score(strength) else 0.0


def simulated_pair(rng: random.Random, strength: float) -> tuple[float, float]:
    """NEW's scores in the two seatings of one deal."""
    bias = DEAL_ELO if rng.random() < 0.5 else -DEAL_ELO
    return _game(rng, strength + bias), _game(rng, strength - bias)


@dataclass(frozen=True)
class Run:
    """One sequential test on one stream of simulated pairs."""

    decision: str | None     # H0, H1, or None when max_pairs ran out
    pairs: int


def run_both(rng: random.Random, true_elo: float, elo0: float, elo1: float, alpha: float,
             beta: float, max_pairs: int) -> tuple[Run, Run]:
    """The pentanomial and the trinomial test on the same pairs: (pentanomial, trinomial).
    The trinomial test counts pairs too (its games / 2)."""
    strength = strength_for(true_elo)
    tally = sprt.Tally()
    done: dict[str, Run] = {}
    while len(done) < 2 and tally.pairs < max_pairs:
        tally.add_pair(*simulated_pair(rng, strength))
        for kind, counts in (("pentanomial", tally.pentanomial),
                             ("trinomial", tally.trinomial)):
            if kind not in done:
                verdict = sprt.decision(sprt.llr(counts, elo0, elo1), alpha, beta)
                if verdict:
                    done[kind] = Run(verdict, tally.pairs)
    return (done.get("pentanomial", Run(None, tally.pairs)),
            done.get("trinomial", Run(None, tally.pairs)))


@dataclass(frozen=True)
class Figure:
    """Many runs of one test kind at one true Elo difference."""

    test: str
    runs: int
    mean_pairs: float
    accepted_h1: float
    undecided: int


def measure(runs: int, true_elo: float = 20.0, elo0: float = 0.0, elo1: float = 20.0,
            alpha: float = 0.05, beta: float = 0.05, max_pairs: int = 100_000,
            seed: int = 1) -> list[Figure]:
    rng = random.Random(seed)
    results = [run_both(rng, true_elo, elo0, elo1, alpha, beta, max_pairs)
               for _ in range(runs)]
    figures = []
    for index, test in enumerate(("pentanomial", "trinomial")):
        mine = [pair[index] for pair in results]
        figures.append(Figure(test, runs, sum(r.pairs for r in mine) / runs,
                              sum(r.decision == sprt.H1 for r in mine) / runs,
                              sum(r.decision is None for r in mine)))
    return figures
