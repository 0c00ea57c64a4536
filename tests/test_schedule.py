"""League schedules are fair and deterministic (arena/league/schedule.py; issue 6)."""
from __future__ import annotations

import collections
import itertools
import math
import random

import pytest

from arena.keys import LeagueKey
from arena.league import schedule
from arena.league.schedule import (MAX_MATCHES, ScheduleError, balanced_sample,
                                   duplicate_pairs, expand, rotations)

KEY = LeagueKey(bytes(32))   # a fixed league key: schedules are pure functions of it


BOTS = ["ada", "bob", "cyd", "dee", "eve"]


def seatings_per_deal(specs):
    by_deal = collections.defaultdict(list)
    for spec in specs:
        by_deal[spec.deal_index].append(spec.seats)
    return by_deal


def test_two_players_round_robin_every_deal_twice_with_seats_swapped():
    specs = expand(BOTS, players=2, deals=3, seed=1, key=KEY)
    for seatings in seatings_per_deal(specs).values():
        assert len(seatings) == 2 * math.comb(len(BOTS), 2)
        for first, second in itertools.combinations(BOTS, 2):
            assert (first, second) in seatings and (second, first) in seatings


@pytest.mark.parametrize("players", [2, 3, 4])
def test_mirrored_every_table_has_a_deal_of_its_own_played_in_each_of_its_seatings(players):
    specs = expand(BOTS, players=players, deals=3, seed=1, key=KEY, seating="mirrored")
    seeds = collections.defaultdict(set)
    for spec in specs:
        seeds[spec.deal_index, frozenset(spec.seats)].add(spec.seed)
    assert all(len(found) == 1 for found in seeds.values())
    every_seed = [found.pop() for found in seeds.values()]
    assert len(set(every_seed)) == len(every_seed)   # no two tables, no two rounds share


@pytest.mark.parametrize("players", [2, 3, 4])
def test_mirrored_no_bot_meets_a_deal_twice_in_the_same_seat(players):
    # What lets one pooled process per bot and seat never see a deal twice, mirrored.
    specs = expand(BOTS, players=players, deals=3, seed=1, key=KEY, seating="mirrored")
    meetings = collections.Counter((bot, seat, spec.seed) for spec in specs
                                   for seat, bot in enumerate(spec.seats))
    assert set(meetings.values()) == {1}


@pytest.mark.parametrize("players, gauntlet, max_tables", [
    (1, None, 60), (2, None, 60), (3, None, 60), (4, None, 60), (3, None, 4), (4, "ada", 3),
    (2, "cyd", 60)])
def test_independent_no_bot_ever_meets_a_deal_twice_in_the_whole_schedule(players, gauntlet,
                                                                         max_tables):
    # The untrusted mode's promise, counted over every match: a deal is played once, so no
    # process of any bot (or of one author's several bots) plays it in another seating.
    bots = BOTS + ["fay", "gus"]
    specs = expand(bots, players=players, deals=6, seed=4, key=KEY, gauntlet=gauntlet,
                   max_tables=max_tables)
    meetings = collections.Counter((bot, spec.seed) for spec in specs for bot in spec.seats)
    assert len(specs) > 6 and set(meetings.values()) == {1}
    if players > 1:   # every match a deal of its own (alone, bots share the round's deal)
        assert len({spec.seed for spec in specs}) == len({spec.deal for spec in specs}) \
            == len(specs)
    # ... and the same league mirrored, the same matches, does repeat them (the check can fail).
    mirrored = expand(bots, players=players, deals=6, seed=4, key=KEY, gauntlet=gauntlet,
                      max_tables=max_tables, seating="mirrored")
    assert sorted(spec.id for spec in mirrored) == sorted(spec.id for spec in specs)
    assert max(collections.Counter(spec.seed for spec in mirrored).values()) == \
        (len(bots) if players == 1 else players)


@pytest.mark.parametrize("seating", ["independent", "mirrored"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_each_round_every_bot_sits_in_each_seat_equally_often(seating, players):
    specs = expand(BOTS, players=players, deals=3, seed=3, key=KEY, seating=seating)
    for deal_index in range(3):
        per_seat = collections.Counter((spec.seats[i], i) for spec in specs
                                       if spec.deal_index == deal_index
                                       for i in range(players))
        assert len(per_seat) == len(BOTS) * players and len(set(per_seat.values())) == 1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_mirrored_every_bot_meets_a_deal_first_in_each_seat_equally_often(players):
    # So that a bot's later seatings of a deal are, over a league, in no seat more than
    # another: the order-effect statistic (arena.stats.botstats) then measures order, not seat.
    specs = expand(BOTS, players=players, deals=2 * 3 * 4, seed=3, key=KEY, seating="mirrored")
    first = {}
    for spec in specs:   # schedule order
        for seat, bot in enumerate(spec.seats):
            first.setdefault((bot, spec.seed), seat)
    per_bot = collections.Counter((bot, seat) for (bot, _), seat in first.items())
    assert len(per_bot) == len(BOTS) * players and len(set(per_bot.values())) == 1


def test_an_unknown_seating_is_refused_naming_the_modes():
    with pytest.raises(ScheduleError, match="unknown seating 'shuffled': use independent"):
        expand(BOTS, 2, deals=1, seed=0, key=KEY, seating="shuffled")


def test_bot_seeds_are_keyed_and_differ_per_seat_and_match():
    specs = expand(BOTS, players=3, deals=2, seed=1, key=KEY)
    seeds = [seed for spec in specs for seed in spec.bot_seeds]
    assert all(len(spec.bot_seeds) == 3 for spec in specs)
    assert len(set(seeds)) == len(seeds)
    other = expand(BOTS, players=3, deals=2, seed=1, key=LeagueKey(bytes([1]) * 32))
    assert not set(seeds) & {seed for spec in other for seed in spec.bot_seeds}
    assert not {spec.seed for spec in specs} & {spec.seed for spec in other}


def test_three_players_every_group_in_every_rotation():
    specs = expand(BOTS, players=3, deals=2, seed=9, key=KEY)
    for seatings in seatings_per_deal(specs).values():
        groups = collections.Counter(frozenset(seats) for seats in seatings)
        assert set(groups) == {frozenset(g) for g in itertools.combinations(BOTS, 3)}
        assert set(groups.values()) == {3}
        for seats in seatings:
            assert set(rotations(seats)) <= set(seatings)


def test_each_bot_sits_in_each_seat_equally_often():
    for players in (2, 3, 4):
        specs = expand(BOTS, players=players, deals=2, seed=3, key=KEY)
        per_seat = collections.Counter((spec.seats[i], i) for spec in specs
                                       for i in range(players))
        assert len(set(per_seat.values())) == 1, players
        assert len(per_seat) == len(BOTS) * players


@pytest.mark.parametrize("seating", ["independent", "mirrored"])
def test_one_player_every_bot_plays_each_round_under_one_label(seating):
    # 1-player games of a round are compared with each other (arena.stats.ratings), in either mode:
    # mirrored on the very same cards, independent each bot on cards of its own.
    specs = expand(BOTS, players=1, deals=3, seed=5, key=KEY, seating=seating)
    for deal_index, seatings in seatings_per_deal(specs).items():
        assert sorted(seats[0] for seats in seatings) == sorted(BOTS)
        round_specs = [s for s in specs if s.deal_index == deal_index]
        assert len({s.deal for s in round_specs}) == 1
        assert len({s.seed for s in round_specs}) == (1 if seating == "mirrored" else len(BOTS))
    if seating == "independent":   # no deal twice in the whole league, whoever plays it
        assert len({s.seed for s in specs}) == len(specs)


def test_deal_labels_name_the_deal_so_other_leagues_share_them_only_on_the_same_deal():
    other_key = LeagueKey(bytes([7]) * 32)
    first, other = expand(BOTS, 2, 1, seed=1, key=KEY), expand(BOTS, 2, 1, seed=1, key=other_key)
    assert not {s.deal for s in first} & {s.deal for s in other}
    assert {s.deal for s in first} == {s.deal for s in expand(BOTS, 2, 1, seed=1, key=KEY)}


@pytest.mark.parametrize("players", [2, 3])
def test_mirrored_every_seating_of_a_tables_deal_shares_its_label(players):
    # Ratings cluster by this label: the same cards tie the games of one table's deal.
    specs = expand(BOTS, players=players, deals=3, seed=5, key=KEY, seating="mirrored")
    labels = collections.defaultdict(set)
    for spec in specs:
        labels[spec.deal_index, frozenset(spec.seats)].add(spec.deal)
    assert all(len(found) == 1 for found in labels.values())
    assert len(set.union(*labels.values())) == len(labels)


def test_too_many_groups_are_sampled_with_equal_counts_per_bot():
    bots = [f"bot{i}" for i in range(12)]
    specs = expand(bots, players=4, deals=1, seed=2, max_tables=30, key=KEY)
    groups = {frozenset(spec.seats) for spec in specs}
    assert len(groups) == 30
    tables_per_bot = collections.Counter(bot for group in groups for bot in group)
    assert set(tables_per_bot.values()) == {10}          # 30 tables x 4 seats / 12 bots


def test_a_sample_size_is_rounded_up_so_every_bot_sits_equally_often():
    bots = [f"bot{i}" for i in range(7)]
    specs = expand(bots, players=3, deals=1, seed=2, max_tables=20, key=KEY)
    groups = {frozenset(spec.seats) for spec in specs}
    assert len(groups) == 21                               # 21 x 3 seats = 9 per bot
    assert set(collections.Counter(bot for g in groups for bot in g).values()) == {9}
    gauntlet = expand(bots, players=4, deals=1, seed=2, max_tables=10, gauntlet="bot0", key=KEY)
    others = collections.Counter(bot for spec in gauntlet for bot in spec.seats)
    del others["bot0"]
    assert len(set(others.values())) == 1


@pytest.mark.parametrize("size", [3, 4])
def test_sampled_tables_are_distinct_and_balanced_however_many_are_asked(size):
    # Up to every possible group (where a greedy draw alone repeats groups): a repeated table
    # would replay a match id, and a league would stop at it as "already stored".
    for count in (5, 7, 10, 20, 30, 60):
        for bots, gauntlet in (([f"b{i}" for i in range(6)], None),
                               ([f"b{i}" for i in range(7)], "b0"),
                               ([f"b{i}" for i in range(9)], None)):
            for seed in range(3):
                specs = expand(bots, size, 2, seed, max_tables=count, gauntlet=gauntlet, key=KEY)
                assert len({spec.id for spec in specs}) == len(specs)
                groups = [frozenset(spec.seats) for spec in specs if spec.deal_index == 0]
                counts = collections.Counter(bot for group in set(groups) for bot in group
                                             if bot != gauntlet)
                assert len(groups) == size * len(set(groups)), (count, bots, seed)
                assert len(counts) == len(bots) - (gauntlet is not None)
                assert len(set(counts.values())) == 1, (count, bots, seed)


def test_balanced_sample_spread_is_at_most_one():
    bots = [f"b{i}" for i in range(7)]
    groups = balanced_sample(bots, 3, 10, random.Random(4))
    counts = collections.Counter(bot for group in groups for bot in group)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert len(set(groups)) == 10


def test_gauntlet_plays_one_bot_against_all_others_with_the_same_fairness():
    specs = expand(BOTS, players=2, deals=2, seed=1, gauntlet="cyd", key=KEY)
    assert all("cyd" in spec.seats for spec in specs)
    opponents = collections.Counter(bot for spec in specs for bot in spec.seats if bot != "cyd")
    assert set(opponents) == set(BOTS) - {"cyd"} and len(set(opponents.values())) == 1
    seat_of_cyd = collections.Counter(spec.seats.index("cyd") for spec in specs)
    assert seat_of_cyd[0] == seat_of_cyd[1]


def test_gauntlet_with_three_players_keeps_rotations():
    specs = expand(BOTS, players=3, deals=1, seed=1, gauntlet="ada", key=KEY)
    assert len(specs) == math.comb(4, 2) * 3
    assert collections.Counter(spec.seats.index("ada") for spec in specs) == {0: 6, 1: 6, 2: 6}


@pytest.mark.parametrize("seating", ["independent", "mirrored"])
def test_same_seed_and_key_same_schedule_other_key_other_deals(seating):
    first = expand(BOTS, players=3, deals=3, seed=11, key=KEY, seating=seating)
    assert first == expand(BOTS, players=3, deals=3, seed=11, key=KEY, seating=seating)
    other_key = LeagueKey.for_league(12, installation=KEY)
    assert [s.seed for s in first] != [s.seed for s in expand(BOTS, 3, 3, seed=11, key=other_key)]


def test_the_league_key_follows_from_seed_and_installation_key_and_nothing_else():
    assert LeagueKey.for_league(11, installation=KEY) == LeagueKey.for_league(11, installation=KEY)
    assert LeagueKey.for_league(11, installation=KEY) != LeagueKey.for_league(12, installation=KEY)
    assert (LeagueKey.for_league(11, installation=KEY)
            != LeagueKey.for_league(11, installation=LeagueKey(bytes([3]) * 32)))


def test_ids_are_unique_and_stable():
    specs = expand(BOTS, players=2, deals=3, seed=1, key=KEY)
    assert len({spec.id for spec in specs}) == len(specs)
    assert specs[0].id == "d0000:ada,bob" and specs[1].id == "d0000:bob,ada"
    assert [spec.order for spec in specs] == list(range(len(specs)))


def test_deal_seeds_fit_a_signed_64_bit_field():
    assert all(0 <= spec.seed < 2 ** 63 and all(0 <= seed < 2 ** 63 for seed in spec.bot_seeds)
               for spec in expand(BOTS, players=2, deals=3, seed=1, key=KEY))


@pytest.mark.parametrize("bots, players, gauntlet, message", [
    (["a", "b"], 3, None, "need at least 3 bots"),
    (["a", "a"], 2, None, "share a name"),
    (["a", "b,c"], 2, None, "cannot be used"),
    (["a", "b"], 2, "z", "not in the league"),
    (["a", "b"], 1, "a", "at least 2 players"),
])
def test_impossible_leagues_are_refused_with_a_reason(bots, players, gauntlet, message):
    with pytest.raises(ScheduleError, match=message):
        expand(bots, players, deals=1, seed=0, gauntlet=gauntlet, key=KEY)


def test_a_league_of_more_than_a_million_matches_is_refused_before_it_is_planned(monkeypatch):
    with pytest.raises(ScheduleError, match="2,000,000,000 matches"):   # at once, not in hours
        expand(BOTS, 2, deals=100_000_000, seed=0, key=KEY)
    assert MAX_MATCHES == 1_000_000
    monkeypatch.setattr(schedule, "MAX_MATCHES", 100)   # the bound itself, in a small league
    # five bots, two players: ten tables, each in both seatings, 20 matches a deal
    assert len(expand(BOTS, 2, deals=5, seed=0, key=KEY)) == 100
    with pytest.raises(ScheduleError, match="give at most --deals 5,"):
        expand(BOTS, 2, deals=6, seed=0, key=KEY)
    with pytest.raises(ScheduleError, match="give at most --max-pairs 50"):   # two a pair
        duplicate_pairs("new", "old", [], 51, key=KEY)


def test_zero_deals_or_tables_is_refused():
    with pytest.raises(ScheduleError, match="at least 1 deal"):
        expand(BOTS, 2, deals=0, seed=0, key=KEY)
    for tables in (0, -5):   # not a silent league of no matches
        with pytest.raises(ScheduleError, match="--tables must be at least 1"):
            expand(BOTS, 3, deals=1, seed=0, max_tables=tables, key=KEY)
