"""The SPRT's math: likelihood ratios, bounds, estimates, and its error rates on simulated
duplicate pairs with a known Elo difference."""
from __future__ import annotations

import math
import random

import pytest

from arena.stats import sprt
from arena.bench import sprt as simulation


def test_wald_bounds():
    lower, upper = sprt.bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    with pytest.raises(ValueError):
        sprt.bounds(0, 0.05)


def test_the_llr_leans_towards_the_hypothesis_the_results_fit():
    good_for_new = [2, 10, 40, 25, 8]
    good_for_old = list(reversed(good_for_new))
    assert sprt.llr(good_for_new, 0, 20) > 0 > sprt.llr(good_for_old, 0, 20)
    assert sprt.llr(good_for_new, 0, 20, "normalized") > 0
    assert sprt.llr([0] * 5, 0, 20) == 0.0


def test_the_llr_is_the_likelihood_ratio_of_the_nearest_distributions():
    """With results exactly at H1's expected score, the H1 fit is the data itself."""
    counts = [10, 20, 40, 20, 10]     # mean 0.5: H0 (elo 0) fits exactly
    s1 = sprt.logistic_score(10)
    value = sprt.llr(counts, 0, 10)
    assert value < 0
    total, p = sprt._distribution(counts, sprt.PAIR_SCORES)
    q1 = sprt._max_likelihood(p, sprt.PAIR_SCORES, s1)
    assert sum(q * a for q, a in zip(q1, sprt.PAIR_SCORES)) == pytest.approx(s1)
    assert value == pytest.approx(total * sum(pi * math.log(b / pi) for pi, b in zip(p, q1)))


def test_the_estimate_and_its_interval():
    counts = [5, 20, 50, 20, 5]
    estimate = sprt.estimate(counts)
    assert estimate.elo == pytest.approx(0.0, abs=1e-9)
    assert estimate.elo_low < 0 < estimate.elo_high
    assert estimate.elo_high == pytest.approx(-estimate.elo_low)
    better = sprt.estimate([1, 10, 50, 30, 9])
    assert better.elo > 0 and better.nelo > 0


def test_pairing_reduces_the_variance_when_pairs_cancel():
    tally = sprt.Tally()
    for _ in range(50):
        tally.add_pair(1.0, 0.0)      # each deal decides the game: the pair always splits
    tally.add_pair(1.0, 1.0)
    tally.add_pair(0.0, 0.0)
    assert tally.pairs == 52 and tally.trinomial == [52, 0, 52]
    assert sprt.variance_ratio(tally.pentanomial, tally.trinomial) < 0.2


@pytest.mark.slow   # 5-7 s on a 2-core VM: out of the quick selection
@pytest.mark.parametrize("test", ["pentanomial", "trinomial"])
def test_wrong_decisions_stay_within_alpha_and_beta(test):
    """300 runs where H0 is true, 300 where H1 is: wrong decisions at most alpha (beta) plus
    three binomial standard deviations of 300 runs (0.052 at 0.1)."""
    alpha = beta = 0.1
    tolerance = 3 * math.sqrt(0.1 * 0.9 / 300)
    rng = random.Random(5)
    index = 0 if test == "pentanomial" else 1
    runs = 300
    wrong_h1 = sum(simulation.run_both(rng, 0, 0, 40, alpha, beta, 20_000)[index].decision
                   == sprt.H1 for _ in range(runs))
    wrong_h0 = sum(simulation.run_both(rng, 40, 0, 40, alpha, beta, 20_000)[index].decision
                   == sprt.H0 for _ in range(runs))
    assert wrong_h1 / runs <= alpha + tolerance
    assert wrong_h0 / runs <= beta + tolerance


def test_the_simulation_is_calibrated_to_the_requested_elo():
    rng = random.Random(2)
    strength = simulation.strength_for(40)
    pairs = [simulation.simulated_pair(rng, strength) for _ in range(40_000)]
    mean = sum(a + b for a, b in pairs) / (2 * len(pairs))
    assert mean == pytest.approx(sprt.logistic_score(40), abs=0.005)


def test_bench_sprt_compares_pentanomial_and_trinomial_on_the_same_games():
    import json

    from click.testing import CliRunner

    from arena.cli import main

    result = CliRunner().invoke(main, ["bench", "sprt", "--runs", "4", "--elo", "40",
                                       "--elo1", "40", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)["results"]
    assert [f["test"] for f in figures] == ["pentanomial", "trinomial"]
    for figure in figures:
        assert figure["runs"] == 4 and figure["mean_pairs"] > 0
        assert 0 <= figure["accepted_h1"] <= 1
