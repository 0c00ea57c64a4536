"""Per-bot statistics (`arena ladder --stats`): points, results as first mover and in later
seats, move times, forfeits by reason and the order effect of mirrored deals, checked by
hand on small cases and against the records of real leagues (a crashing bot's forfeits
included)."""
from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from arena.stats.botstats import FLAG_P, MatchFacts, bot_stats, order_effects, sign_test
from arena.stats.report import Leader
from arena.cli.progress import Progress
from arena.stats.ratings import Outcome
from arena.league.store import Store

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]


def arena(*args) -> subprocess.CompletedProcess:
    done = subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


def test_points_seats_times_and_forfeits_by_hand():
    matches = [
        MatchFacts(("a", "b", "c"), (10, 4, 4), (1, 2, 2), None, None,
                   ((0, 0.010), (1, 0.030), (2, 0.001), (0, 0.020))),
        MatchFacts(("b", "a", "c"), (0, 1, 1), (3, 1, 1), 0, "timeout", ((0, 1.2),)),
        MatchFacts(("c", "a", "b"), (0, 1, 1), (3, 1, 1), 0, "crash", ()),
    ]
    a, b, c = bot_stats(matches, order=["a", "b", "c"])
    assert a.matches == 3 and a.points == [10, 1, 1]
    assert a.mean_points == 4 and math.isclose(a.sd_points, math.sqrt(27))
    # a first: beat both (2 of 2); later: tie with c and beat b, twice -> (1.5 + 1.5) / 4.
    assert a.seat_score("first") == 1.0 and a.seat_score("later") == 0.75
    # b later: lost to a, tied c (match 1: 0.5); tied a, beat c (match 3: 1.5) -> 2 of 4.
    # b first (match 2): lost to both.
    assert b.seat_score("later") == 0.5 and b.seat_score("first") == 0.0
    assert math.isclose(a.mean_move, 0.015) and a.slowest == 0.020
    assert b.slowest == 1.2 and c.move_count == 1
    assert dict(b.forfeits) == {"timeout": 1} and dict(c.forfeits) == {"crash": 1}
    assert not a.forfeits


def test_one_player_games_give_the_mean_score_and_no_seat_results():
    matches = [MatchFacts(("solo",), (score,), (1,), None, None, ()) for score in (30, 34, 41)]
    solo, = bot_stats(matches)
    assert solo.mean_points == 35 and math.isnan(solo.seat_score("first"))
    assert math.isnan(solo.seat_score("later"))


# -- order effect ------------------------------------------------------------------------------

def mirrored_pairs(first_results, later_results, bot="cheat", other="fair"):
    """Two matches per deal (2 players): `bot` first in one seating, then in the other,
    with the given results (1 win, 0 loss, 0.5 tie) in each; seats alternate per deal as
    a mirrored league's do."""
    matches = []
    for deal, (first, later) in enumerate(zip(first_results, later_results)):
        for when, result in enumerate((first, later)):
            seats = (bot, other) if (deal + when) % 2 == 0 else (other, bot)
            mine, theirs = {1: (1, 2), 0: (2, 1), 0.5: (1, 1)}[result]
            ranks = (mine, theirs) if seats[0] == bot else (theirs, mine)
            matches.append(MatchFacts(seats, (0, 0), ranks, None, None, (), deal=1000 + deal,
                                      started=100.0 * deal + when))
    return matches


def test_a_bot_that_wins_every_later_seating_is_flagged_a_fair_one_is_not():
    rng = random.Random(5)
    # The cheat: its first seating of a deal is a fair game (it wins half), the later one it
    # always wins, knowing the opponent's hand from its other process.
    firsts = [rng.choice((0, 1)) for _ in range(20)]
    effects = order_effects(mirrored_pairs(firsts, [1] * 20))
    cheat, fair = effects["cheat"], effects["fair"]
    assert cheat.deals == 20 and cheat.worse == 0 and cheat.better == firsts.count(0) >= 7
    assert cheat.p_value == 0.5 ** cheat.better < FLAG_P and cheat.flagged
    assert cheat.mean_difference == firsts.count(0) / 20
    assert fair.better == 0 and fair.p_value == 1.0 and not fair.flagged
    # A fair bot: later seatings win and lose alike, whatever the seat.
    fair_games = order_effects(mirrored_pairs([rng.choice((0, 0.5, 1)) for _ in range(40)],
                                              [rng.choice((0, 0.5, 1)) for _ in range(40)]))
    assert all(not effect.flagged and effect.p_value > 0.05
               for effect in fair_games.values()), fair_games


def test_the_first_seating_is_the_one_that_started_first_not_the_one_listed_first():
    matches = mirrored_pairs([0] * 8, [1] * 8)
    swapped = [MatchFacts(m.bots, m.scores, m.ranks, None, None, (), deal=m.deal,
                          started=-m.started) for m in matches]
    assert order_effects(matches)["cheat"].better == 8
    assert order_effects(swapped)["cheat"].worse == 8   # started in the reverse order
    # Matches without a deal (older facts) or alone at a deal count for nothing.
    bare = [MatchFacts(m.bots, m.scores, m.ranks, None, None, ()) for m in matches]
    assert order_effects(bare) == {} and order_effects(matches[::2]) == {}


def test_three_seatings_compare_the_mean_of_the_later_two_with_the_first():
    # a: first seating lost to both (0), then beat both (1), then tied b and beat c (0.75):
    # later mean 0.875, better.
    deal = [MatchFacts(("a", "b", "c"), (0, 0, 0), (3, 1, 2), None, None, (), 7, 1.0),
            MatchFacts(("c", "a", "b"), (0, 0, 0), (3, 1, 2), None, None, (), 7, 2.0),
            MatchFacts(("b", "c", "a"), (0, 0, 0), (1, 3, 1), None, None, (), 7, 3.0)]
    a = order_effects(deal)["a"]
    assert (a.deals, a.better, a.worse, a.mean_difference) == (1, 1, 0, 0.875)


def test_the_sign_test_by_hand():
    assert sign_test(0, 0) == 1.0 and sign_test(3, 0) == 0.125
    assert sign_test(2, 1) == 0.5 and math.isclose(sign_test(9, 1), 11 / 1024)
    assert sign_test(0, 5) == 1.0


@pytest.mark.slow
@pytest.mark.sandbox
def test_ladder_stats_of_a_league_match_its_records(tmp_path):
    folder = tmp_path / "lg"
    arena("league", "run", "--game", "mandala", "--deals", 4, "--seed", 3,
          "--bot", ROOT / "tests" / "league_bots" / "crashy",
          "--bot", ROOT / "tests" / "misbehaving_bots" / "illegal_move",
          "--bot", "random", "--out", folder, "--quiet", "--skip-check", "--workers", 1)
    stats = {row["bot"].split("@")[0]: row for row in
             json.loads(arena("ladder", folder, "--stats", "--format", "json").stdout)["stats"]}
    with Store.open(folder) as store:
        records = store.records()
    assert sorted(stats) == ["crashy", "illegal_move", "random"]
    for name, row in stats.items():
        points, times, forfeits = [], [], 0
        played = [record for record in records if name in record["players"]]
        for record in played:
            seat = record["players"].index(name)
            points.append(record["result"]["scores"][seat])
            times += [t for (mover, _), t in zip(record["moves"], record["times"]) if mover == seat]
            forfeits += record["result"].get("forfeit", {}).get("seat") == seat
        assert row["matches"] == len(played) == 16
        assert row["mean_points"] == round(statistics.mean(points), 2)
        assert row["sd_points"] == round(statistics.stdev(points), 2)
        assert row["max_move_ms"] == (round(max(times) * 1000, 1) if times else None)
        assert sum(row["forfeits"].values()) == forfeits
    # illegal_move forfeits every match it plays; crashy crashes when its keyed rng_seed is a
    # multiple of 3 (in some matches, by chance); random never forfeits.
    assert stats["illegal_move"]["forfeits"] == {"illegal": 16}
    assert set(stats["crashy"]["forfeits"]) <= {"crash"} and stats["random"]["forfeits"] == {}
    table = arena("ladder", folder, "--stats").stdout
    row = next(line for line in table.splitlines() if line.startswith("illegal_move"))
    # Independent deals (the default): no bot met a deal twice, so no order effect to show.
    assert row.endswith("illegal 16                                 -")
    assert "1st seat %" in table and "move ms max" in table
    assert all(row["order_deals"] == 0 for row in stats.values())


def test_a_one_player_league_shows_each_bots_mean_score(tmp_path):
    folder = tmp_path / "solo"
    arena("league", "run", "--game", "flowers", "--players", 1, "--deals", 3, "--seed", 2,
          "--bot", "random", "--bot", "greedy", "--out", folder, "--quiet")
    rows = json.loads(arena("ladder", folder, "--stats", "--format", "json").stdout)["stats"]
    with Store.open(folder) as store:
        records = store.records()
    for row in rows:
        name = row["bot"].split("@")[0]
        scores = [r["result"]["scores"][0] for r in records if r["players"] == [name]]
        assert len(scores) == 3 and row["mean_points"] == round(statistics.mean(scores), 2)
        assert row["first_seat_score_pct"] is None


def test_the_progress_line_says_what_its_leader_figure_is():
    outcomes = [Outcome(f"m{i}", i, ("greedy@1", "random@2"), (1, 2), (5.0, 1.0), f"d{i}")
                for i in range(3)]
    leader = Leader([])
    bar = Progress(4, 0, unit="matches", status=leader.text, stream=None)
    for outcome in outcomes:
        leader.add(outcome)
        bar.advance()
    assert bar.line().endswith("leader greedy (100% of pairwise points)")
