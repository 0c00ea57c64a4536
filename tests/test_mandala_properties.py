"""Mandala properties over thousands of random games (seeded, so every run plays the same).

Each property is checked from the outside: observations, legal-move lists and the setup, so
the checks do not depend on how the engine stores a position.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from refusals import accepted
from sizes import scaled

from arena.sdk.strategies import mandala as mandala_strategy
from arena.sdk.strategies import random_move
from engine import records, registry
from engine.games.mandala import COLOURS

pytestmark = pytest.mark.slow   # many games: outside the quick selection (README)

GAME = registry.get("mandala")
FULL_DECK = Counter({colour: 18 for colour in COLOURS})
LONGEST_POSSIBLE = GAME.max_plies(2, {})


def random_game(seed: int):
    """Plays seed's deal with uniform random moves; yields (state, move) before each move,
    then (state, None) at the end."""
    state = GAME.new_state(2, seed=seed)
    rng = random.Random(seed)
    for _ in range(LONGEST_POSSIBLE):
        if state.is_over():
            yield state, None
            return
        move = rng.choice(state.legal_moves())
        yield state, move
        state.apply(move)
    pytest.fail(f"seed {seed}: no end after {LONGEST_POSSIBLE} plies")


def census(state, seen: list[dict]) -> Counter:
    """Every card, wherever it is: both hands, both mandalas, rivers, face-up cup cards, the
    discard pile, plus what the setup says about the secret cup cards and the undrawn deck.
    `seen` holds both seats' observations."""
    cards = seen[0]["hand"] + seen[1]["hand"] + seen[0]["discard"]
    for area in seen[0]["mandalas"]:
        cards += area["mountain"]
        for field in area["fields"]:
            cards += field["cards"]
    for player in seen[0]["players"]:
        cards += player["river"] + player["cup_taken"]
    for cup in state.setup["cups"]:
        cards += cup
    deck = state.setup["deck"]
    cards += deck[len(deck) - seen[0]["deck_size"]:]
    return Counter(cards)


def hand_size_after(move: str, before: int, deck_size: int) -> int:
    """The mover's hand size after a turn action, by the draw rules."""
    kind, *rest = move.split(" ")
    if kind == "discard":
        n = int(rest[1])
        return before - n + min(n, deck_size)
    if kind == "field":
        return before - int(rest[2])
    if kind == "mountain":
        return before - 1 + min(3, 8 - (before - 1), deck_size)
    return before


def test_every_ply_conserves_the_108_cards_keeps_the_rule_of_colour_and_the_hand_limit():
    longest = 0
    for seed in range(scaled(1000)):
        plies = 0
        previous = None
        for state, move in random_game(seed):
            seen = state.observation(0)
            assert census(state, [seen, state.observation(1)]) == FULL_DECK, \
                f"seed {seed}, ply {plies}: cards appeared or vanished"
            for area in seen["mandalas"]:
                areas = [set(area["mountain"])] + [set(f["cards"]) for f in area["fields"]]
                assert sum(len(colours) for colours in areas) == len(set().union(*areas)), \
                    f"seed {seed}, ply {plies}: a colour stands in two areas of a mandala"
            sizes = [player["hand_size"] for player in seen["players"]]
            assert max(sizes) <= 8
            if previous is not None and previous[0] == "turn":
                phase, prev_move, mover, size, deck = previous
                assert sizes[mover] == hand_size_after(prev_move, size, deck), \
                    f"seed {seed}: {prev_move!r} left a hand of {sizes[mover]}"
            if move is not None:
                mover = state.to_move()
                previous = (seen["phase"], move, mover, sizes[mover], seen["deck_size"])
                plies += 1
        assert state.observation(0)["end"] in ("river", "refill", "passes")
        longest = max(longest, plies)
    print(f"longest random game: {longest} plies")


def legal_by_the_rules(seen: dict) -> list[str]:
    """The legal moves as the rules file defines them, from the mover's observation."""
    if seen["phase"] == "take":
        mountain = seen["mandalas"][seen["destroying"]]["mountain"]
        return sorted(f"take {colour}" for colour in set(mountain))
    hand = Counter(seen["hand"])
    if not hand:
        return ["pass"]
    me = seen["seat"]
    moves = []
    for colour, count in hand.items():
        moves += [f"discard {colour} {n}" for n in range(1, count + 1)]
        for m, area in enumerate(seen["mandalas"]):
            mine, theirs = area["fields"][me]["cards"], area["fields"][1 - me]["cards"]
            if colour not in mine and colour not in theirs:
                moves.append(f"mountain {m} {colour}")
            if colour not in area["mountain"] and colour not in theirs:
                keep_one = len(seen["hand"]) - 1
                moves += [f"field {m} {colour} {n}" for n in range(1, min(count, keep_one) + 1)]
    return sorted(moves)


def test_the_legal_moves_are_exactly_what_the_rules_allow_sorted_and_each_once_and_all_apply():
    for seed in range(scaled(500)):
        for state, move in random_game(seed):
            legal = state.legal_moves()
            if move is None:
                assert legal == []
                continue
            seen = state.observation(state.to_move())
            assert seen["to_move"] == state.to_move()
            assert legal == legal_by_the_rules(seen), f"seed {seed}"
            for listed in legal:
                state.clone().apply(listed)


def test_the_record_of_every_random_game_replays_to_the_same_result():
    for seed in range(scaled(1000)):
        state = GAME.new_state(2, seed=seed)
        rng = random.Random(seed)
        moves = []
        while not state.is_over():
            moves.append((state.to_move(), rng.choice(state.legal_moves())))
            state.apply(moves[-1][1])
        record = records.build_record(
            game_id="mandala", options={}, players=["a", "b"], seed=seed, setup=state.setup,
            moves=moves, result=records.normal_result(state))
        assert records.verify(records.to_json(record)) == {
            "ok": True, "scores": state.scores(), "ranks": state.ranks(), "end": "normal"}, \
            f"seed {seed}"


EVERY_MOVE = sorted(
    ["pass"] + [f"take {c}" for c in COLOURS]
    + [f"discard {c} {n}" for c in COLOURS for n in range(1, 10)]
    + [f"mountain {m} {c}" for m in (0, 1) for c in COLOURS]
    + [f"field {m} {c} {n}" for m in (0, 1) for c in COLOURS for n in range(1, 10)])
"""Every string in mandala notation (counts up to 9, beyond any hand)."""


def near_misses(move: str) -> set[str]:
    """Strings close to a legal move that are not in the notation at all."""
    words = move.split(" ")
    slips = {move.upper(), move + " ", " " + move, move.replace(" ", "  "), move + " 1",
             " ".join(words[:-1]), move.replace(" ", ",")}
    for i, word in enumerate(words):
        for other in ("0" + word, "-1", "2", "10", "blue", "Red", "", "x"):
            slips.add(" ".join(words[:i] + [other] + words[i + 1:]))
    return slips - set(EVERY_MOVE)


def test_every_string_not_listed_is_refused_without_effect():
    # (That every listed move applies is checked over 500 games above.)
    for seed in range(scaled(40)):
        rng = random.Random(seed)
        for state, _move in random_game(seed):
            legal = state.legal_moves()
            before = (state.to_move(), legal, state.observation(0), state.observation(1))
            unlisted = [m for m in EVERY_MOVE if m not in legal]
            if legal:
                unlisted += sorted(near_misses(rng.choice(legal)))
            assert accepted(state, unlisted) == [], f"seed {seed}: listed as illegal"
            assert (state.to_move(), state.legal_moves(), state.observation(0),
                    state.observation(1)) == before, f"seed {seed}: a refused move changed it"


def test_greedy_beats_random_clearly_in_both_seats():
    wins = games = 0
    for seed in range(150):
        for greedy_seat in (0, 1):
            state = GAME.new_state(2, seed=seed)
            rng = random.Random(seed)
            while not state.is_over():
                seat = state.to_move()
                choose = mandala_strategy.greedy if seat == greedy_seat else random_move
                state.apply(choose(state.observation(seat), state.legal_moves(), rng))
            ranks = state.ranks()
            wins += ranks[greedy_seat] < ranks[1 - greedy_seat]
            games += 1
    assert wins / games >= 0.8, f"greedy won only {wins} of {games} games against random"
