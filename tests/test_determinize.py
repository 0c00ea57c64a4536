"""Determinisation: a state drawn from one seat's observation shows that seat the same thing,
and, on decks small enough to count every case, is drawn as a fair shuffle would deal it."""
from __future__ import annotations

import math
import random
from collections import Counter
from itertools import permutations

import pytest

from engine import registry
from engine.core import CHANCE, InvalidSetupError
from engine.games.flowers import DECK_COUNTS
from engine.games.flowers_mandala import COLOURS

CONFIGS = [("mandala", 2), ("flowers-mandala", 2), ("flowers-mandala", 3),
           ("flowers-mandala", 4), ("flowers", 1), ("flowers", 2), ("flowers", 3),
           ("flowers", 4)]


def random_positions(game_id: str, players: int, seed: int, options=None):
    """Every decision of a random game: yields the state before each seat's move."""
    game = registry.get(game_id)
    state = game.new_state(players, options, seed=seed)
    rng = random.Random(seed)
    while not state.is_over():
        if state.to_move() == CHANCE:
            state.apply(state.sample_chance(rng))
            continue
        yield state
        state.apply(rng.choice(state.legal_moves()))
    yield state


@pytest.mark.parametrize("game_id,players", CONFIGS)
def test_a_sampled_state_shows_the_seat_what_it_saw_and_plays_on(game_id, players):
    game = registry.get(game_id)
    rng = random.Random(7)
    checked = 0
    for seed in range(12):
        for state in random_positions(game_id, players, seed):
            if rng.random() > 0.15 and not state.is_over():
                continue
            seat = rng.randrange(players)
            seen = state.observation(seat)
            sample = game.determinize(seen, seat, rng, options=state.options)
            assert sample.observation(seat) == seen
            assert sample.to_move() == state.to_move()
            if state.to_move() == seat:
                assert sample.legal_moves() == state.legal_moves()
            # Every other seat sees a position of the same shape (its own hand may differ).
            for other in range(players):
                assert sample.observation(other).keys() == seen.keys()
            while not sample.is_over():   # the sample is a whole state: it plays to the end
                sample.apply(sample.sample_chance(rng) if sample.to_move() == CHANCE
                             else rng.choice(sample.legal_moves()))
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("game_id,players", CONFIGS)
def test_draws_of_one_determinizer_are_those_of_determinize_and_independent(game_id, players):
    """A search reads an observation once (`Game.determinizer`) and draws a state from it per
    iteration, then plays that state to its end: each draw is the state `determinize` gives
    for the same rng, whatever was played on the draws before it."""
    game = registry.get(game_id)
    checked = 0
    for seed in range(3):
        for ply, state in enumerate(random_positions(game_id, players, seed)):
            if ply % 5 or state.is_over():
                continue
            seat = state.to_move()
            seen = state.observation(seat)
            deal = game.determinizer(seen, seat, options=state.options)
            for draw in range(3):
                mine, theirs = random.Random(draw), random.Random(draw)
                drawn = deal(mine)
                expected = game.determinize(seen, seat, theirs, options=state.options)
                assert drawn.observation(seat) == seen
                for other in range(players):
                    assert drawn.observation(other) == expected.observation(other)
                assert drawn.legal_moves() == expected.legal_moves()
                assert mine.random() == theirs.random()
                while not drawn.is_over():   # played out, as a search does
                    drawn.apply(drawn.sample_chance(mine) if drawn.to_move() == CHANCE
                                else mine.choice(drawn.legal_moves()))
                checked += 1
    assert checked > 20


def test_the_sample_hides_what_the_seat_cannot_see():
    """Mandala: the opponent's hand is not copied from the real state (it varies)."""
    game = registry.get("mandala")
    state = game.new_state(2, seed=3)
    seen = state.observation(0)
    hands = {tuple(game.determinize(seen, 0, random.Random(i)).observation(1)["hand"])
             for i in range(20)}
    assert len(hands) > 10


def test_an_impossible_observation_is_refused():
    game = registry.get("mandala")
    seen = game.new_state(2, seed=1).observation(0)
    seen["hand"] = ["red"] * 19
    with pytest.raises(InvalidSetupError, match="not a mandala observation"):
        game.determinize(seen, 0, random.Random(1))


# -- uniformity --------------------------------------------------------------------------------
def chi_square_p(observed: Counter, expected: dict, samples: int) -> float:
    """Upper tail of Pearson's statistic (Wilson-Hilferty approximation of chi-square)."""
    assert set(observed) <= set(expected), "a sample outside the possible assignments"
    statistic = sum((observed[key] - samples * p) ** 2 / (samples * p)
                    for key, p in expected.items())
    k = len(expected) - 1
    z = ((statistic / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))


def fair_deal_distribution(pool: list[str], split) -> dict:
    """Each hidden assignment's probability when the unseen cards are shuffled, each card told
    apart: every ordering of the pool is equally likely; `split(order)` names the assignment."""
    counts = Counter(split(list(order)) for order in permutations(pool))
    total = sum(counts.values())
    return {key: count / total for key, count in counts.items()}


def test_flowers_mandala_deals_the_unseen_cards_uniformly():
    """Six cards (one per colour), one each in hand: seat 0 sees its own card; the other
    hand and the four-card deck are all 5! orderings alike."""
    game = registry.get("flowers-mandala")
    options = {"cards_per_colour": 1, "hand_size": 1}
    state = game.new_state(2, options, seed=5)
    seen = state.observation(0)
    pool = sorted(set(COLOURS) - set(seen["hand"]))
    expected = fair_deal_distribution(pool, lambda order: (order[0], tuple(order[1:])))
    rng = random.Random(11)
    samples = 40 * len(expected)
    observed = Counter()
    for _ in range(samples):
        sample = game.determinize(seen, 0, rng, options=options)
        deck = tuple(COLOURS[c] for c in reversed(sample.deck))   # top card first
        observed[(sample.observation(1)["hand"][0], deck)] += 1
    assert len(expected) == 120
    assert chi_square_p(observed, expected, samples) > 0.001


def test_flowers_mandala_shuffles_the_unseen_tiles_uniformly():
    game = registry.get("flowers-mandala")
    state = game.new_state(2, seed=5)
    seen = state.observation(1)
    shown = Counter(m["dark_tile"] for m in seen["mandalas"])
    left = Counter(f"{colour}:{value}" for colour in ("grey", "purple", "red")
                   for value in "1 1 2 2 3 x3".split()) - shown
    expected = {tile: n / sum(left.values()) for tile, n in left.items()}
    rng = random.Random(2)
    samples = 3000
    observed = Counter(game.determinize(seen, 1, rng).dark[-1] for _ in range(samples))
    assert chi_square_p(observed, expected, samples) > 0.001


def test_flowers_deals_the_face_down_pile_uniformly():
    """One card per pile: the face-down pile holds any unseen card, as often as its copies."""
    game = registry.get("flowers")
    options = {"pile_size": 1}
    state = game.new_state(2, options, seed=9)
    seen = state.observation(0)
    left = Counter(DECK_COUNTS)
    left.subtract([c["cards"][0] for g in seen["gardens"] for c in g["cells"]]
                  + [top for top in seen["pile_tops"] if top])
    expected = {card: n / sum(left.values()) for card, n in left.items() if n}
    rng = random.Random(4)
    samples = 5000
    observed = Counter(game.determinize(seen, 0, rng, options=options).piles[2][-1]
                       for _ in range(samples))
    assert chi_square_p(observed, expected, samples) > 0.001


def test_mandala_deals_hand_and_secret_cups_uniformly_once_the_deck_is_out():
    """Late in a game (empty deck) the unseen cards are the opponent's hand and both secret
    cup pairs: few enough to count every shuffle."""
    game = registry.get("mandala")
    for seed in range(200):
        late = [s.clone() for s in random_positions("mandala", 2, seed)
                if not s.is_over() and s.deck_size() == 0
                and s.observation(1 - s.to_move())["players"][s.to_move()]["hand_size"] <= 3]
        if late:
            break
    state = late[0]
    seat = 1 - state.to_move()           # the seat that waits knows least
    seen = state.observation(seat)
    secret = [state.secret_cup(s) for s in (0, 1)]
    hand = state.hand(state.to_move())
    pool = []
    for counts in [hand] + secret:
        pool += [c for c in range(6) for _ in range(counts[c])]
    other = state.to_move()
    size = sum(hand)

    def split(order):
        return (tuple(sorted(order[:size])), tuple(sorted(order[size:size + 2])),
                tuple(sorted(order[size + 2:])))

    expected = fair_deal_distribution(pool, split)
    rng = random.Random(8)
    samples = max(2000, 60 * len(expected))
    observed = Counter()
    for _ in range(samples):
        sample = game.determinize(seen, seat, rng)
        held = [c for c in range(6) for _ in range(sample.hand(other)[c])]
        cups = [[c for c in range(6) for _ in range(sample.secret_cup(s)[c])] for s in (0, 1)]
        observed[split(held + cups[0] + cups[1])] += 1
    assert len(expected) > 5
    assert chi_square_p(observed, expected, samples) > 0.001
