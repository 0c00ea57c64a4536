"""Fair league schedules: the deterministic list of matches a league plays. Pure, no I/O.

A league plays `deals` rounds. Bots sit at **tables** (groups of `players` bots) and in every
round each table plays once in each seat rotation, so luck of the seat cancels out:

- 2 players: round robin in pairs; both seatings, seats swapped.
- 3-4 players: every group of that size, or a balanced random sample of groups when there are
  more than `max_tables` (about that many, so that every bot sits at as many tables as any
  other, with partners spread out); every seat rotation.
- 1 player (`flowers`): every bot alone, once per round.
- Gauntlet: only the tables that hold the gauntlet bot, with the same fairness.

Which deal (a seed from which the engine deals the cards and draws any chance move) each
match plays is the **seating** mode:

- `independent` (the default): every match has a deal of its own, so no deal is ever played
  twice, by any bot or process. Two processes of one bot that talk through a host channel
  (page cache, timing; SECURITY.md) have nothing to tell each other about a deal. Seats
  still balance: each round rotates every table through every seat, each seating on its
  own deal. With 1 player every bot gets cards of its own each round too (the round's games
  are still compared by score, arena.stats.ratings, on different deals: noisier, not biased), so
  no two bots, of one author say, share a deal they could pass on.
- `mirrored`: a table's deal of the round is played in every seat rotation (with 1 player,
  every bot plays the round's deal), so the luck of the cards cancels out too, which
  `arena bench seating` measures to be worth little in these games. A bot keeps one pooled
  process per seat (arena.bots), so no one process meets a deal twice; but its processes
  can talk, so only trusted bots should play mirrored (`arena sprt` does, for pairs).
  An order effect (arena.stats.botstats) is what a bot that cheats so would show.

Either way a table's deals are its own: deals shared by every table would bring one deal
to one bot once per opponent.

Deal seeds and the bots' `rng_seed`s are derived from the league's secret key
(arena.keys), never from the seed a person typed: a bot cannot rebuild a deal. The tables
and their seatings follow from the league seed, which is not secret. Every match has a
stable id (round and seating), so a resumed league regenerates the same list and skips the
ids already stored.
"""
from __future__ import annotations

import collections
import itertools
import math
import random
from dataclasses import dataclass
from typing import Sequence

from arena.errors import ArenaError
from arena.keys import LeagueKey

DEFAULT_MAX_TABLES = 60
"""Above this many possible groups of 3-4 bots, a balanced sample of this many is played."""
MAX_MATCHES = 1_000_000
"""Most matches one league plans: each costs ~0.5 KB and ~70 µs to plan, before its row in the
database (a million: half a GB, over a minute). A larger --deals is refused, not planned until
memory runs out."""


class ScheduleError(ArenaError, ValueError):
    """A league that cannot be scheduled (too few bots, an unknown gauntlet bot, ...)."""


@dataclass(frozen=True)
class MatchSpec:
    """One match of a league: which deal, and which bot sits in which seat."""

    id: str
    """Stable across runs: deal and seating, e.g. `d0003:greedy,random`."""
    order: int
    """Position in the schedule (deal-major), used to report matches in a stable order."""
    deal_index: int
    """The round."""
    seed: int
    """The engine's deal seed: mirrored, the same for every seating of this table's deal."""
    seats: tuple[str, ...]
    """Bot names per seat."""
    deal: str
    """The deal's seed in hex: mirrored, shared by every seating of one table's deal (and,
    alone, by every bot's game of the round; independent, alone, the round's label while each
    bot has cards of its own). Ratings take each deal as one cluster of correlated results,
    and compare 1-player games on it. Named by a keyed seed, so leagues read together share a
    label only where they really share the round."""
    bot_seeds: tuple[int, ...] = ()
    """Per seat, the `rng_seed` its bot is sent: keyed, independent of the deal."""


SEATINGS = ("independent", "mirrored")
"""How deals meet seatings: a deal of its own per match, or one deal per table and round
played in every seating (see the module docstring)."""
DEFAULT_SEATING = "independent"


def deal_label(deal_index: int, table: Sequence[str], seating: int | None = None) -> str:
    """What names a deal before the key turns it into a seed: the round, and the table's bots
    (in name order, so every seating of the table shares it); the round alone for 1 player.
    With `seating` (independent mode, 2 or more players) also the seating (its rotation), so
    every match has a deal of its own."""
    if len(table) == 1:
        return f"{deal_index}"
    if seating is not None:
        return f"{deal_index}:{'+'.join(sorted(table))}:s{seating}"
    return f"{deal_index}:{'+'.join(sorted(table))}"


def rotations(table: Sequence[str]) -> list[tuple[str, ...]]:
    """Every cyclic seating of a table: (a, b, c) -> (a, b, c), (b, c, a), (c, a, b)."""
    return [tuple(table[i:]) + tuple(table[:i]) for i in range(len(table))]


def balanced_sample(bots: Sequence[str], size: int, count: int,
                    rng: random.Random) -> list[tuple[str, ...]]:
    """`count` distinct groups of `size` bots, each bot in as many groups as any other (give or
    take one); every possible group when `count` reaches their number.

    Greedy: each new group takes the bots that have sat least so far (that keeps the spread of
    table counts at most one), breaking ties first by fewest earlier meetings with the bots
    already chosen for this group, then at random, dodging groups already drawn. Groups that
    still repeat are then made distinct by swapping bots between groups (`_distinct`). For
    more than half of all groups, the groups left out are drawn that way instead.
    """
    every = math.comb(len(bots), size)
    if count >= every:
        return list(itertools.combinations(sorted(bots), size))
    if 2 * count > every:   # most groups: draw the few left out (as balanced) instead
        left_out = set(map(frozenset, balanced_sample(bots, size, every - count, rng)))
        return [group for group in itertools.combinations(sorted(bots), size)
                if frozenset(group) not in left_out]
    seated = {bot: 0 for bot in bots}
    met: dict[frozenset, int] = {}
    drawn: set[frozenset] = set()
    groups: list[tuple[str, ...]] = []
    for _ in range(count):
        best_group = None
        for _attempt in range(8):   # a few random tie-breaks, to dodge repeated groups
            group: list[str] = []
            for _slot in range(size):
                free = [bot for bot in bots if bot not in group]
                least = min(seated[bot] for bot in free)

                def crowding(bot: str, group: list[str] = group) -> int:
                    return sum(met.get(frozenset((bot, other)), 0) for other in group)

                tier = [bot for bot in free if seated[bot] == least]
                fewest = min(crowding(bot) for bot in tier)
                group.append(rng.choice([bot for bot in tier if crowding(bot) == fewest]))
            best_group = group
            if frozenset(group) not in drawn:
                break
        assert best_group is not None
        drawn.add(frozenset(best_group))
        for bot in best_group:
            seated[bot] += 1
        for pair in itertools.combinations(best_group, 2):
            met[frozenset(pair)] = met.get(frozenset(pair), 0) + 1
        groups.append(tuple(sorted(best_group)))
    return _distinct(groups, rng)


def _distinct(groups: list[tuple[str, ...]], rng: random.Random) -> list[tuple[str, ...]]:
    """The groups with repeats removed by random swaps: a bot of a repeated group trades places
    with a bot of another group when neither new group exists yet. A swap keeps the number of
    groups of every bot, so the balance of the greedy draw stays exact."""
    groups = list(groups)
    present = collections.Counter(frozenset(group) for group in groups)
    for _attempt in range(1000 * len(groups)):
        repeated = [i for i, group in enumerate(groups) if present[frozenset(group)] > 1]
        if not repeated:
            return groups
        i, j = rng.choice(repeated), rng.randrange(len(groups))
        mine, theirs = rng.choice(groups[i]), rng.choice(groups[j])
        if theirs in groups[i] or mine in groups[j]:
            continue
        new_i = frozenset(groups[i]) - {mine} | {theirs}
        new_j = frozenset(groups[j]) - {theirs} | {mine}
        if present[new_i] or present[new_j]:
            continue
        for old, new in ((groups[i], new_i), (groups[j], new_j)):
            present[frozenset(old)] -= 1
            present[new] += 1
        groups[i], groups[j] = tuple(sorted(new_i)), tuple(sorted(new_j))
    raise ScheduleError(f"no {len(groups)} distinct balanced tables of {len(groups[0])} found: "
                        "choose another --tables")


def _even(count: int, bots: int, size: int) -> int:
    """`count` rounded up so that every bot can sit at exactly as many tables as any other
    (tables x size divisible by bots), but never past every possible group."""
    step = bots // math.gcd(bots, size)
    return min(-(-count // step) * step, math.comb(bots, size))


def tables(bots: Sequence[str], players: int, *, seed: int, gauntlet: str | None = None,
           max_tables: int = DEFAULT_MAX_TABLES) -> list[tuple[str, ...]]:
    """The groups of bots that meet, each in its first seating (later rotated).

    With 3 or more players the base seating of each group is shuffled by the league seed, so
    no bot is always followed by the same one merely because of its name.
    """
    if len(set(bots)) != len(bots):
        raise ScheduleError("two bots of the league share a name: give each bot its own name")
    for bot in bots:
        if not bot or any(char in bot for char in ",+:@ "):
            raise ScheduleError(f"bot name {bot!r} cannot be used in a league: names must be "
                                "non-empty, without spaces or any of , + : @")
    if players < 1:
        raise ScheduleError(f"a league needs at least 1 player per match, not {players}")
    if max_tables < 1:
        raise ScheduleError(f"--tables must be at least 1, not {max_tables}")
    if len(bots) < players:
        raise ScheduleError(
            f"{players}-player matches need at least {players} bots, the league has "
            f"{len(bots)}: add bots or lower --players")
    rng = random.Random(f"arena-tables:{seed}")
    if gauntlet is None:
        if players <= 2:
            groups = list(itertools.combinations(bots, players))
        elif math.comb(len(bots), players) <= max_tables:
            groups = list(itertools.combinations(bots, players))
        else:
            groups = balanced_sample(bots, players, _even(max_tables, len(bots), players), rng)
    else:
        if gauntlet not in bots:
            raise ScheduleError(
                f"gauntlet bot {gauntlet!r} is not in the league (bots: {', '.join(bots)})")
        if players < 2:
            raise ScheduleError("a gauntlet needs matches of at least 2 players")
        others = [bot for bot in bots if bot != gauntlet]
        if players == 2 or math.comb(len(others), players - 1) <= max_tables:
            rest = list(itertools.combinations(others, players - 1))
        else:
            rest = balanced_sample(others, players - 1,
                                   _even(max_tables, len(others), players - 1), rng)
        groups = [(gauntlet, *group) for group in rest]
    if players >= 3:
        shuffled = []
        for group in groups:
            group = list(group)
            rng.shuffle(group)
            shuffled.append(tuple(group))
        groups = shuffled
    return groups


def expand(bots: Sequence[str], players: int, deals: int, seed: int, key: LeagueKey, *,
           gauntlet: str | None = None, max_tables: int = DEFAULT_MAX_TABLES,
           seating: str = DEFAULT_SEATING) -> list[MatchSpec]:
    """Every match of the league, round-major (all of round 0, then round 1, ...).

    Round-major order keeps a league that is stopped early as fair as it can be. Mirrored,
    round k plays a table's seatings starting from its k-th rotation, so every bot meets a
    deal first in each seat equally often: an order effect (arena.stats.botstats) is then not a
    seat effect.
    """
    if deals < 1:
        raise ScheduleError(f"a league needs at least 1 deal, not {deals}")
    if seating not in SEATINGS:
        raise ScheduleError(f"unknown seating {seating!r}: use independent (a deal of its own "
                            "per match) or mirrored (one deal in every seating; trusted bots)")
    groups = tables(bots, players, seed=seed, gauntlet=gauntlet, max_tables=max_tables)
    per_deal = sum(len(group) for group in groups)   # a table plays each of its rotations
    if deals * per_deal > MAX_MATCHES:
        raise ScheduleError(
            f"{deals:,} deals of {per_deal} matches make {deals * per_deal:,} matches, more "
            f"than a league holds ({MAX_MATCHES:,}): give at most "
            f"--deals {max(1, MAX_MATCHES // per_deal)}, and run another league for more")
    specs: list[MatchSpec] = []
    for deal_index in range(deals):
        for group in groups:
            seatings = list(enumerate(rotations(group)))
            if seating == "mirrored":
                start = deal_index % len(seatings)
                seatings = seatings[start:] + seatings[:start]
            for rotation, seats in seatings:
                seed_of_deal = key.deal_seed(deal_label(
                    deal_index, group, rotation if seating == "independent" else None))
                label = f"{seed_of_deal:016x}"
                if players == 1 and seating == "independent":
                    # Each bot its own cards; the round's label still groups the round's
                    # games, which ratings compare by score (different deals: noisier,
                    # not biased), so no two bots, of one author say, share a deal.
                    seed_of_deal = key.deal_seed(f"{deal_index}:solo:{group[0]}")
                match_id = f"d{deal_index:04d}:{','.join(seats)}"
                specs.append(MatchSpec(
                    id=match_id, order=len(specs), deal_index=deal_index, seed=seed_of_deal,
                    seats=seats, deal=label,
                    bot_seeds=tuple(key.bot_seed(match_id, seat) for seat in range(players))))
    return specs


def duplicate_pairs(new: str, old: str, field: Sequence[str], pairs: int,
                    key: LeagueKey) -> list[MatchSpec]:
    """The matches of an A/B test (`arena sprt`): `pairs` pairs of games, each pair one deal
    of its own played twice, NEW and OLD trading seats and the field bots keeping theirs.

    The seating of pair k is the k-th rotation of (NEW, OLD, *field), so over a run NEW and
    OLD sit in every seat alike; with 2 players a pair is simply both seatings. Within a pair
    NEW and OLD each sit in two different seats, so each of their pooled processes (one per
    seat) meets a deal once; a field bot keeps its seat and meets the deal in both games.
    Ids: `p000012a:new,old` and `p000012b:old,new`.
    """
    if pairs < 1:
        raise ScheduleError(f"an A/B test needs at least 1 pair, not {pairs}")
    if 2 * pairs > MAX_MATCHES:
        raise ScheduleError(f"{pairs:,} pairs are more matches than a test holds "
                            f"({MAX_MATCHES:,}): give at most --max-pairs {MAX_MATCHES // 2}")
    seatings = rotations((new, old, *field))
    specs: list[MatchSpec] = []
    for pair in range(pairs):
        first = seatings[pair % len(seatings)]
        swapped = tuple(old if bot == new else new if bot == old else bot for bot in first)
        seed_of_deal = key.deal_seed(f"pair:{pair}")
        for half, seats in (("a", first), ("b", swapped)):
            match_id = f"p{pair:06d}{half}:{','.join(seats)}"
            specs.append(MatchSpec(
                id=match_id, order=len(specs), deal_index=pair, seed=seed_of_deal,
                seats=seats, deal=f"{seed_of_deal:016x}",
                bot_seeds=tuple(key.bot_seed(match_id, seat) for seat in range(len(seats)))))
    return specs
