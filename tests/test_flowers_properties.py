"""`flowers` properties over hundreds of random games at 1 to 4 players.

Cards are conserved every ply, every listed move applies, near-miss moves are refused
without changing anything, games end and their records replay to the same result, and greedy
beats random (hidden cards are checked for every game in test_conformance.py). The longest
game seen is printed with `pytest -s`.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from refusals import accepted
from sizes import scaled

from arena.sdk.strategies import get as strategy
from engine import records, registry

pytestmark = pytest.mark.slow   # many games: outside the quick selection (README)

GAME = registry.get("flowers")


def random_game(players: int, seed: int, options=None):
    """Yields (state, move) for every ply of a random game, then the final state, None."""
    state = GAME.new_state(players, options, seed=seed)
    rng = random.Random(seed)
    while not state.is_over():
        move = rng.choice(state.legal_moves())
        yield state, move
        state.apply(move)
    yield state, None


def cards_in_play(state) -> Counter:
    observation = state.observation(state.to_move() if not state.is_over() else 0)
    held = [observation["drawn_card"]] if observation["drawn_card"] else []
    gardens = [card for garden in observation["gardens"] for cell in garden["cells"]
               for card in cell["cards"]]
    # piles are secret below their tops, so count them through the setup: what is left of
    # pile P is its last pile_sizes[P] cards
    piles = [card for pile, size in zip(state.setup["piles"], observation["pile_sizes"])
             for card in pile[len(pile) - size:]]
    return Counter(gardens + held + piles)


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_cards_are_conserved_games_end_and_records_replay(players):
    longest = 0
    for seed in range(scaled(150)):
        setup = GAME.new_state(players, seed=seed).setup
        dealt = Counter(setup["gardens"] + [card for pile in setup["piles"] for card in pile])
        plies = 0
        moves = []
        for state, move in random_game(players, seed):
            assert cards_in_play(state) == dealt
            plies += 1
            if move is not None:
                moves.append([state.to_move(), move])
            assert plies <= 2 * sum(len(pile) for pile in setup["piles"]) + 1
        longest = max(longest, plies - 1)
        assert state.is_over() and len(state.scores()) == players
        # the game ended on the turn that emptied a pile, not before, not after
        assert min(state.observation(0)["pile_sizes"]) == 0
        record = records.build_record(
            game_id=GAME.id, options=state.options, players=[f"p{i}" for i in range(players)],
            seed=seed, setup=setup, moves=moves, result=records.normal_result(state))
        assert records.verify(records.to_json(record)) == {
            "ok": True, "scores": state.scores(), "ranks": state.ranks(), "end": "normal"}
    print(f"\nflowers {players} players: longest of 300 random games {longest} plies")


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_legal_moves_are_sorted_unique_and_every_one_applies(players):
    for seed in range(scaled(12)):
        for state, _move in random_game(players, 1000 + seed):
            moves = state.legal_moves()
            assert moves == sorted(set(moves))
            for other in moves:
                state.clone().apply(other)


def near_misses(state, rng: random.Random) -> list[str]:
    """Strings close to legal moves that are not listed."""
    moves = state.legal_moves()
    tries = ["", "pass", "draw", "draw 3", "draw -1", "draw 00", "draw 1 ", " draw 1",
             "DRAW 0", "place", "place 0", "place 0 0 0", "place -0 0", "place 00 0",
             "place +1 0", "place 0  0", "place a b"]
    for move in rng.sample(moves, min(3, len(moves))):
        verb, *numbers = move.split(" ")
        if verb == "place":
            x, y = map(int, numbers)
            tries += [f"place {x + dx} {y + dy}" for dx in (-2, -1, 1, 2) for dy in (-2, 2)]
            tries += [f"place {x} {y + 100}", f"draw {x % 3}"]
        else:
            tries += [f"place {rng.randint(-3, 3)} {rng.randint(-3, 3)}"]
    return [move for move in tries if move not in moves]


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_moves_not_listed_are_refused_and_change_nothing(players):
    rng = random.Random(players)
    for seed in range(scaled(30)):
        for state, _move in random_game(players, 2000 + seed):
            if rng.random() > 0.2:
                continue
            before = [state.observation(seat) for seat in range(players)]
            assert accepted(state, near_misses(state, rng)) == []
            assert [state.observation(seat) for seat in range(players)] == before


def _play(bots, players: int, seed: int) -> list[int]:
    state = GAME.new_state(players, seed=seed)
    rng = random.Random(seed)
    while not state.is_over():
        seat = state.to_move()
        state.apply(bots[seat](state.observation(seat), state.legal_moves(), rng))
    return state.scores()


def test_greedy_scores_higher_than_random_in_a_clear_majority_of_two_player_games():
    greedy, random_move = strategy("greedy", "flowers"), strategy("random", "flowers")
    wins = games = 0
    for seed in range(25):
        for greedy_seat in (0, 1):
            bots = [random_move, random_move]
            bots[greedy_seat] = greedy
            scores = _play(bots, 2, seed)
            wins += scores[greedy_seat] > scores[1 - greedy_seat]
            games += 1
    assert wins >= 0.9 * games


def test_greedy_scores_clearly_more_than_random_alone():
    greedy, random_move = strategy("greedy", "flowers"), strategy("random", "flowers")
    seeds = range(15)
    greedy_mean = sum(_play([greedy], 1, seed)[0] for seed in seeds) / len(seeds)
    random_mean = sum(_play([random_move], 1, seed)[0] for seed in seeds) / len(seeds)
    assert greedy_mean > random_mean + 40
    assert greedy_mean > 0


def test_greedy_answers_with_a_listed_move_at_every_decision_with_four_players():
    greedy = strategy("greedy", "flowers")
    for seed in range(3):
        state = GAME.new_state(4, seed=seed)
        rng = random.Random(seed)
        while not state.is_over():
            seat = state.to_move()
            move = greedy(state.observation(seat), state.legal_moves(), rng)
            assert move in state.legal_moves()
            state.apply(move)
