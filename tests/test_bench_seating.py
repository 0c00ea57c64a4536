"""`arena bench seating`: what mirrored deals buy (arena/bench/seating.py).

The ratio is checked on constructed results, where the answer is known; real runs are
short here and checked for shape, determinism and the games they really play.
"""
from __future__ import annotations

import json
import math
import random

import pytest
from click.testing import CliRunner

from arena.bench import seating
from arena.cli import main
from arena.sdk import strategies


def test_a_deal_that_decides_the_game_makes_a_mirrored_pair_worth_far_more():
    # Each deal hands the game to one seat: A wins one seating of it and loses the other.
    # Mirrored, every pair scores exactly 1/2 (no variance); independent games do not.
    rng = random.Random(1)
    decided = [[x, 1 - x] for x in (float(rng.random() < 0.5) for _ in range(200))]
    independent, mirrored, ratio = seating.variance_ratio(decided)
    assert mirrored == 0 and independent > 0.1 and ratio == math.inf


def test_games_that_owe_nothing_to_the_deal_give_a_ratio_near_one():
    rng = random.Random(2)
    coins = [[float(rng.random() < 0.6), float(rng.random() < 0.6)] for _ in range(4000)]
    assert 0.9 < seating.variance_ratio(coins)[2] < 1.1
    # ... and a deal that helps A in both seatings makes mirroring cost (ratio below 1).
    lucky = [[x, x] for x in (float(rng.random() < 0.5) for _ in range(400))]
    assert seating.variance_ratio(lucky)[2] < 0.6


def test_one_player_compares_two_bots_on_a_shared_deal_against_deals_of_their_own():
    rng = random.Random(3)
    deal_luck = [rng.gauss(0, 10) for _ in range(2000)]
    shared = [[luck + rng.gauss(5, 1), luck + rng.gauss(0, 1)] for luck in deal_luck]
    independent, mirrored, ratio = seating.variance_ratio(shared, solo=True)
    assert 150 < independent < 250 and mirrored < 3 and ratio > 50


def test_noisy_greedy_plays_a_random_move_at_the_given_share():
    calls = []

    def first(observation, legal_moves, rng):
        calls.append(1)
        return legal_moves[0]

    choose = seating.noisy(first, 0.25)
    rng = random.Random(4)
    moves = [choose({}, ["a", "b", "c", "d"], rng) for _ in range(4000)]
    assert 0.2 < 1 - len(calls) / 4000 < 0.3 and set(moves) == {"a", "b", "c", "d"}


def test_a_set_is_the_same_deal_in_every_rotation_with_a_in_each_seat():
    rows = seating.deal_results("flowers-mandala", 3, "distant", deals=4, seed=5)
    assert len(rows) == 4 and all(len(row) == 3 for row in rows)
    assert rows == seating.deal_results("flowers-mandala", 3, "distant", deals=4, seed=5)
    assert sum(map(sum, rows)) / 12 > 0.7   # A (greedy) beats random most of the time
    # A game is fixed by its deal and the bots' seeds: the same twice, another with others.
    greedy = strategies.get("greedy", "mandala")
    noisy = seating.noisy(greedy, 0.5)
    games = [seating.play("mandala", deal, [noisy, noisy], seeds)
             for deal, seeds in ((7, "x"), (7, "x"), (8, "x"), (7, "y"))]
    assert games[0] == games[1] and games[0] != games[2] and games[0] != games[3]


@pytest.mark.slow
def test_the_search_pairing_plays_ismcts_at_fixed_iterations_so_it_replays():
    # Asked for by name only (slow); a fixed iteration count makes its games reproducible.
    rows = seating.deal_results("mandala", 2, "search", deals=2, seed=3)
    assert rows == seating.deal_results("mandala", 2, "search", deals=2, seed=3)
    assert "search" not in seating.DEFAULT_KINDS and all(len(row) == 2 for row in rows)


def test_the_command_prints_a_row_per_configuration_and_pairing():
    result = CliRunner().invoke(main, ["bench", "seating", "--deals", "5", "--game", "mandala"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("mandala ")]
    assert [row.split()[2] for row in rows] == ["close", "distant"]
    assert "ratio = independent / mirrored" in result.output
    as_json = CliRunner().invoke(main, ["bench", "seating", "--deals", "5", "--game",
                                        "flowers-mandala", "--kind", "close", "--json"])
    figures = json.loads(as_json.output)["results"]
    assert [(f["players"], f["kind"]) for f in figures] == [(2, "close"), (3, "close"),
                                                            (4, "close")]
    assert all(f["worth_games"] is None or f["worth_games"] > 0 for f in figures)


def test_bad_input_is_refused_in_one_line():
    for args, message in ((["--game", "chess"], "unknown game 'chess'"),
                          (["--deals", "2"], "--deals")):
        result = CliRunner().invoke(main, ["bench", "seating", *args])
        assert result.exit_code == 2 and message in result.output, result.output
