"""Flowers-mandala properties over thousands of random games at 2, 3 and 4 players.

- cards and tiles are conserved at every ply;
- every listed move applies, and near-miss strings that are not listed are refused;
- games end (within the bound the game declares, engine max_plies) and their records
  replay through engine/records to the same result;
- greedy beats random clearly in every seat at every player count.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from refusals import accepted
from sizes import scaled

from arena.sdk.strategies import random_move
from arena.sdk.strategies.flowers_mandala import greedy
from engine import records, registry
from engine.core import CHANCE, IllegalMoveError
from engine.games.flowers_mandala import COLOURS

pytestmark = pytest.mark.slow   # many games: outside the quick selection (README)

GAME = registry.get("flowers-mandala")
PLAYER_COUNTS = (2, 3, 4)


def random_game(players, seed, options=None, visit=None):
    """Plays a random game to its end; returns (final state, moves). `visit(state)` sees every
    position before its move and the final one."""
    state = GAME.new_state(players, options, seed=seed)
    rng = random.Random(seed)
    moves = []
    longest = GAME.max_plies(players, state.options)
    while not state.is_over():
        assert len(moves) < longest, f"seed {seed}: no end within the declared {longest} plies"
        if visit:
            visit(state)
        move = (state.sample_chance(rng) if state.to_move() == CHANCE
                else rng.choice(state.legal_moves()))
        state.apply(move)
        moves.append(move)
    if visit:
        visit(state)
    return state, moves


# -- conservation -------------------------------------------------------------------------------

def card_counts(state) -> Counter:
    """Every card wherever it is: hands, mandalas and discard pile as everyone sees them, plus
    the deck (the one thing no seat sees, read from the state)."""
    counts = Counter(COLOURS[colour] for colour in state.deck)
    for seat in range(state.players):
        counts.update(state.observation(seat)["hand"])
    seen = state.observation(0)
    counts.update(seen["discard"])
    for mandala in seen["mandalas"]:
        for side in mandala["sides"]:
            counts.update(side["face_up"] + side["face_down"])
    return counts


def tile_counts(state) -> Counter:
    seen = state.observation(0)
    tiles = Counter(state.dark + state.light + seen["left_game"])
    for mandala in seen["mandalas"]:
        tiles.update(t for t in (mandala["dark_tile"], mandala["light_tile"]) if t)
    for tableau in seen["tableaus"]:
        tiles.update(tableau["singles"])
        tiles.update(t for flower in tableau["flowers"] for t in flower["tiles"])
    return tiles


@pytest.mark.parametrize("players", PLAYER_COUNTS)
@pytest.mark.parametrize("draw_rule", ["up-to-4", "two"])
def test_cards_and_tiles_are_conserved_at_every_ply(players, draw_rule):
    options = {"draw_rule": draw_rule}
    for seed in range(scaled(15)):
        start = GAME.new_state(players, options, seed=seed)
        cards, tiles = card_counts(start), tile_counts(start)
        assert cards == Counter({colour: 18 for colour in COLOURS})
        assert tiles == Counter(f"{colour}:{value}" for colour in COLOURS
                                for value in "1 1 2 2 3 x3".split())

        def conserved(state, cards=cards, tiles=tiles):   # called in this iteration
            assert card_counts(state) == cards
            assert tile_counts(state) == tiles

        random_game(players, seed, options, visit=conserved)


def test_hand_sizes_and_counts_agree_in_thousands_of_games():
    """The cheap half of conservation over many more games: sizes the observation reports."""
    for players in PLAYER_COUNTS:
        for seed in range(scaled(600)):
            def sizes(state):
                seen = state.observation(0)
                on_mandalas = sum(len(s["face_up"]) + len(s["face_down"])
                                  for m in seen["mandalas"] for s in m["sides"])
                total = (sum(seen["hand_sizes"]) + seen["deck_size"] + len(seen["discard"])
                         + on_mandalas)
                assert total == 108
                assert seen["dark_stack_size"] == seen["light_stack_size"], "refilled in pairs"
            state = GAME.new_state(players, seed=10_000 + seed)
            rng = random.Random(seed)
            ply = 0
            while not state.is_over():
                if ply % 7 == 0:
                    sizes(state)
                state.apply(state.sample_chance(rng) if state.to_move() == CHANCE
                            else rng.choice(state.legal_moves()))
                ply += 1
            sizes(state)
            assert sorted(state.ranks())[0] == 1


# -- listed moves apply, others are refused --------------------------------------------------

def near_misses(move: str) -> set[str]:
    """Strings one small step away from a legal move."""
    tokens = move.split(" ")
    misses = {move + " ", " " + move, move.upper(), move.replace(" ", "  ", 1), "", "pass",
              "tile dark", "tile light", "tile", "order 0 1 2", "order 0 1", "deck"}
    for index, token in enumerate(tokens):
        if token.isdigit():
            number = int(token)
            for other in (number - 1, number + 1, number + 10, 3, -1):
                misses.add(" ".join(tokens[:index] + [str(other)] + tokens[index + 1:]))
            misses.add(" ".join(tokens[:index] + ["0" + token] + tokens[index + 1:]))
        if token in COLOURS:
            for other in COLOURS + ("blue",):
                misses.add(" ".join(tokens[:index] + [other] + tokens[index + 1:]))
    misses.add(" ".join(tokens[:-1]))
    return misses


def test_every_listed_move_applies_and_near_misses_are_refused():
    checked = Counter()
    for players in PLAYER_COUNTS:
        for seed in range(scaled(6)):
            def check(state, seed=seed):   # called in this iteration
                if state.is_over():
                    with pytest.raises(IllegalMoveError):
                        state.apply("pass")
                    return
                legal = state.legal_moves()
                if state.to_move() == CHANCE and not legal:      # a reshuffle
                    outcome = state.sample_chance(random.Random(seed))
                    legal_set, candidates = {outcome}, near_misses(outcome)
                    cards = outcome.split(" ")[1:]
                    candidates |= {"deck " + " ".join(cards[1:]),
                                   "deck " + " ".join(cards + ["red"])}
                    state.clone().apply(outcome)
                    checked["deck"] += 1
                else:
                    assert legal == sorted(set(legal)), "sorted, each once"
                    legal_set, candidates = set(legal), set()
                    for move in legal:
                        state.clone().apply(move)
                        candidates |= near_misses(move)
                    checked[state.observation(0)["decision"]] += 1
                before = state.render(), state.observation(0)
                assert accepted(state, sorted(candidates - legal_set)) == []
                assert (state.render(), state.observation(0)) == before, "refusals change nothing"
            random_game(players, seed, visit=check)
    assert checked["play"] > scaled(500) and checked["tile"] > scaled(25)
    assert checked["deck"] > scaled(5) and checked["order"] > scaled(15)


# -- games end ------------------------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_games_end_and_their_records_replay(players):
    longest = 0
    for seed in range(scaled(200)):
        seats = []
        seed += 50_000
        state, moves = random_game(players, seed,
                                   {"draw_rule": "two"} if seed % 2 else None,
                                   visit=lambda state, seats=seats: seats.append(state.to_move()))
        longest = max(longest, len(moves))
        assert state.to_move() is None and state.legal_moves() == []
        assert len(state.scores()) == players
        record = records.build_record(
            game_id=GAME.id, options=state.options, players=[f"p{i}" for i in range(players)],
            seed=seed, setup=state.setup, moves=[list(entry) for entry in zip(seats, moves)],
            result=records.normal_result(state))
        assert records.verify(records.to_json(record)) == {
            "ok": True, "scores": state.scores(), "ranks": state.ranks(), "end": "normal"}
    print(f"flowers-mandala {players} players: longest random game {longest} plies")
    assert longest < GAME.max_plies(players, GAME.resolve_options({}, players))


# -- greedy beats random ---------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_greedy_beats_random_in_every_seat(players):
    games = 30
    for seat in range(players):
        share = 0.0
        for game_index in range(games):
            seed = 90_000 + 100 * seat + game_index
            state = GAME.new_state(players, seed=seed)
            rng = random.Random(seed)
            while not state.is_over():
                mover = state.to_move()
                if mover == CHANCE:
                    move = state.sample_chance(rng)
                else:
                    choose = greedy if mover == seat else random_move
                    move = choose(state.observation(mover), state.legal_moves(), rng)
                state.apply(move)
            ranks = state.ranks()
            if ranks[seat] == 1:
                share += 1 / ranks.count(1)
        assert share / games >= 1 / players + 0.3, \
            f"greedy in seat {seat} of {players} won only {share / games:.2f} of its games"
