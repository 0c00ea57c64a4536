"""Mandala properties over thousands of random games (seeded, so every run plays the same).

Each property is checked from the outside: observations, legal-move lists and the setup, so
the checks do not depend on how the engine stores a position.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from sizes import scaled

from arena.sdk.strategies import mandala as mandala_strategy
from arena.sdk.strategies import random_move
from engine import records, registry
from engine.core import IllegalMoveError
from engine.games.mandala import COLOURS

pytestmark = pytest.mark.slow   # many games: outside the quick selection (README)

GAME = registry.get("mandala")
FULL_DECK = Counter({colour: 18 for colour in COLOURS})
LONGEST_POSSIBLE = 2000     # far above any real game (the deck and hands bound its length)


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
    for seed in range(scaled(2000)):
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
    for seed in range(scaled(1000)):
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
    for seed in range(scaled(2000)):
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
    # (That every listed move applies is checked over 1000 games above.)
    for seed in range(scaled(80)):
        rng = random.Random(seed)
        for state, move in random_game(seed):
            legal = state.legal_moves()
            before = (state.to_move(), legal, state.observation(0), state.observation(1))
            unlisted = [m for m in EVERY_MOVE if m not in legal]
            if legal:
                unlisted += sorted(near_misses(rng.choice(legal)))
            for slip in unlisted:
                with pytest.raises(IllegalMoveError):
                    state.apply(slip)
            assert (state.to_move(), state.legal_moves(), state.observation(0),
                    state.observation(1)) == before, f"seed {seed}: a refused move changed it"


def hidden_from(seat: int, setup: dict, moves: list[tuple[int, str, int]],
                final_hand: list[str]) -> list[tuple]:
    """Places in the setup whose card `seat` never sees in this game: the secret cup cards,
    the deck cards never drawn, and the opponent's cards that stayed in hand to the end.

    `moves` holds (mover, move, deck cards the move used, whether they went to the mover's
    hand); a take's deck cards refill a mountain, face up.
    """
    other = 1 - seat
    places = [("cups", s, k) for s in (0, 1) for k in range(2)]
    # The opponent's cards, in the order received: the dealt hand, then each draw.
    received = [("hands", other, k) for k in range(6)]
    top = 0
    for mover, move, drawn, to_hand in moves:
        if mover == other and to_hand:
            received += [("deck", top + k) for k in range(drawn)]
        top += drawn
    places += [("deck", k) for k in range(top, len(setup["deck"]))]
    # Of each colour, the cards kept to the end are (say) the last ones received: any choice
    # works, as cards of one colour are alike.
    kept = Counter(final_hand)
    for place in reversed(received):
        colour = card_at(setup, place)
        if kept[colour]:
            kept[colour] -= 1
            places.append(place)
    return places


def card_at(setup: dict, place: tuple) -> str:
    if place[0] == "deck":
        return setup["deck"][place[1]]
    return setup[place[0]][place[1]][place[2]]


def test_no_leak_a_seat_sees_the_same_whatever_the_cards_hidden_from_it():
    differing = 0
    for seed in range(scaled(400)):
        for seat in (0, 1):
            state = GAME.new_state(2, seed=seed)
            rng = random.Random(seed)
            views, moves = [state.observation(seat)], []
            while not state.is_over():
                mover, deck = state.to_move(), state.observation(0)["deck_size"]
                move = rng.choice(state.legal_moves())
                state.apply(move)
                drawn = deck - state.observation(0)["deck_size"]
                moves.append((mover, move, drawn, not move.startswith("take")))
                views.append(state.observation(seat))
            final_hand = state.observation(1 - seat)["hand"]

            # Shuffle the hidden cards among their places: a different deal, the same view.
            places = hidden_from(seat, state.setup, moves, final_hand)
            colours = [card_at(state.setup, place) for place in places]
            rng.shuffle(colours)
            other_setup = {key: [list(pile) for pile in piles] if key != "deck" else list(piles)
                           for key, piles in state.setup.items()}
            for place, colour in zip(places, colours):
                if place[0] == "deck":
                    other_setup["deck"][place[1]] = colour
                else:
                    other_setup[place[0]][place[1]][place[2]] = colour
            for key in ("cups", "hands"):
                other_setup[key] = [sorted(pile) for pile in other_setup[key]]
            differing += other_setup != state.setup

            replay = GAME.new_state(2, setup=other_setup)
            assert replay.observation(seat) == views[0], f"seed {seed} seat {seat}: at the deal"
            for ply, (_, move, _, _) in enumerate(moves):
                replay.apply(move)
                assert replay.observation(seat) == views[ply + 1], \
                    f"seed {seed} seat {seat}: ply {ply} shows something hidden"
    assert differing > scaled(700), "the hidden cards were hardly ever shuffled: the test tests nothing"


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
