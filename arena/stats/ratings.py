"""Ratings from stored match outcomes: maximum-likelihood Elo with intervals, running Elo, LOS.

Pure math on `Outcome` records: no processes, sockets or files.

**Pairwise results.** Every match becomes pairwise results between its seats, by rank: the
better-ranked seat scores 1, a shared rank is a draw worth 1/2 to each. A 4-player match
gives 6 pairs. One-player matches (`flowers`) have no opponent at the table, so games on the
same deal are compared with each other: for each deal, every pair of bots that played it is
one result, decided by score (a forfeited game below any finished one).

**Fit (Bradley-Terry, Elo scale).** Bot i is expected to score
`1 / (1 + 10 ** ((elo_j - elo_i) / 400))` against bot j. Ratings maximise the likelihood of
the pairwise results with a draw counting half a win and half a loss (as Ordo and BayesElo
do), found by Newton's method on the per-pair totals. Only rating differences are
identified, so the scale is anchored afterwards: mean 0, or one named bot at a given rating.

When some group of bots never lost a point to the rest (or two groups never met) the exact
maximum is at infinity. Only then one virtual draw is added between every pair of bots (in
the spirit of BayesElo's prior), so the table stays finite; `EloFit.virtual_draws` says so.

**Intervals (cluster-robust, deals as clusters).** The results of a schedule are not
independent: every match on one deal is played with the same cards. The two games of a
seat-swapped pair pull in opposite directions when the deal favours a seat; the pairs split
from one multi-player match (and from its other rotations) share the cards and one ranking;
and a deal that suits a bot's way of playing lifts it at every table it sits at on that deal.
The textbook interval (inverse Fisher information) assumes independence and is then too wide
for paired deals, or too narrow when a deal favours the same bot throughout. We use the
sandwich covariance `A^-1 B A^-1 * G / (G - 1)`, where A is the Fisher information of the
fit, B sums, over each deal, the outer product of that deal's total score residual per bot,
and G is the number of deals. A deal is every match with its label (`Outcome.deal`): the
league labels by the deal's seed and gives every table a deal of its own (arena.league.schedule), so
one cluster holds the seatings of one table's deal (in 1-player `flowers`, every bot's game of
a round). A deal shared by several tables would be one cluster across them, as it must: a deal
that suits a bot lifts it at each of them.
Deals are independent of each other by construction (independent seeds), so this is
consistent whatever the correlation inside a deal. It needs many deals (tens at least, and
more than bots): with few, intervals come out too narrow (in simulation, 12 bots on 4 deals
cover about 86% instead of 95%); with fewer than two, they are unknown (NaN).
A 95% interval is +/- 1.96 standard errors of a bot's anchored rating. Two degenerate
cases: when virtual draws were needed (see above) the real results do not balance at the
fit (a bot that won everything is ahead of expectation on every deal), so their spread is no
measure of uncertainty and the textbook covariance of the regularised fit is used instead
(with its faults above); when every deal splits exactly
even (each seat-swapped pair 1-1), the deals show no spread at all and the interval is 0.

**Likelihood of superiority** of bot i over bot j is `Phi((elo_i - elo_j) / sd(elo_i -
elo_j))`, using the covariance of the two estimates (so it does not depend on the anchor).

**Running Elo** replays outcomes in match order (`Outcome.order`) with the classic update
`elo += K * (score - expected)`, K shared among the pairs a match produces, as a per-bot
history for charts. It depends on the order; the maximum-likelihood fit does not.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from statistics import NormalDist
from typing import Collection, Iterable, Mapping, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.stats.outcome import Outcome  # noqa: F401  (ratings take Outcomes; named here too)

ELO_PER_LOGIT = 400.0 / math.log(10.0)
"""Elo points per unit of log-odds: a 400-point edge means 10:1 odds."""


# -- pairwise results -------------------------------------------------------------------------

@dataclass(frozen=True)
class PairwiseResults:
    """Every pairwise result of a list of outcomes, as parallel arrays over results."""

    bots: tuple[str, ...]
    """All bot labels, sorted; the index arrays below point into it."""
    first: np.ndarray
    second: np.ndarray
    score: np.ndarray
    """Score of `first` against `second`: 1, 0.5 or 0."""
    deal: np.ndarray
    """Index of the deal each result comes from: the clusters of the interval estimate."""
    deals: int


def _points(mine: float, theirs: float) -> float:
    """1, 0.5 or 0 for a comparison in which higher is better."""
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def _solo_key(outcome: Outcome) -> float:
    """How a 1-player game compares on its deal: by score, a forfeit below any finished game
    (a forfeit's stored score is a placeholder, not the bot's play)."""
    return -math.inf if outcome.forfeit_seat is not None else outcome.scores[0]


def pairwise_results(outcomes: Iterable[Outcome]) -> PairwiseResults:
    """Splits matches into pairwise results (by rank; 1-player games by score per deal)."""
    outcomes = list(outcomes)
    bots = tuple(sorted({bot for outcome in outcomes for bot in outcome.bots}))
    index = {bot: i for i, bot in enumerate(bots)}
    deal_index: dict[str, int] = {}
    first: list[int] = []
    second: list[int] = []
    score: list[float] = []
    deal: list[int] = []
    solo_by_deal: dict[str, list[Outcome]] = defaultdict(list)

    def add(bot_a: str, bot_b: str, points: float, cluster: int) -> None:
        if bot_a != bot_b:  # a bot against itself tells nothing about its strength
            first.append(index[bot_a])
            second.append(index[bot_b])
            score.append(points)
            deal.append(cluster)

    for outcome in outcomes:
        seats = len(outcome.bots)
        if not (len(outcome.ranks) == len(outcome.scores) == seats >= 1):
            raise ValueError(f"match {outcome.match_id}: bots, ranks and scores differ in "
                             f"length ({seats}, {len(outcome.ranks)}, {len(outcome.scores)})")
        if seats == 1:
            solo_by_deal[outcome.deal].append(outcome)
            continue
        # A match without a deal still forms its own cluster.
        cluster = deal_index.setdefault(outcome.deal or f"match {outcome.match_id}",
                                        len(deal_index))
        for a in range(seats):
            for b in range(a + 1, seats):
                # Lower rank is better, hence the minus signs.
                add(outcome.bots[a], outcome.bots[b],
                    _points(-outcome.ranks[a], -outcome.ranks[b]), cluster)
    for deal_name, games in solo_by_deal.items():
        cluster = deal_index.setdefault(deal_name or "solo", len(deal_index))
        for a in range(len(games)):
            for b in range(a + 1, len(games)):
                add(games[a].bots[0], games[b].bots[0],
                    _points(_solo_key(games[a]), _solo_key(games[b])), cluster)
    return PairwiseResults(bots=bots, first=np.array(first, dtype=np.int64),
                           second=np.array(second, dtype=np.int64),
                           score=np.array(score, dtype=float),
                           deal=np.array(deal, dtype=np.int64), deals=len(deal_index))


# -- maximum-likelihood fit -------------------------------------------------------------------

LOS_RESOLUTION = 1e-9
"""Relative size below which two ratings count as equal for LOS (float noise of the fit)."""


@dataclass(frozen=True)
class EloFit:
    """Maximum-likelihood Elo ratings with their covariance, on an anchored scale."""

    bots: tuple[str, ...]
    elo: np.ndarray
    covariance: np.ndarray
    """Covariance of the anchored ratings, in Elo squared (NaN when it cannot be estimated)."""
    virtual_draws: bool
    """True when the exact maximum was infinite and one virtual draw per pair was added."""
    anchor: tuple[str, float] | None

    def rating(self, bot: str) -> float:
        return float(self.elo[self.bots.index(bot)])

    def stderr(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def interval(self, confidence: float = 0.95) -> np.ndarray:
        """Half-width of each bot's two-sided interval: elo +/- this."""
        return _z(confidence) * self.stderr()

    def los(self, better: str, worse: str) -> float:
        """Likelihood of superiority: probability that `better` is truly stronger."""
        i, j = self.bots.index(better), self.bots.index(worse)
        diff = self.elo[i] - self.elo[j]
        var = self.covariance[i, i] + self.covariance[j, j] - 2 * self.covariance[i, j]
        if math.isnan(var):
            return math.nan
        # Equal ratings come out of the fit a few ulps apart: a difference too small for the
        # ratings' own float resolution is no difference (50%, not 0% or 100% from noise).
        resolution = LOS_RESOLUTION * max(1.0, abs(self.elo[i]), abs(self.elo[j]),
                                          math.sqrt(max(var, 0.0)))
        if abs(diff) <= resolution:
            return 0.5
        if var <= 1e-12:
            return 1.0 if diff > 0 else 0.0
        return NormalDist().cdf(diff / math.sqrt(var))


def _z(confidence: float) -> float:
    """The two-sided normal quantile: 1.96 for 0.95."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _totals(pairs: PairwiseResults) -> tuple[np.ndarray, np.ndarray]:
    """Per ordered pair (i, j): points i scored against j, and games between them."""
    n = len(pairs.bots)
    flat_ij = pairs.first * n + pairs.second
    flat_ji = pairs.second * n + pairs.first
    points = (np.bincount(flat_ij, weights=pairs.score, minlength=n * n)
              + np.bincount(flat_ji, weights=1.0 - pairs.score, minlength=n * n))
    games = (np.bincount(flat_ij, minlength=n * n)
             + np.bincount(flat_ji, minlength=n * n)).astype(float)
    return points.reshape(n, n), games.reshape(n, n)


def _finite_maximum_exists(points: np.ndarray, games: np.ndarray) -> bool:
    """True when every bot can be reached from every other along 'scored a point against'.

    That strong connectivity is the classic (Zermelo/Ford) condition for the Bradley-Terry
    maximum to be finite; with draws counting half, a draw links both ways.
    """
    n = len(points)
    scored = (points > 0) & (games > 0)
    for edges in (scored, scored.T):
        seen = {0}
        frontier = [0]
        while frontier:
            bot = frontier.pop()
            for other in np.flatnonzero(edges[bot]):
                if other not in seen:
                    seen.add(int(other))
                    frontier.append(int(other))
        if len(seen) < n:
            return False
    return True


def _information(theta: np.ndarray, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected scores P[i, j] and the Fisher information matrix, in logit units."""
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    weight = games * p * p.T
    info = np.diag(weight.sum(axis=1)) - weight
    return p, info


def _log_likelihood(theta: np.ndarray, points: np.ndarray) -> float:
    diff = theta[:, None] - theta[None, :]
    # log(sigmoid(x)) = -log(1 + exp(-x)), computed stably.
    return float(-(points * np.logaddexp(0.0, -diff)).sum())


def _maximise(points: np.ndarray, games: np.ndarray) -> np.ndarray:
    """Newton's method with step halving; the last bot is held at 0 (the fit's gauge)."""
    n = len(points)
    theta = np.zeros(n)
    current = _log_likelihood(theta, points)
    for _ in range(200):
        p, info = _information(theta, games)
        gradient = (points - games * p).sum(axis=1)
        step = np.zeros(n)
        step[:-1] = np.linalg.solve(info[:-1, :-1], gradient[:-1])
        size = 1.0
        while True:
            candidate = theta + size * step
            value = _log_likelihood(candidate, points)
            if value >= current - 1e-12 or size < 1e-6:
                break
            size /= 2
        theta, current = candidate, value
        if np.max(np.abs(size * step)) < 1e-10:
            break
    return theta


def fit_elo(outcomes: Iterable[Outcome] | PairwiseResults,
            anchor: tuple[str, float] | None = None, clustered: bool = True) -> EloFit:
    """Maximum-likelihood Elo of every bot, with covariance (see the module docstring).

    `anchor=(bot, rating)` pins one bot; otherwise the mean rating is 0. `clustered=False`
    gives the textbook covariance that treats every pairwise result as independent (kept
    for comparison: it misstates intervals on paired deals).
    """
    pairs = outcomes if isinstance(outcomes, PairwiseResults) else pairwise_results(outcomes)
    n = len(pairs.bots)
    if anchor is not None and anchor[0] not in pairs.bots:
        raise ArenaError(f"anchor bot {anchor[0]!r} has no results here "
                         f"(bots: {', '.join(pairs.bots) or 'none'})")
    if n == 0:
        return EloFit((), np.zeros(0), np.zeros((0, 0)), False, anchor)
    points, games = _totals(pairs)
    virtual_draws = n > 1 and not _finite_maximum_exists(points, games)
    if virtual_draws:
        off_diagonal = 1.0 - np.eye(n)
        points = points + 0.5 * off_diagonal
        games = games + off_diagonal
    theta = _maximise(points, games) if n > 1 else np.zeros(1)
    # With a bot that never dropped a point the real results do not balance at this fit, so
    # their spread says nothing; the information of the regularised fit is then the width.
    covariance = _covariance(pairs, theta, games, clustered and not virtual_draws)

    # Anchor: shift the ratings; the covariance follows the linear map r -> (I - 1 w^T) r.
    weights = np.full(n, 1.0 / n)
    offset = 0.0
    if anchor is not None:
        weights = np.eye(n)[pairs.bots.index(anchor[0])]
        offset = anchor[1]
    gauge = np.eye(n) - np.outer(np.ones(n), weights)
    elo = gauge @ theta * ELO_PER_LOGIT + offset
    covariance = gauge @ covariance @ gauge.T * ELO_PER_LOGIT ** 2
    return EloFit(pairs.bots, elo, covariance, virtual_draws, anchor)


def _covariance(pairs: PairwiseResults, theta: np.ndarray, games: np.ndarray,
                clustered: bool) -> np.ndarray:
    """Covariance of theta (last bot held at 0), in logit units squared."""
    n = len(theta)
    if n == 1:
        return np.zeros((1, 1))   # a lone bot sits exactly at the anchor
    full = np.full((n, n), math.nan)
    if clustered and pairs.deals < 2:
        return full               # one deal says nothing about deal-to-deal variation
    _, info = _information(theta, games)
    bread = np.linalg.inv(info[:-1, :-1])
    if clustered:
        # Each deal's score residual per bot: what that deal pushes each rating by.
        residual = pairs.score - 1.0 / (1.0 + np.exp(theta[pairs.second] - theta[pairs.first]))
        per_deal = (np.bincount(pairs.deal * n + pairs.first, weights=residual,
                                minlength=pairs.deals * n)
                    - np.bincount(pairs.deal * n + pairs.second, weights=residual,
                                  minlength=pairs.deals * n)).reshape(pairs.deals, n)[:, :-1]
        meat = per_deal.T @ per_deal * (pairs.deals / (pairs.deals - 1))
        reduced = bread @ meat @ bread
    else:
        reduced = bread
    full[:] = 0.0
    full[:-1, :-1] = reduced
    return full


# -- the ladder -------------------------------------------------------------------------------

@dataclass(frozen=True)
class LadderRow:
    """One bot's line of the ladder. W/D/L count pairwise results (see the module doc)."""

    rank: int
    bot: str
    elo: float
    interval: float
    """Half-width of the confidence interval (NaN when unknown)."""
    games: int
    score: float
    """Fraction of the pairwise points won, 0 to 1 (NaN with no results)."""
    wins: int
    draws: int
    losses: int
    forfeits: int
    los_next: float | None
    """Likelihood of superiority over the bot on the next row (None on the last row)."""


@dataclass(frozen=True)
class Ladder:
    rows: tuple[LadderRow, ...]
    fit: EloFit
    confidence: float
    deals: int


def ladder(outcomes: Sequence[Outcome], anchor: tuple[str, float] | None = None,
           confidence: float = 0.95) -> Ladder:
    """The table of bots by fitted Elo, best first, with tallies and LOS to the next bot."""
    games: dict[str, int] = defaultdict(int)
    forfeits: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        for bot in set(outcome.bots):
            games[bot] += 1
        if outcome.forfeit_seat is not None:
            forfeits[outcome.bots[outcome.forfeit_seat]] += 1
    return ladder_of(pairwise_results(outcomes), games, forfeits, anchor=anchor,
                     confidence=confidence)


def ladder_of(pairs: PairwiseResults, games: Mapping[str, int], forfeits: Mapping[str, int],
              *, anchor: tuple[str, float] | None = None, confidence: float = 0.95,
              shown: Collection[str] | None = None) -> Ladder:
    """The ladder from pairwise results and per-bot tallies of matches and forfeits.

    Every bot is fitted; with `shown`, only those bots get rows (ranked among themselves,
    LOS to the next row shown): a service's ladder fits retired versions too, whose results
    inform the others' ratings, but lists only current ones.
    """
    fit = fit_elo(pairs, anchor=anchor)
    n = len(pairs.bots)
    wins = np.bincount(np.concatenate([pairs.first[pairs.score == 1],
                                       pairs.second[pairs.score == 0]]), minlength=n)
    draws = np.bincount(np.concatenate([pairs.first[pairs.score == 0.5],
                                        pairs.second[pairs.score == 0.5]]), minlength=n)
    results = np.bincount(np.concatenate([pairs.first, pairs.second]), minlength=n)
    # Best first; equal ratings keep the label order so the table is deterministic.
    order = sorted((i for i in range(n) if shown is None or pairs.bots[i] in shown),
                   key=lambda i: (-round(fit.elo[i], 9), pairs.bots[i]))
    half_width = fit.interval(confidence)
    rows = []
    for position, i in enumerate(order):
        bot = pairs.bots[i]
        next_bot = pairs.bots[order[position + 1]] if position + 1 < len(order) else None
        rows.append(LadderRow(
            rank=position + 1, bot=bot, elo=float(fit.elo[i]), interval=float(half_width[i]),
            games=games.get(bot, 0),
            score=float((wins[i] + draws[i] / 2) / results[i]) if results[i] else math.nan,
            wins=int(wins[i]), draws=int(draws[i]), losses=int(results[i] - wins[i] - draws[i]),
            forfeits=forfeits.get(bot, 0),
            los_next=fit.los(bot, next_bot) if next_bot is not None else None))
    return Ladder(tuple(rows), fit, confidence, pairs.deals)


def find_bot(name: str, bots: Sequence[str]) -> str:
    """The label a user means: exact ("greedy@1a2b3c4d") or a name with one version."""
    if name in bots:
        return name
    matches = [bot for bot in bots if bot.split("@", 1)[0] == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ArenaError(f"bot {name!r} has several versions here ({', '.join(matches)}); "
                         f"name one of them")
    raise ArenaError(f"no bot {name!r} in these results (bots: {', '.join(bots) or 'none'})")


# -- pairwise score matrix --------------------------------------------------------------------

@dataclass(frozen=True)
class ScoreMatrix:
    """Points of each row bot against each column bot, and how many results they had."""

    bots: tuple[str, ...]
    points: np.ndarray
    games: np.ndarray

    def score(self, row: int, column: int) -> float:
        """Fraction of the points the row bot won against the column bot (NaN if none)."""
        games = self.games[row, column]
        return float(self.points[row, column] / games) if games else math.nan


def score_matrix(outcomes: Sequence[Outcome] | PairwiseResults,
                 bots: Sequence[str] | None = None) -> ScoreMatrix:
    """The pairwise score matrix, rows and columns in the order of `bots` (default sorted)."""
    pairs = outcomes if isinstance(outcomes, PairwiseResults) else pairwise_results(outcomes)
    points, games = _totals(pairs)
    order = [pairs.bots.index(bot) for bot in (bots if bots is not None else pairs.bots)]
    return ScoreMatrix(tuple(pairs.bots[i] for i in order), points[np.ix_(order, order)],
                       games[np.ix_(order, order)])


def points_leader(outcomes: Sequence[Outcome]) -> tuple[str, float] | None:
    """The bot with the highest share of its pairwise points so far, and that share; None
    before any pairwise result."""
    matrix = score_matrix(outcomes)
    results = matrix.games.sum(axis=1)
    if not results.any():
        return None
    share = np.divide(matrix.points.sum(axis=1), results, out=np.zeros(len(results)),
                      where=results > 0)
    best = int(np.argmax(share))
    return matrix.bots[best], float(share[best])


# -- running Elo ------------------------------------------------------------------------------

@dataclass(frozen=True)
class HistoryPoint:
    """A bot's running Elo just after one of its matches."""

    order: int
    match_id: str
    elo: float


def running_elo(outcomes: Iterable[Outcome], k: float = 16.0,
                start: float = 0.0) -> dict[str, list[HistoryPoint]]:
    """Classic incremental Elo in match order (`Outcome.order`), as a history per bot.

    Each match updates every pair of its seats from the ratings before the match, with K
    split over the pairs a bot takes part in, so one match moves a bot by at most K. A
    1-player game is compared with the earlier games of other bots on the same deal.
    """
    elo: dict[str, float] = defaultdict(lambda: start)
    history: dict[str, list[HistoryPoint]] = defaultdict(list)
    earlier_on_deal: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in sorted(outcomes, key=lambda o: (o.order, o.match_id)):
        if len(outcome.bots) == 1:
            rivals = [o for o in earlier_on_deal[outcome.deal] if o.bots[0] != outcome.bots[0]]
            earlier_on_deal[outcome.deal].append(outcome)
            pairs = [(outcome.bots[0], rival.bots[0],
                      _points(_solo_key(outcome), _solo_key(rival))) for rival in rivals]
        else:
            seats = range(len(outcome.bots))
            pairs = [(outcome.bots[a], outcome.bots[b],
                      _points(-outcome.ranks[a], -outcome.ranks[b]))
                     for a in seats for b in seats if a < b and outcome.bots[a] != outcome.bots[b]]
        # Split K over the pairs each bot is in: one match moves a bot by at most K.
        share = k / max(1, len(pairs) if len(outcome.bots) == 1 else len(outcome.bots) - 1)
        change: dict[str, float] = defaultdict(float)
        for bot_a, bot_b, points in pairs:
            expected = 1.0 / (1.0 + 10.0 ** ((elo[bot_b] - elo[bot_a]) / 400.0))
            change[bot_a] += share * (points - expected)
            change[bot_b] -= share * (points - expected)
        # The match's bots, and in 1-player games the rivals it was compared with.
        for bot in dict.fromkeys(list(outcome.bots) + list(change)):
            elo[bot] += change[bot]
            history[bot].append(HistoryPoint(outcome.order, outcome.match_id, elo[bot]))
    return dict(history)
