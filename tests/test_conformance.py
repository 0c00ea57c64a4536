"""One conformance suite, run on every registered game at every player count it allows.

It checks the contract of engine/core.py and docs/notation.md that the arena relies on, the
same for every game: deals are deterministic and round-trip through JSON, legal-move lists
are sorted, unique and all playable, near-miss strings are refused, games end, every seat's
observation is JSON at every ply, ranks follow `ranks_from_keys` semantics, and the record
of any random game replays through engine/records to the same result. Game-specific rules
live in each game's own tests.
"""
from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

import pytest

from engine import records, registry
from hidden_info import VARIANTS
from refusals import accepted
from sizes import scaled
from engine.core import (CHANCE, GameNotOverError, IllegalMoveError, InvalidSetupError,
                         State)

GAMES_PER_GAME = 300        # random games per game for the cheap checks, split over counts
CAREFUL_GAMES = 8           # games per configuration for the costly per-ply checks
LEAK_GAMES = 40             # games per configuration for the hidden-information check


CONFIGURATIONS = [(game_id, players) for game_id, game in registry.games().items()
                  for players in range(game.min_players, game.max_players + 1)]
parametrize_configs = pytest.mark.parametrize("game_id,players", CONFIGURATIONS)
# The per-ply checks at three and four players (seconds each) run in the full suite; the
# quick selection runs them on every game at one and two players.
parametrize_configs_quick_at_two = pytest.mark.parametrize("game_id,players", [
    pytest.param(game_id, players, marks=[pytest.mark.slow] if players > 2 else [])
    for game_id, players in CONFIGURATIONS])


def _games_per_configuration(game_id: str) -> int:
    game = registry.get(game_id)
    return max(20, GAMES_PER_GAME // (game.max_players - game.min_players + 1))


def play_random(state: State, seed: int, visit=None) -> list[list]:
    """Plays `state` to its end with random legal moves; returns the record's move entries.

    `visit(state)` is called before every move and once at the end.
    """
    rng = random.Random(seed)
    moves: list[list] = []
    longest = state.game.max_plies(state.players, state.options)   # the game's own bound
    while not state.is_over():
        assert len(moves) < longest, f"no end within the declared {longest} plies"
        if visit:
            visit(state)
        mover = state.to_move()
        move = state.sample_chance(rng) if mover == CHANCE else rng.choice(state.legal_moves())
        state.apply(move)
        moves.append([mover, move])
    if visit:
        visit(state)
    return moves


# -- deals ------------------------------------------------------------------------------------

@parametrize_configs
def test_the_same_seed_deals_the_same_setup(game_id, players):
    game = registry.get(game_id)
    options = game.resolve_options({}, players)
    deals = [game.deal(players, options, random.Random(seed)) for seed in range(10)]
    assert deals == [game.deal(players, options, random.Random(seed)) for seed in range(10)]
    assert len({json.dumps(deal, sort_keys=True) for deal in deals}) > 1, "every seed deals alike"
    for seed in range(10):
        first, second = game.new_state(players, seed=seed), game.new_state(players, seed=seed)
        assert first.setup == second.setup
        assert first.to_move() == second.to_move()
        assert first.legal_moves() == second.legal_moves()


@parametrize_configs
def test_a_setup_round_trips_through_json_and_restarts_the_same_game(game_id, players):
    game = registry.get(game_id)
    options = game.resolve_options({}, players)
    for seed in range(20):
        deal = game.deal(players, options, random.Random(seed))
        from_json = json.loads(json.dumps(deal))
        assert from_json == deal, "the deal is not plain JSON"
        state = game.start(players, options, from_json)
        assert state.setup == deal
        again = game.start(players, options, json.loads(json.dumps(state.setup)))
        assert again.to_move() == state.to_move()
        assert again.legal_moves() == state.legal_moves()
        assert [again.observation(seat) for seat in range(players)] == \
            [state.observation(seat) for seat in range(players)]


@pytest.mark.slow
@parametrize_configs
def test_a_seeded_match_is_the_start_of_that_seeds_deal(game_id, players):
    # new_state(seed=...) goes through start_dealt, which a game may speed up by not checking
    # the deal it has just made: the match must still be start(deal(...)), ply for ply.
    game = registry.get(game_id)
    options = game.resolve_options({}, players)
    for seed in range(10):
        dealt = game.new_state(players, seed=seed)
        started = game.start(players, options, game.deal(players, options, random.Random(seed)))
        assert dealt.setup == started.setup
        seen: list[list] = []
        replayed: list[list] = []
        for state, positions in ((dealt, seen), (started, replayed)):
            play_random(state, seed, lambda state, positions=positions: positions.append(
                [state.legal_moves()] + [state.observation(s) for s in range(players)]))
        assert seen == replayed
        assert dealt.scores() == started.scores()


def _tamperings(setup: dict):
    """(what, tampered setup) pairs, each surely not a legal deal of any game."""
    for key in setup:
        yield f"without {key!r}", {k: v for k, v in setup.items() if k != key}
        yield f"{key!r} not a list", {**setup, key: 7}
    path = _first_list_of_strings(setup)
    if path is not None:
        tampered = json.loads(json.dumps(setup))
        _at(tampered, path).append("no-such-card")
        yield f"an unknown card appended at {path}", tampered


def _first_list_of_strings(value, path=()):
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        if value and all(isinstance(item, str) for item in value):
            return path
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _first_list_of_strings(item, path + (key,))
        if found is not None:
            return found
    return None


def _at(value, path):
    for key in path:
        value = value[key]
    return value


@parametrize_configs
def test_a_tampered_setup_is_refused_as_not_a_legal_deal(game_id, players):
    game = registry.get(game_id)
    options = game.resolve_options({}, players)
    setup = game.new_state(players, seed=1).setup
    for what, tampered in _tamperings(setup):
        with pytest.raises(InvalidSetupError):
            game.start(players, options, tampered)
            pytest.fail(f"a setup {what} was accepted")


# -- moves ------------------------------------------------------------------------------------

@parametrize_configs
def test_legal_moves_are_sorted_unique_and_every_one_applies(game_id, players):
    game = registry.get(game_id)

    def check(state: State) -> None:
        legal = state.legal_moves()
        if state.is_over():
            assert legal == []
            return
        if state.to_move() == CHANCE:
            return   # a chance move is drawn with sample_chance, not picked from a list
        assert legal, "a seat to move must have a legal move (pass where nothing else is)"
        assert all(isinstance(move, str) for move in legal)
        assert legal == sorted(set(legal)), "legal moves must be unique, in code-point order"
        before = state.observation(state.to_move())
        for move in legal:
            state.clone().apply(move)
        assert state.legal_moves() == legal and state.observation(state.to_move()) == before, \
            "applying moves to a clone changed the original"

    for seed in range(CAREFUL_GAMES):
        play_random(game.new_state(players, seed=seed), seed, check)


def near_misses(move: str) -> set[str]:
    """Strings one small slip away from `move`: case, spacing, a token changed or missing."""
    tokens = move.split(" ")
    slips = {move.upper(), " " + move, move + " ", move.replace(" ", "  ", 1), move + " x",
             " ".join(tokens[:-1]), move + "\n", ""}
    for index, token in enumerate(tokens):
        if token.lstrip("-").isdigit():
            number = int(token)
            variants = [str(number + 1), str(number - 1), "0" + token, "+" + token,
                        "-0" if number == 0 else str(-number), token + ".0"]
        else:
            variants = [token.capitalize(), token + "s", token[:-1]]
        slips.update(" ".join(tokens[:index] + [variant] + tokens[index + 1:])
                     for variant in variants)
    return slips


@parametrize_configs_quick_at_two
def test_near_miss_strings_are_refused_and_change_nothing(game_id, players):
    game = registry.get(game_id)
    rng = random.Random(99)

    def check(state: State) -> None:
        if state.is_over():
            for slip in ("pass", "x", ""):
                with pytest.raises(IllegalMoveError):
                    state.apply(slip)
            return
        mover = state.to_move()
        legal = set(state.legal_moves()) if mover != CHANCE else set()
        if mover == CHANCE:
            sampled = [state.clone().sample_chance(random.Random(rng.random()))]
        else:
            sampled = rng.sample(sorted(legal), min(3, len(legal)))
        before = (mover, state.legal_moves(), state.observation(0))
        for move in sampled:
            # (the same chance outcome in another order may well be legal)
            slips = [slip for slip in near_misses(move) - legal
                     if not (mover == CHANCE and slip.split(" ")[:1] == move.split(" ")[:1]
                             and sorted(slip.split(" ")) == sorted(move.split(" ")))]
            assert accepted(state, sorted(slips)) == [], f"slips of {move!r} were accepted"
        assert (state.to_move(), state.legal_moves(), state.observation(0)) == before, \
            "a refused move changed the state"

    for seed in range(CAREFUL_GAMES):
        play_random(game.new_state(players, seed=seed), seed, check)


# -- whole games ------------------------------------------------------------------------------

@parametrize_configs
def test_random_games_end_and_their_records_replay_to_the_same_result(game_id, players):
    game = registry.get(game_id)
    for seed in range(_games_per_configuration(game_id)):
        state = game.new_state(players, seed=seed)
        setup = json.loads(json.dumps(state.setup))
        moves = play_random(state, seed)
        assert state.is_over() and state.to_move() is None
        assert isinstance(state.render(), str) and isinstance(state.render_result(), str)
        assert state.setup == setup, "playing changed the state's setup"
        if not game.has_chance:
            assert all(seat != CHANCE for seat, _ in moves)
        record = records.build_record(
            game_id=game_id, options=state.options, players=[f"p{i}" for i in range(players)],
            seed=seed, setup=state.setup, moves=moves, result=records.normal_result(state))
        assert record["options"] == {}
        verdict = records.verify(records.to_json(record))
        assert verdict == {"ok": True, "scores": state.scores(), "ranks": state.ranks(),
                           "end": "normal"}, f"seed {seed}"


@parametrize_configs
def test_the_same_seed_plays_the_same_game(game_id, players):
    game = registry.get(game_id)
    for seed in range(3):
        first, second = game.new_state(players, seed=seed), game.new_state(players, seed=seed)
        assert play_random(first, seed) == play_random(second, seed)
        assert (first.scores(), first.ranks()) == (second.scores(), second.ranks())


_DIGEST_SCRIPT = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[3])
from test_conformance import play_random
from engine import registry
game, players = registry.get(sys.argv[1]), int(sys.argv[2])
games = []
for seed in range(4):
    state = game.new_state(players, seed=seed)
    games.append([state.setup, play_random(state, seed), state.scores(), state.ranks()])
print(hashlib.sha256(json.dumps(games).encode()).hexdigest())
"""


@parametrize_configs
def test_the_same_seed_plays_the_same_game_whatever_the_hash_seed(game_id, players):
    # Iterating a set of strings follows PYTHONHASHSEED, which differs from process to
    # process: a game whose deal or move order leaned on it would not replay elsewhere.
    digests = set()
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", _DIGEST_SCRIPT, game_id, str(players),
             str(pathlib.Path(__file__).parent)],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1


@parametrize_configs_quick_at_two
def test_every_seat_sees_a_json_observation_at_every_ply(game_id, players):
    game = registry.get(game_id)

    def check(state: State) -> None:
        for seat in range(players):
            observation = state.observation(seat)
            assert isinstance(observation, dict)
            assert all(isinstance(key, str) for key in observation)
            json.dumps(observation, allow_nan=False)

    for seed in range(CAREFUL_GAMES * 3):
        play_random(game.new_state(players, seed=seed), seed, check)


def replay_states(game, players: int, setup: dict, moves: list[str]) -> list[State]:
    """The states along `moves` from `setup`, the first and the last included."""
    state = game.new_state(players, setup=setup)
    states = [state.clone()]
    for move in moves:
        state.apply(move)
        states.append(state.clone())
    return states


@parametrize_configs_quick_at_two
def test_no_seat_sees_what_is_hidden_from_it(game_id, players):
    """Two games that differ only in what a seat cannot see (the game's declaration in
    tests/hidden_info.py) look the same to that seat at every ply."""
    assert game_id in VARIANTS, f"{game_id} declares no hidden information in hidden_info.py"
    game, variant_of = registry.get(game_id), VARIANTS[game_id]
    rng = random.Random(players)
    compared = differed = 0
    for seed in range(scaled(LEAK_GAMES)):
        state = game.new_state(players, seed=seed)
        moves = [move for _, move in play_random(state.clone(), seed)]
        original = replay_states(game, players, state.setup, moves)
        for observer in range(players):
            # Short prefixes half the time: more of the deal is still hidden early on.
            plies = rng.randrange(0, rng.choice((len(moves), 30)) + 1)
            setup, variant_moves = variant_of(original[:plies + 1], moves[:plies], observer,
                                              rng)
            variant = replay_states(game, players, setup, variant_moves)
            compared += 1
            differed += (setup, variant_moves) != (state.setup, moves[:plies])
            for ply, (seen, twin) in enumerate(zip(original, variant)):
                assert seen.observation(observer) == twin.observation(observer), \
                    f"seed {seed}: seat {observer} sees a difference at ply {ply}"
    assert differed > compared // 2, "the variants hardly ever hid anything: the test tests nothing"


@parametrize_configs
def test_scores_and_ranks_wait_for_the_end_and_ranks_follow_ranks_from_keys(game_id, players):
    game = registry.get(game_id)
    state = game.new_state(players, seed=0)
    with pytest.raises(GameNotOverError):
        state.scores()
    with pytest.raises(GameNotOverError):
        state.ranks()
    for seed in range(_games_per_configuration(game_id) // 2):
        state = game.new_state(players, seed=seed)
        play_random(state, seed)
        scores, ranks = state.scores(), state.ranks()
        assert len(scores) == len(ranks) == players
        for seat in range(players):
            # 1 + the number of seats strictly better: tied seats share a rank, the next skips.
            assert ranks[seat] == 1 + sum(1 for other in ranks if other < ranks[seat])
            for other in range(players):
                if scores[seat] > scores[other]:
                    assert ranks[seat] < ranks[other], "a higher score must rank better"


# One non-default value of every rule option of every game.
NON_DEFAULT_OPTIONS = {
    "mandala": [],
    "flowers-mandala": [{"draw_rule": "two"}, {"hand_size": 5}, {"cards_per_colour": 12},
                        {"tile_values": "1 2 2 3 3 x3"}],
    "flowers": [{"pile_size": 12}],
}


def test_every_rule_option_has_a_non_default_example_here():
    for game_id, game in registry.games().items():
        examples = NON_DEFAULT_OPTIONS[game_id]
        assert sorted(key for example in examples for key in example) == sorted(
            option.key for option in game.options)
        for example in examples:
            for key, value in example.items():
                assert value != next(opt.default for opt in game.options if opt.key == key)


@pytest.mark.parametrize("game_id,players,options", [
    (game_id, players, options) for game_id, players in CONFIGURATIONS
    for options in NON_DEFAULT_OPTIONS[game_id]])
def test_records_of_games_with_a_non_default_option_replay(game_id, players, options):
    game = registry.get(game_id)
    for seed in range(5):
        state = game.new_state(players, options, seed=seed)
        moves = play_random(state, seed)
        record = records.build_record(
            game_id=game_id, options=state.options, players=["a"] * players, seed=seed,
            setup=state.setup, moves=moves, result=records.normal_result(state))
        assert record["options"] == options
        assert records.verify(json.dumps(record))["ok"] is True


def test_every_registered_game_loads():
    assert set(registry.games()) == set(registry.ids())
