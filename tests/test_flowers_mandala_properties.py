"""Flowers-mandala properties over thousands of random games at 2, 3 and 4 players.

- cards and tiles are conserved at every ply;
- every listed move applies, and near-miss strings that are not listed are refused;
- games end (the longest game seen stays far below a generous bound) and their records
  replay through engine/records to the same result;
- no observation leak: two games that differ only in what a seat may not see (other hands,
  deck order, tile-stack order) give that seat identical observations all along;
- greedy beats random clearly in every seat at every player count.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from sizes import scaled

from arena.sdk.strategies import random_move
from arena.sdk.strategies.flowers_mandala import greedy
from engine import records, registry
from engine.core import CHANCE, IllegalMoveError
from engine.games.flowers_mandala import COLOURS

pytestmark = pytest.mark.slow   # many games: outside the quick selection (README)

GAME = registry.get("flowers-mandala")
PLAYER_COUNTS = (2, 3, 4)
LONGEST_ALLOWED = 2_000     # plies; random games last about 100 to 250


def random_game(players, seed, options=None, visit=None):
    """Plays a random game to its end; returns (final state, moves). `visit(state)` sees every
    position before its move and the final one."""
    state = GAME.new_state(players, options, seed=seed)
    rng = random.Random(seed)
    moves = []
    while not state.is_over():
        assert len(moves) < LONGEST_ALLOWED, f"seed {seed}: no end after {LONGEST_ALLOWED} plies"
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
    for seed in range(scaled(30)):
        start = GAME.new_state(players, options, seed=seed)
        cards, tiles = card_counts(start), tile_counts(start)
        assert cards == Counter({colour: 18 for colour in COLOURS})
        assert tiles == Counter(f"{colour}:{value}" for colour in COLOURS
                                for value in "1 1 2 2 3 x3".split())

        def conserved(state):
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
        for seed in range(scaled(12)):
            def check(state):
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
                for miss in candidates - legal_set:
                    with pytest.raises(IllegalMoveError):
                        state.apply(miss)
                assert (state.render(), state.observation(0)) == before, "refusals change nothing"
            random_game(players, seed, visit=check)
    assert checked["play"] > scaled(1000) and checked["tile"] > scaled(50)
    assert checked["deck"] > scaled(10) and checked["order"] > scaled(30)


# -- games end ------------------------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_games_end_and_their_records_replay(players):
    longest = 0
    for seed in range(scaled(400)):
        seats = []
        seed += 50_000
        state, moves = random_game(players, seed,
                                   {"draw_rule": "two"} if seed % 2 else None,
                                   visit=lambda state: seats.append(state.to_move()))
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
    assert longest < LONGEST_ALLOWED


# -- no observation leak ----------------------------------------------------------------------

def _replay(players, setup, moves):
    """The states along the replay of `moves` from `setup` (first and last included)."""
    state = GAME.new_state(players, setup=setup)
    states = [state.clone()]
    for move in moves:
        state.apply(move)
        states.append(state.clone())
    return states


def _spare_colours(states, moves, seat):
    """Colours `seat` held at least one card of beyond its needs at every ply of `moves`:
    with one card fewer of such a colour all its moves stay legal."""
    spare = set(COLOURS)
    for state, move in zip(states, moves + [None]):
        hand = state.hands[seat]
        needed = Counter()
        if move and move.startswith("play ") and state.to_move() == seat:
            needed[move.split(" ")[2]] = int(move.split(" ")[3])
        spare = {c for c in spare if hand[COLOURS.index(c)] - needed[c] >= 1}
    return spare


def _hidden_variant(setup, moves, states, observer, rng):
    """A setup and moves for the first len(moves) plies of the game in `states` that differ
    only in what `observer` cannot see then: the order of the undrawn deck and of the
    unrevealed tiles, and one card of another seat's starting hand swapped with an undrawn
    deck card or a card of a third seat's starting hand (of colours those seats always had
    a card to spare of, so every move stays legal)."""
    setup = {key: [list(item) if isinstance(item, list) else item for item in value]
             for key, value in setup.items()}
    moves = list(moves)
    now = states[len(moves)]
    reshuffles = [i for i, move in enumerate(moves) if move.startswith("deck ")]
    # The undrawn cards are the tail of the last reshuffle, or of the setup's deck.
    deck = moves[reshuffles[-1]].split(" ")[1:] if reshuffles else setup["deck"]
    deck_cut = len(deck) - len(now.deck)
    tail = deck[deck_cut:]
    rng.shuffle(tail)
    deck[deck_cut:] = tail
    for shade in ("dark", "light"):
        cut = len(setup[shade]) - len(getattr(now, shade))
        tail = setup[shade][cut:]
        rng.shuffle(tail)
        setup[shade][cut:] = tail
    others = [seat for seat in range(len(setup["hands"])) if seat != observer]
    seat = rng.choice(others)
    hand = setup["hands"][seat]
    spare = _spare_colours(states, moves, seat)
    free = [i for i, card in enumerate(hand) if card in spare]
    # Cards that may take its place: undrawn cards of the dealt deck (a reshuffled deck is
    # the discard pile: its cards are fixed), and spare cards of a third seat's hand.
    partners = [] if reshuffles else [(deck, i) for i in range(deck_cut, len(deck))]
    for other in others:
        if other != seat:
            spare = _spare_colours(states, moves, other)
            partners += [(setup["hands"][other], i)
                         for i, card in enumerate(setup["hands"][other]) if card in spare]
    if free:
        mine = rng.choice(free)
        partners = [(pile, i) for pile, i in partners if pile[i] != hand[mine]]
    if free and partners:
        pile, theirs = rng.choice(partners)
        hand[mine], pile[theirs] = pile[theirs], hand[mine]
        for other_hand in setup["hands"]:
            other_hand.sort()
    if reshuffles:
        moves[reshuffles[-1]] = " ".join(["deck"] + deck)
    return setup, moves


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_no_observation_leak(players):
    rng = random.Random(players)
    compared = differed = 0
    for seed in range(scaled(25)):
        final, moves = random_game(players, 70_000 + seed)
        original = _replay(players, final.setup, moves)
        for observer in range(players):
            for _ in range(3):
                # Short prefixes half the time: more hand cards were never short, so swappable.
                plies = rng.randrange(1, rng.choice((len(moves), 30)) + 1)
                setup, variant_moves = _hidden_variant(final.setup, moves[:plies],
                                                       original, observer, rng)
                variant = _replay(players, setup, variant_moves)
                compared += 1
                for ply, (a, b) in enumerate(zip(original, variant)):
                    assert a.observation(observer) == b.observation(observer), \
                        f"seed {seed}, seat {observer} sees a difference at ply {ply}"
                differed += any(a.observation(seat) != b.observation(seat)
                                for a, b in zip(original, variant)
                                for seat in range(players) if seat != observer)
    print(f"{players} players: {compared} variants, {differed} visibly different to others")
    assert differed > compared // 4, "the variants really hide something from the others"


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
