"""Per-bot statistics of leagues, beside the ladder: what a bot author looks at first.

For each bot (label `name@version`): its points (mean and standard deviation of its score per
match; for 1-player games that is the mean score), its results as first mover and in the
other seats (share of pairwise points: 1 for each seat it beat in a match, 1/2 for each
tie), its move times (mean and maximum over every move it made), its forfeits by reason,
and its **order effect** (`order_effects`): on every deal it met in more than one seating
(mirrored leagues, `arena sprt` pairs), whether it did better in the seatings it played
later than in its first, with a one-sided sign test. Where bots are trusted to play one deal
in several seatings, a bot whose processes pass the deal on to each other (a host channel
no sandbox fully closes) wins its later seatings more than its first, and stands out.
Numbers only: `arena.stats.report` and `arena.render.ladder_page` draw them.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable, Sequence


@dataclass(frozen=True)
class MatchFacts:
    """What the statistics need of one stored match (`arena.league.store.read_match_facts`)."""

    bots: tuple[str, ...]            # label per seat
    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    forfeit_seat: int | None
    forfeit_reason: str | None
    move_times: tuple[tuple[int, float], ...]   # (seat, seconds) of each timed move
    deal: Hashable | None = None     # the deal (its seed or label): which matches shared one
    started: float | None = None     # when it started: which seating of a deal came first


@dataclass
class BotStats:
    bot: str
    matches: int = 0
    points: list[float] = field(default_factory=list)
    seat_points: dict[str, float] = field(default_factory=lambda: {"first": 0.0, "later": 0.0})
    seat_results: dict[str, int] = field(default_factory=lambda: {"first": 0, "later": 0})
    move_count: int = 0
    move_seconds: float = 0.0
    slowest: float | None = None
    forfeits: Counter = field(default_factory=Counter)
    order: "OrderEffect | None" = None
    """Later seatings of a deal against the first; None when it met no deal twice."""

    @property
    def mean_points(self) -> float:
        return sum(self.points) / len(self.points) if self.points else math.nan

    @property
    def sd_points(self) -> float:
        """Sample standard deviation (NaN below two matches)."""
        if len(self.points) < 2:
            return math.nan
        mean = self.mean_points
        return math.sqrt(sum((p - mean) ** 2 for p in self.points) / (len(self.points) - 1))

    def seat_score(self, which: str) -> float:
        """Share of pairwise points in the first seat ("first") or the others ("later")."""
        results = self.seat_results[which]
        return self.seat_points[which] / results if results else math.nan

    @property
    def mean_move(self) -> float:
        return self.move_seconds / self.move_count if self.move_count else math.nan


def bot_stats(matches: Sequence[MatchFacts], order: Sequence[str] | None = None
              ) -> list[BotStats]:
    """One BotStats per bot, in `order` (e.g. the ladder's) and then by name."""
    stats: dict[str, BotStats] = {}
    for match in matches:
        for seat, bot in enumerate(match.bots):
            entry = stats.setdefault(bot, BotStats(bot))
            entry.matches += 1
            entry.points.append(float(match.scores[seat]))
            which = "first" if seat == 0 else "later"
            for other, rank in enumerate(match.ranks):
                if other != seat:
                    mine = match.ranks[seat]
                    entry.seat_points[which] += 1.0 if mine < rank else 0.5 if mine == rank else 0.0
                    entry.seat_results[which] += 1
            if match.forfeit_seat == seat:
                entry.forfeits[match.forfeit_reason or "unknown"] += 1
        for seat, seconds in match.move_times:
            entry = stats[match.bots[seat]]
            entry.move_count += 1
            entry.move_seconds += seconds
            entry.slowest = seconds if entry.slowest is None else max(entry.slowest, seconds)
    for bot, effect in order_effects(matches).items():
        stats[bot].order = effect
    ranked = {bot: index for index, bot in enumerate(order or ())}
    return sorted(stats.values(), key=lambda s: (ranked.get(s.bot, len(ranked)), s.bot))


# -- order effect -----------------------------------------------------------------------------

FLAG_P = 0.01
"""An order effect with a p-value below this is flagged: chance alone does it 1 time in 100."""


@dataclass(frozen=True)
class OrderEffect:
    """A bot's results in the later seatings of deals it met more than once, against its
    first seating of each (its share of pairwise points in each match)."""

    deals: int
    """Deals the bot met in two or more seatings."""
    better: int
    """... where its mean result in the later seatings beat its first."""
    worse: int
    mean_difference: float
    """Mean over those deals of (later mean - first), in share of pairwise points."""
    p_value: float
    """One-sided sign test: the chance of `better` or more of `better + worse` untied deals
    if order did not matter (a fair coin each). Ties (the same result) say nothing."""

    flag_below = FLAG_P

    @property
    def flagged(self) -> bool:
        return self.p_value < self.flag_below


def sign_test(better: int, worse: int) -> float:
    """P(at least `better` heads in `better + worse` fair tosses); 1 with no tosses."""
    tosses = better + worse
    return sum(math.comb(tosses, k) for k in range(better, tosses + 1)) / 2 ** tosses


def pairwise_share(ranks: Sequence[int], seat: int) -> float:
    """A seat's share of pairwise points in a match of 2 or more: 1 per seat beaten, 1/2 per
    tie, over the other seats."""
    mine = ranks[seat]
    others = [rank for other, rank in enumerate(ranks) if other != seat]
    return sum(1.0 if mine < rank else 0.5 if mine == rank else 0.0
               for rank in others) / len(others)


def order_effects(matches: Sequence[MatchFacts]) -> dict[str, OrderEffect]:
    """Per bot that met a deal in two or more seatings, its OrderEffect. A deal's seatings
    are ordered by start time (a seating that starts while another runs can already hear
    from it), then by their order in `matches`; matches without a deal are left out."""
    seatings: dict[tuple[str, Hashable], list[tuple[float, int, float]]] = {}
    for index, match in enumerate(matches):
        if match.deal is None or len(match.bots) < 2:
            continue
        for seat, bot in enumerate(match.bots):
            started = math.inf if match.started is None else match.started
            seatings.setdefault((bot, match.deal), []).append(
                (started, index, pairwise_share(match.ranks, seat)))
    differences: dict[str, list[float]] = {}
    for (bot, _), played in seatings.items():
        if len(played) > 1:
            first, *later = [result for *_, result in sorted(played)]
            differences.setdefault(bot, []).append(sum(later) / len(later) - first)
    effects = {}
    for bot, found in differences.items():
        better, worse = sum(d > 0 for d in found), sum(d < 0 for d in found)
        effects[bot] = OrderEffect(len(found), better, worse, sum(found) / len(found),
                                   sign_test(better, worse))
    return effects


def stats_records(stats: Sequence[BotStats]) -> list[dict]:
    """One plain dict per bot (what csv and json print; times in milliseconds)."""
    def number(value: float, digits: int = 2) -> float | None:
        return None if value is None or math.isnan(value) else round(value, digits) + 0.0

    return [{
        "bot": s.bot, "matches": s.matches,
        "mean_points": number(s.mean_points), "sd_points": number(s.sd_points),
        "first_seat_score_pct": number(s.seat_score("first") * 100, 1),
        "first_seat_results": s.seat_results["first"],
        "later_seats_score_pct": number(s.seat_score("later") * 100, 1),
        "later_seats_results": s.seat_results["later"],
        "mean_move_ms": number(s.mean_move * 1000, 1),
        "max_move_ms": number(None if s.slowest is None else s.slowest * 1000, 1),
        "forfeits": dict(sorted(s.forfeits.items())),
        "order_deals": s.order.deals if s.order else 0,
        "order_later_better": s.order.better if s.order else None,
        "order_later_worse": s.order.worse if s.order else None,
        "order_mean_difference": number(s.order.mean_difference, 3) if s.order else None,
        "order_p_value": float(f"{s.order.p_value:.3g}") if s.order else None,   # 3 digits
        "order_flagged": s.order.flagged if s.order else False,
    } for s in stats]


STATS_NOTES = (
    "points: the bot's score per match, mean and standard deviation (1-player games: the "
    "mean score).",
    "1st seat / later seats: share of pairwise points (1 per seat beaten in a match, 1/2 per "
    "tie) when it moved first and in the other seats, with the number of pairwise results.",
    "move ms: mean and maximum time of the bot's moves, as the arena timed them.",
    "later seating: on deals the bot met in more than one seating (mirrored deals), how "
    "often its later seatings did better / worse than its first, and the one-sided sign "
    f"test's p-value; FLAG below p = {FLAG_P}: a bot that passes a deal between its "
    "processes wins its later seatings. '-': no deal met twice (independent deals).",
)
