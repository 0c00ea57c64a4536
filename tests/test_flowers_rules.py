"""`flowers` rules, each checked on an explicit setup (the form of docs/notation.md) plus moves.

Scoring of single gardens is in test_flowers_scoring.py; here: setup, options, the turn
(draw, then place), the face-up and face-down piles, the end, whole-game scores and ranks,
what each seat sees, and the text views.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from engine import registry
from engine.core import IllegalMoveError, InvalidOptionError, InvalidSetupError
from engine.games.flowers import DECK

GAME = registry.get("flowers")


def filler(count: int, avoid: list[str]) -> list[str]:
    """`count` deck cards not in `avoid` (respecting copies), for piles a test does not use."""
    left = Counter(DECK) - Counter(avoid)
    return sorted(left.elements())[:count]


def started(gardens: list[str], piles: list[list[str]], pile_size: int) -> object:
    """A match from an explicit setup; piles shorter than pile_size are topped up with filler."""
    used = gardens + [card for pile in piles for card in pile]
    full = []
    for pile in piles:
        extra = filler(pile_size - len(pile), used)
        used = used + extra
        full.append(pile + extra)
    options = {"pile_size": pile_size}
    return GAME.new_state(len(gardens), options, setup={"gardens": gardens, "piles": full})


def play(state, *moves: str) -> None:
    for move in moves:
        state.apply(move)


# -- setup ------------------------------------------------------------------------------------
@pytest.mark.parametrize("players, sizes", [(1, [36, 36, 35]), (2, [26, 26, 26]),
                                            (3, [30, 30, 30]), (4, [35, 35, 34])])
def test_default_pile_sizes_by_player_count(players, sizes):
    state = GAME.new_state(players, seed=3)
    assert [len(pile) for pile in state.setup["piles"]] == sizes
    assert len(state.setup["gardens"]) == players


@pytest.mark.parametrize("players", [1, 4])
def test_one_and_four_players_use_the_whole_deck(players):
    setup = GAME.new_state(players, seed=8).setup
    dealt = setup["gardens"] + [card for pile in setup["piles"] for card in pile]
    assert Counter(dealt) == Counter(DECK)


def test_the_deck_has_108_cards_with_three_butterflies_of_other_colours_per_colour():
    assert len(DECK) == 108
    for colour in "bgry":
        mine = [card for card in DECK if card[0] == colour]
        assert Counter(card[1] for card in mine) == {"1": 3, "2": 6, "3": 8, "4": 10}
        butterflies = sorted(card[3] for card in mine if "+" in card)
        assert butterflies == sorted(set("bgry") - {colour})


def test_the_same_seed_deals_the_same_setup():
    assert GAME.new_state(2, seed=11).setup == GAME.new_state(2, seed=11).setup
    assert GAME.new_state(2, seed=11).setup != GAME.new_state(2, seed=12).setup


def test_each_first_card_lies_at_0_0_of_its_own_garden():
    state = started(["b1", "r3"], [[], [], []], 4)
    gardens = state.observation(0)["gardens"]
    assert gardens == [{"seat": 0, "cells": [{"x": 0, "y": 0, "cards": ["b1"]}]},
                       {"seat": 1, "cells": [{"x": 0, "y": 0, "cards": ["r3"]}]}]


def test_pile_size_option_sets_every_pile_and_is_stored_only_when_not_default():
    state = GAME.new_state(2, {"pile_size": 10}, seed=1)
    assert [len(pile) for pile in state.setup["piles"]] == [10, 10, 10]
    assert GAME.non_default_options(state.options) == {"pile_size": 10}
    assert GAME.non_default_options(GAME.new_state(2, seed=1).options) == {}


@pytest.mark.parametrize("players, size, message", [
    (2, 36, "1 to 35 with 2 players"), (4, 35, "1 to 34 with 4 players"),
    (1, -1, r"1 to 35 with 1 player \(107 cards")])
def test_pile_size_may_not_exceed_the_deck(players, size, message):
    with pytest.raises(InvalidOptionError, match="pile_size must be 0 .* or " + message):
        GAME.new_state(players, {"pile_size": size}, seed=1)


def test_largest_pile_size_that_fits_is_accepted():
    state = GAME.new_state(4, {"pile_size": 34}, seed=1)
    assert [len(pile) for pile in state.setup["piles"]] == [34, 34, 34]


@pytest.mark.parametrize("setup, message", [
    ({"gardens": ["b1"], "piles": [["b2"], ["b3"], ["b4"]]}, "one first card per seat"),
    ({"gardens": ["b1", "b2"], "piles": [["b2"], ["b3"]]}, "three lists"),
    ({"gardens": ["b1", "b2"], "piles": [["b2"], ["b3"], ["b4", "b4"]]}, "pile sizes"),
    ({"gardens": ["b1", "x9"], "piles": [["b2"], ["b3"], ["b4"]]}, "unknown cards x9"),
    ({"gardens": ["b1", "b4+b"], "piles": [["b2"], ["b3"], ["b4"]]}, "unknown cards b4\\+b"),
    ({"gardens": ["b1", "b1"], "piles": [["b1"], ["b1"], ["b4"]]}, "more copies .* b1"),
    ({"gardens": ["b1", "b2"], "piles": [["b2"], ["b3"], ["b4"]], "deck": []}, "keys"),
])
def test_a_setup_that_is_not_a_legal_deal_is_refused(setup, message):
    with pytest.raises(InvalidSetupError, match=message):
        GAME.new_state(2, {"pile_size": 1}, setup=setup)


# -- the turn ---------------------------------------------------------------------------------
def test_a_turn_is_a_draw_then_a_placement_by_the_same_seat():
    state = started(["b1", "r1"], [["g2"], ["y2"], ["b3"]], 4)
    assert state.to_move() == 0
    assert state.legal_moves() == ["draw 0", "draw 1", "draw 2"]
    state.apply("draw 0")
    assert state.to_move() == 0
    assert state.observation(0)["phase"] == "place"
    assert state.legal_moves() == ["place -1 0", "place 0 -1", "place 0 0", "place 0 1",
                                   "place 1 0"]
    state.apply("place 1 0")
    assert state.to_move() == 1
    assert state.observation(1)["phase"] == "draw"


def test_seats_take_turns_in_seat_order_and_wrap_around():
    state = started(["b1", "r1", "g1"], [[], [], []], 5)
    seen = []
    for _ in range(4):
        seen.append(state.to_move())
        play(state, "draw 1", "place 0 1")
    assert seen == [0, 1, 2, 0]


def test_placement_goes_next_to_a_card_or_on_top_nothing_else():
    state = started(["b1"], [["g2", "y2", "r3"], [], []], 4)
    play(state, "draw 0", "place 1 0", "draw 0")
    # garden: b1 at 0 0, g2 at 1 0; y2 may go on either card or on any empty orthogonal
    # neighbour of them, but not diagonally and not further away
    assert state.legal_moves() == [
        "place -1 0", "place 0 -1", "place 0 0", "place 0 1",
        "place 1 -1", "place 1 0", "place 1 1", "place 2 0"]
    for move in ("place 1 1", "place 2 0", "place 0 0"):
        assert move in state.legal_moves()
    for move in ("place -1 -1", "place 2 1", "place 3 0", "place 0 2"):
        with pytest.raises(IllegalMoveError, match="neither on nor orthogonally next to"):
            state.apply(move)


def test_placing_on_top_covers_the_whole_stack():
    state = started(["b1"], [["g2", "y2"], [], []], 4)
    play(state, "draw 0", "place 0 0", "draw 0", "place 0 0")
    cells = state.observation(0)["gardens"][0]["cells"]
    assert cells == [{"x": 0, "y": 0, "cards": ["b1", "g2", "y2"]}]
    assert state.legal_moves() == ["draw 0", "draw 1", "draw 2"]


def test_legal_moves_are_sorted_by_code_point_order():
    state = started(["b1"], [["g2"] * 1 + ["y2"] * 3, [], []], 12)
    for cell in ("place -1 0", "place -2 0", "place -3 0"):
        play(state, "draw 0", cell)
    state.apply("draw 0")
    moves = state.legal_moves()
    assert moves == sorted(moves)
    assert moves[:3] == ["place -1 -1", "place -1 0", "place -1 1"]
    assert "place -4 0" in moves and "place -10 0" not in moves


@pytest.mark.parametrize("move", ["draw 3", "draw -1", "draw 00", "draw", "Draw 0",
                                  "draw  0", "draw 0 ", "place 0 0", "pass", ""])
def test_a_draw_phase_refuses_anything_but_draw_from_a_pile(move):
    state = started(["b1"], [[], [], []], 4)
    with pytest.raises(IllegalMoveError, match="must draw first"):
        state.apply(move)
    assert state.legal_moves() == ["draw 0", "draw 1", "draw 2"]


@pytest.mark.parametrize("move", ["draw 0", "place 1", "place 1 0 0", "place 01 0",
                                  "place +1 0", "place -0 0", "place 1  0", "place x 0",
                                  "place 1.0 0", "Place 1 0", "place ١ 0"])
def test_a_place_phase_refuses_draws_and_bad_notation(move):
    state = started(["b1"], [["g2"], [], []], 4)
    state.apply("draw 0")
    with pytest.raises(IllegalMoveError, match="must place the drawn g2"):
        state.apply(move)
    state.apply("place 1 0")        # the refused moves changed nothing


# -- piles ------------------------------------------------------------------------------------
def test_a_face_up_pile_turns_its_next_card_up():
    state = started(["b1"], [["g2", "y3"], ["r4", "b2"], ["g1", "y1"]], 3)
    assert state.observation(0)["pile_tops"] == ["g2", "r4", ""]
    state.apply("draw 0")
    assert state.observation(0)["pile_tops"] == ["y3", "r4", ""]
    assert state.observation(0)["drawn_card"] == "g2"
    state.apply("place 1 0")
    state.apply("draw 1")
    assert state.observation(0)["pile_tops"] == ["y3", "b2", ""]
    assert state.observation(0)["pile_sizes"] == [2, 2, 3]


def test_pile_2_stays_face_down_and_its_drawn_card_is_seen_only_by_the_drawer():
    state = started(["b1", "r1"], [[], [], ["g4+y", "y2"]], 3)
    state.apply("draw 2")
    mine, theirs = state.observation(0), state.observation(1)
    assert mine["pile_tops"][2] == theirs["pile_tops"][2] == ""
    assert (mine["drawn_card"], mine["drawn_from"]) == ("g4+y", 2)
    assert (theirs["drawn_card"], theirs["drawn_from"]) == ("", 2)
    assert "g4+y" not in state.render()
    state.apply("place 0 1")
    # once placed it is part of a garden, which is public
    assert {"x": 0, "y": 1, "cards": ["g4+y"]} in state.observation(1)["gardens"][0]["cells"]
    assert state.observation(1)["drawn_card"] == ""
    assert state.observation(1)["drawn_from"] == -1


@pytest.mark.parametrize("seat", [-1, 2, "0", None])
def test_an_observation_for_a_seat_not_in_the_match_is_refused(seat):
    state = started(["b1", "r1"], [[], [], ["g4+y"]], 3)
    state.apply("draw 2")
    with pytest.raises(ValueError, match="no seat"):
        state.observation(seat)


def test_a_card_drawn_from_a_face_up_pile_is_seen_by_everyone():
    state = started(["b1", "r1"], [["g3"], [], []], 3)
    state.apply("draw 0")
    assert state.observation(1)["drawn_card"] == "g3"
    assert "seat 0 places g3 drawn from pile 0" in state.render()


# -- the end ----------------------------------------------------------------------------------
@pytest.mark.parametrize("pile", [0, 1, 2])
def test_the_game_ends_right_after_the_turn_that_empties_any_pile(pile):
    state = started(["b1", "r1"], [[], [], []], 2)
    play(state, f"draw {pile}", "place 1 0")
    assert not state.is_over()
    state.apply(f"draw {pile}")          # the last card of that pile: this is the last turn
    assert state.to_move() == 1
    assert state.legal_moves()[0].startswith("place")
    state.apply("place 0 1")
    assert state.is_over()
    assert state.to_move() is None
    assert state.legal_moves() == []
    assert state.observation(0)["phase"] == "over"
    assert state.observation(0)["to_move"] == -1
    with pytest.raises(IllegalMoveError, match="over"):
        state.apply("draw 0")


def test_the_solo_game_ends_and_scores_like_the_others():
    state = started(["r2"], [["b2", "y1"], [], []], 2)
    play(state, "draw 0", "place 1 0")
    assert not state.is_over()
    play(state, "draw 0", "place 0 1")
    assert state.is_over()
    assert state.scores() == [0]
    assert state.ranks() == [1]


def test_a_solo_game_played_by_random_moves_ends_with_a_score():
    state = GAME.new_state(1, seed=4)
    rng = random.Random(4)
    while not state.is_over():
        state.apply(rng.choice(state.legal_moves()))
    assert len(state.scores()) == 1 and state.ranks() == [1]


# -- whole-game scores and ranks ------------------------------------------------------------
def _four_turns_each(seat0_cards, seat0_cells, seat1_cards, seat1_cells, starts):
    """Both seats take four turns from pile 0 (8 cards: the 8th draw ends the game)."""
    draws = [card for pair in zip(seat0_cards, seat1_cards) for card in pair]
    state = started(starts, [draws, [], []], 8)
    for cell0, cell1 in zip(seat0_cells, seat1_cells):
        play(state, "draw 0", f"place {cell0}", "draw 0", f"place {cell1}")
    assert state.is_over()
    return state


def test_ties_on_points_go_to_fewer_removed_cards():
    # seat 0: four 4s, its green butterfly next to the green 4 (+1), a lone 1: 1 point,
    # nothing removed. Seat 1: four 4s, two butterflies next to their colours (+2), a lone
    # 3 removed (-1): 1 point, 1 removed.
    state = _four_turns_each(["g4", "b4", "r4", "g1"], ["1 0", "2 0", "3 0", "4 0"],
                             ["r4+y", "b4", "g4", "b3"], ["1 0", "2 0", "3 0", "0 1"],
                             ["y4+g", "y4+r"])
    assert state.scores() == [1, 1]
    assert state.ranks() == [1, 2]


def test_ties_on_points_and_removed_cards_are_shared():
    state = _four_turns_each(["g4", "b4", "r4", "g3"], ["1 0", "2 0", "3 0", "0 1"],
                             ["r4", "b4", "g4", "r3"], ["1 0", "2 0", "3 0", "0 1"],
                             ["y4+g", "y4+r"])
    # seat 0: its yellow 4's green butterfly by a green 4 (+1), a lone 3 removed (-1);
    # seat 1: its yellow 4's red butterfly by a red 4 (+1), a lone 3 removed (-1)
    assert state.scores() == [0, 0]
    assert state.ranks() == [1, 1]


def test_the_most_points_win():
    state = _four_turns_each(["g4", "b4", "r4", "g1"], ["1 0", "2 0", "3 0", "4 0"],
                             ["r1", "b4", "g4", "b3"], ["1 0", "2 0", "3 0", "0 1"],
                             ["y4+g", "y4+r"])
    assert state.scores() == [1, -4]
    assert state.ranks() == [1, 2]


# -- text views -------------------------------------------------------------------------------
def test_render_draws_each_garden_as_a_grid_with_stack_depth():
    state = started(["b1", "r2"], [["y4+g", "g2"], [], []], 2)
    play(state, "draw 0", "place 1 0", "draw 0", "place 0 0")
    text = state.render()
    assert "piles: 0: empty (0 left) | 1:" in text
    assert "seat 0 garden (2 cells, 0 covered cards):" in text
    assert "      0   b1 y4+g" in text
    assert "seat 1 garden (1 cells, 1 covered cards):" in text
    assert "      0 g2/2" in text


def test_render_result_shows_the_breakdown_per_seat():
    state = _four_turns_each(["g4", "b4", "r4", "g1"], ["1 0", "2 0", "3 0", "4 0"],
                             ["r4+y", "b4", "g4", "b3"], ["1 0", "2 0", "3 0", "0 1"],
                             ["y4+g", "y4+r"])
    text = state.render_result()
    assert "removed 1 (-1): b3 at 0 1" in text
    assert "butterflies (+2): y4+r at 0 0, r4+y at 1 0" in text
    assert "colour groups (+0): none" in text
    assert text.endswith("scores [1, 1] ranks [1, 2]")


def test_a_clone_is_independent_of_its_original():
    state = started(["b1", "r1"], [["g2", "y2"], [], []], 3)
    copy = state.clone()
    play(copy, "draw 0", "place 1 0")
    assert state.observation(0)["pile_tops"][0] == "g2"
    assert state.legal_moves() == ["draw 0", "draw 1", "draw 2"]
    assert state.observation(0)["gardens"][0]["cells"] == [{"x": 0, "y": 0, "cards": ["b1"]}]
    play(state, "draw 0", "place 0 0")
    assert copy.observation(0)["gardens"][0]["cells"] == [
        {"x": 0, "y": 0, "cards": ["b1"]}, {"x": 1, "y": 0, "cards": ["g2"]}]
