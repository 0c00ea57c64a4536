"""Sequential probability ratio test for A/B tests between two bots (pure math, no I/O).

The model is fishtest's. Bots play game pairs: one deal, both seatings. A pair's score for
NEW is the mean of its two games (0, 1/4, 1/2, 3/4 or 1), so pair results fall in five
classes: the pentanomial counts. Hypotheses are about NEW's expected score s:

- logistic Elo: s = 1 / (1 + 10^(-elo / 400));
- normalised Elo: elo = 800 / ln 10 * (s - 1/2) / sigma, sigma the standard deviation of one
  game's score as the pairs show it (sqrt(2) x that of a pair's mean); it measures how
  detectable a difference is, whatever the draw rate or the deals' spread. Its hypotheses
  become scores with the current sigma.

The generalised SPRT: the log-likelihood ratio of the two hypotheses, each taken at its
maximum-likelihood distribution of pair results with that expected score (Van den Bergh's
method), is compared with Wald's bounds log(beta / (1 - alpha)) and log((1 - beta) / alpha).
It is asymptotically exact and needs no model of draws or of how the deals spread results.

The same test on the games alone (trinomial counts: losses, draws, wins) is here for
comparison: it treats a pair's two games as independent. Duplicate deals make them anything
but: a deal good for one seat is good for whoever sits there, so its two games tend to
cancel, and the variance of a pair is less than twice a game's. `variance_ratio` measures by
how much.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)   # pentanomial classes, NEW's mean over the pair
GAME_SCORES = (0.0, 0.5, 1.0)               # trinomial classes: loss, draw, win
NELO_PER_T = 800 / math.log(10)             # normalised Elo per unit of (s - 1/2) / sigma
Z95 = 1.959963984540054

H0, H1 = "H0", "H1"


def logistic_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def logistic_elo(score: float) -> float:
    score = min(max(score, 1e-12), 1 - 1e-12)
    return -400 * math.log10(1 / score - 1)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds: below accepts H0, above accepts H1."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError(f"alpha and beta must lie between 0 and 1, got {alpha} and {beta}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _distribution(counts: Sequence[float], scores: Sequence[float]) -> tuple[float, list]:
    """(number of observations, empirical probabilities) with a tiny prior on empty classes
    (as fishtest does) so that the likelihoods stay finite."""
    total = sum(counts)
    padded = [c if c > 0 else 1e-3 for c in counts]
    mass = sum(padded)
    return total, [c / mass for c in padded]


def mean_and_variance(counts: Sequence[float], scores: Sequence[float]) -> tuple[float, float]:
    """Mean and variance of one observation (a pair's mean or a game) from class counts
    (0.5 and 0 with no counts)."""
    total = sum(counts)
    if not total:
        return 0.5, 0.0
    p = [c / total for c in counts]
    mean = sum(pi * a for pi, a in zip(p, scores))
    return mean, sum(pi * (a - mean) ** 2 for pi, a in zip(p, scores))


def _max_likelihood(p: list[float], scores: Sequence[float], s: float) -> list[float]:
    """The distribution nearest p in likelihood with expected score s: p_i / (1 + x (a_i - s))
    with x the root of sum p_i (a_i - s) / (1 + x (a_i - s)), which decreases in x: Newton's
    method, kept inside the interval where every 1 + x (a_i - s) stays positive."""
    low = -1 / (max(scores) - s)
    high = 1 / (s - min(scores))
    x = 0.0
    for _ in range(100):
        value = slope = 0.0
        for pi, a in zip(p, scores):
            term = (a - s) / (1 + x * (a - s))
            value += pi * term
            slope -= pi * term * term
        if abs(value) < 1e-13:
            break
        if value > 0:
            low = x
        else:
            high = x
        step = x - value / slope
        x = step if low < step < high else (low + high) / 2
    q = [pi / (1 + x * (a - s)) for pi, a in zip(p, scores)]
    norm = sum(q)
    return [qi / norm for qi in q]


def llr_at_scores(counts: Sequence[float], scores: Sequence[float], s0: float,
                  s1: float) -> float:
    """Generalised log-likelihood ratio of expected score s1 against s0."""
    total, p = _distribution(counts, scores)
    if total == 0:
        return 0.0
    p0, p1 = _max_likelihood(p, scores, s0), _max_likelihood(p, scores, s1)
    return total * sum(pi * math.log(b / a) for pi, a, b in zip(p, p0, p1))


def hypothesis_scores(counts: Sequence[float], scores: Sequence[float], elo0: float,
                      elo1: float, model: str) -> tuple[float, float]:
    """The expected scores that H0 and H1 stand for, under `logistic` or `normalized` Elo."""
    if model == "logistic":
        return logistic_score(elo0), logistic_score(elo1)
    if model == "normalized":
        sigma = per_game_sigma(counts, scores)
        return 0.5 + elo0 / NELO_PER_T * sigma, 0.5 + elo1 / NELO_PER_T * sigma
    raise ValueError(f"unknown Elo model {model!r} (logistic or normalized)")


def per_game_sigma(counts: Sequence[float], scores: Sequence[float]) -> float:
    """Standard deviation of one game's score: a pair's mean averages two games."""
    _, variance = mean_and_variance(counts, scores)
    return math.sqrt(2 * variance if len(scores) == 5 else variance)


def llr(counts: Sequence[float], elo0: float, elo1: float, model: str = "logistic") -> float:
    """LLR of H1 against H0 from pentanomial (5) or trinomial (3) counts."""
    scores = PAIR_SCORES if len(counts) == 5 else GAME_SCORES
    s0, s1 = hypothesis_scores(counts, scores, elo0, elo1, model)
    return llr_at_scores(counts, scores, s0, s1)


def decision(value: float, alpha: float, beta: float) -> str | None:
    lower, upper = bounds(alpha, beta)
    if value >= upper:
        return H1
    if value <= lower:
        return H0
    return None


@dataclass(frozen=True)
class Estimate:
    """NEW's strength against OLD with a 95% interval, from the pair results."""

    score: float
    score_low: float
    score_high: float
    elo: float
    elo_low: float
    elo_high: float
    nelo: float


def estimate(counts: Sequence[float]) -> Estimate:
    """Logistic Elo with its 95% interval (normal approximation of the mean score), and the
    normalised Elo, from pentanomial (or trinomial) counts."""
    scores = PAIR_SCORES if len(counts) == 5 else GAME_SCORES
    total = sum(counts)
    mean, variance = mean_and_variance(counts, scores)
    half = Z95 * math.sqrt(variance / max(total, 1))
    low, high = max(mean - half, 0.0), min(mean + half, 1.0)
    sigma = per_game_sigma(counts, scores)
    return Estimate(mean, low, high, logistic_elo(mean), logistic_elo(low),
                    logistic_elo(high), NELO_PER_T * (mean - 0.5) / sigma if sigma else 0.0)


def variance_ratio(pentanomial: Sequence[float], trinomial: Sequence[float]) -> float | None:
    """Variance of a pair's mean over what it would be with two independent games (the
    games' own variance / 2): below 1 when pairing helps. 1 - ratio is the reduction; a
    test needs about `ratio` times as many pairs as one on independent games. None while
    the games do not vary at all."""
    _, pair_variance = mean_and_variance(pentanomial, PAIR_SCORES)
    _, game_variance = mean_and_variance(trinomial, GAME_SCORES)
    return pair_variance / (game_variance / 2) if game_variance else None


class Tally:
    """Pair results so far: pentanomial counts of pairs, trinomial counts of their games."""

    def __init__(self) -> None:
        self.pentanomial = [0] * 5
        self.trinomial = [0] * 3

    def add_pair(self, first: float, second: float) -> None:
        """NEW's scores (0, 0.5 or 1) in the two games of one pair."""
        for score in (first, second):
            self.trinomial[GAME_SCORES.index(score)] += 1
        self.pentanomial[PAIR_SCORES.index((first + second) / 2)] += 1

    @property
    def pairs(self) -> int:
        return sum(self.pentanomial)
