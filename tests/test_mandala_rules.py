"""Mandala rules, one hand-built scenario per rule and per "Arena's reading" of
docs/rules/mandala.md.

Every scenario starts from an explicit setup in the form of docs/notation.md and plays moves through
the public interface; it then checks legal-move lists, the observation, scores and ranks.
"""
from __future__ import annotations

import pytest

from engine import registry
from engine.core import IllegalMoveError, InvalidSetupError
from engine.games.mandala import COLOURS

GAME = registry.get("mandala")
ALL_SIX = list(COLOURS)       # a hand holding one card of each colour


def setup(hands, mountains=(["black", "green"], ["black", "green"]),
          cups=(["black", "black"], ["green", "green"]), deck_top=(), deck_bottom=()):
    """A legal setup: these piles, then a deck of `deck_top`, the remaining cards in colour
    order, and `deck_bottom` last."""
    used = [card for pile in (*hands, *mountains, *cups, deck_top, deck_bottom)
            for card in pile]
    rest = [colour for colour in COLOURS for _ in range(18 - used.count(colour))]
    return {"cups": [sorted(cup) for cup in cups], "hands": [sorted(hand) for hand in hands],
            "mountains": [sorted(m) for m in mountains],
            "deck": [*deck_top, *rest, *deck_bottom]}


def start(**kwargs):
    return GAME.new_state(2, setup=setup(**kwargs))


def play(state, *moves):
    for move in moves:
        state.apply(move)
    return state


def burn_deck(state, leave):
    """Both players discard one card of the colour on top of the deck and draw it back, so
    hands holding every colour stay unchanged while the deck shrinks to `leave` cards."""
    deck = state.setup["deck"]
    while state.observation(0)["deck_size"] > leave:
        top = deck[len(deck) - state.observation(0)["deck_size"]]
        state.apply(f"discard {top} 1")
    return state


def obs(state, seat=0):
    return state.observation(seat)


def mandala(state, m):
    area = obs(state)["mandalas"][m]
    return area["mountain"], area["fields"][0]["cards"], area["fields"][1]["cards"]


def player(state, seat):
    return obs(state)["players"][seat]


# -- setup ------------------------------------------------------------------------------------

def test_a_deal_gives_two_secret_cup_cards_six_in_hand_two_per_mountain_and_88_in_the_deck():
    state = GAME.new_state(2, seed=3)
    assert [len(cup) for cup in state.setup["cups"]] == [2, 2]
    assert [len(hand) for hand in state.setup["hands"]] == [6, 6]
    assert [len(m) for m in state.setup["mountains"]] == [2, 2]
    assert len(state.setup["deck"]) == 88
    seen = obs(state)
    assert seen["to_move"] == 0 and seen["phase"] == "turn", "seat 0 moves first"
    assert [p["cup_size"] for p in seen["players"]] == [2, 2]
    assert [p["cup_taken"] for p in seen["players"]] == [[], []]


@pytest.mark.parametrize("what,change", [
    ("a hand of 5", lambda s: s["hands"][0].pop()),
    ("19 black cards", lambda s: s["deck"].__setitem__(s["deck"].index("green"), "black")),
    ("an unknown colour", lambda s: s["mountains"][1].__setitem__(0, "blue")),
    ("an unsorted hand", lambda s: s["hands"][1].reverse()),
    ("an unknown key", lambda s: s.__setitem__("river", [])),
    ("three cups", lambda s: s["cups"].append(["red", "red"])),
    ("a list for a card", lambda s: s["deck"].__setitem__(0, ["red"])),
    ("a deck of 87", lambda s: s["deck"].pop()),
])
def test_a_setup_that_is_not_a_legal_deal_is_refused(what, change):
    bad = setup(hands=[["black", "green", "orange", "purple", "red", "yellow"],
                       ["black", "black", "green", "green", "red", "red"]])
    GAME.new_state(2, setup=bad)        # the untouched setup is fine
    change(bad)
    with pytest.raises(InvalidSetupError):
        GAME.new_state(2, setup=bad)


# -- rule of colour -----------------------------------------------------------------------------

def test_rule_of_colour_a_colour_stands_in_only_one_area_of_a_mandala():
    # Mandala 0: black and green on the mountain, seat 1 has orange in its field, seat 0 red.
    state = start(hands=[["black", "green", "orange", "purple", "red", "red"],
                         ["orange", "orange", "black", "black", "red", "red"]])
    play(state, "field 0 red 1", "field 0 orange 1")
    assert mandala(state, 0) == (["black", "green"], ["red"], ["orange"])
    legal = state.legal_moves()
    mandala0 = [move for move in legal if move.split()[1] == "0"]
    assert mandala0 == [
        # mountain: not a colour of either field (orange: seat 1's field, red: seat 0's field);
        # colours already on the mountain may be added to it.
        # field: not a mountain colour nor a colour of the opponent's field; own colours ok.
        "field 0 purple 1", "field 0 red 1",
        "mountain 0 black", "mountain 0 green", "mountain 0 purple",
    ]
    for move, why in [("mountain 0 orange", "seat 1's field"), ("mountain 0 red", "seat 0's field"),
                      ("field 0 black 1", "mountain"), ("field 0 orange 1", "seat 1's field")]:
        with pytest.raises(IllegalMoveError, match=why):
            state.apply(move)


def test_rule_of_colour_is_per_mandala():
    state = start(hands=[ALL_SIX, ALL_SIX], mountains=(["black", "green"], ["red", "red"]))
    legal = state.legal_moves()
    assert "field 0 black 1" not in legal and "field 1 black 1" in legal
    assert "field 1 red 1" not in legal and "field 0 red 1" in legal


# -- the three actions --------------------------------------------------------------------------

def test_build_the_mountain_draws_three_cards():
    state = start(hands=[["black", "green", "green", "red", "red", "yellow"], ALL_SIX],
                  deck_top=["orange", "purple", "purple"])
    play(state, "mountain 1 yellow")
    assert obs(state)["hand"] == ["black", "green", "green", "orange", "purple", "purple",
                                  "red", "red"]
    assert obs(state)["deck_size"] == 85
    assert mandala(state, 1)[0] == ["black", "green", "yellow"]
    assert obs(state)["to_move"] == 1


def test_build_the_mountain_draws_only_up_to_eight_cards_in_hand():
    state = start(hands=[ALL_SIX, ALL_SIX],
                  deck_top=["red", "red", "red", "purple", "purple", "purple", "yellow", "yellow"])
    play(state, "mountain 0 black")             # 6 - 1 + 3 = 8 cards
    assert player(state, 0)["hand_size"] == 8
    play(state, "mountain 0 green")             # seat 1 draws 3 as well
    play(state, "mountain 0 green")             # 8 - 1 = 7: draws only 1, back to 8
    assert player(state, 0)["hand_size"] == 8
    assert obs(state)["deck_size"] == 88 - 7
    assert obs(state)["hand"] == ["orange", "purple", "red", "red", "red", "red", "yellow",
                                  "yellow"]


def test_build_the_mountain_draws_only_what_the_deck_still_holds():
    state = start(hands=[ALL_SIX, ALL_SIX], deck_bottom=["purple", "purple"])
    burn_deck(state, 2)
    play(state, "mountain 0 yellow")            # wants 3, the deck holds 2
    assert obs(state)["hand"] == ["black", "green", "orange", "purple", "purple", "purple",
                                  "red"]
    assert obs(state)["deck_size"] == 0
    play(state, "mountain 0 yellow")            # seat 1: nothing left to draw
    assert player(state, 1)["hand_size"] == 5


def test_grow_your_field_plays_n_cards_of_one_colour_and_draws_nothing():
    state = start(hands=[["red", "red", "red", "yellow", "yellow", "yellow"], ALL_SIX])
    play(state, "field 1 red 3")
    assert mandala(state, 1)[1] == ["red", "red", "red"]
    assert obs(state)["hand"] == ["yellow", "yellow", "yellow"]
    assert obs(state)["deck_size"] == 88


def test_decision_a_field_action_must_keep_at_least_one_card_in_hand():
    state = start(hands=[["red"] * 6, ALL_SIX])
    assert [m for m in state.legal_moves() if m.startswith("field 0")] == [
        "field 0 red 1", "field 0 red 2", "field 0 red 3", "field 0 red 4", "field 0 red 5"]
    with pytest.raises(IllegalMoveError, match="keep at least 1 card"):
        state.apply("field 0 red 6")
    play(state, "field 0 red 5", "discard black 1")
    assert obs(state)["hand"] == ["red"]
    assert not [m for m in state.legal_moves() if m.startswith("field")], \
        "a single card can never go to a field"


def test_discard_and_draw_replaces_the_cards():
    state = start(hands=[["orange", "orange", "orange", "red", "red", "yellow"], ALL_SIX],
                  deck_top=["black", "green", "black"])
    assert [m for m in state.legal_moves() if m.startswith("discard")] == [
        "discard orange 1", "discard orange 2", "discard orange 3",
        "discard red 1", "discard red 2", "discard yellow 1"]
    play(state, "discard orange 3")
    assert obs(state)["hand"] == ["black", "black", "green", "red", "red", "yellow"]
    assert obs(state)["discard"] == ["orange", "orange", "orange"]


def test_discard_with_a_short_deck_draws_what_is_left_and_with_an_empty_deck_nothing():
    state = start(hands=[ALL_SIX, ALL_SIX], deck_bottom=["red", "red", "red", "purple"])
    burn_deck(state, 4)
    assert obs(state)["to_move"] == 0
    play(state, "mountain 0 yellow")            # draws red red red: deck holds 1 card
    assert obs(state)["hand"] == ["black", "green", "orange", "purple", "red", "red", "red",
                                  "red"]
    play(state, "field 1 orange 1")
    play(state, "discard red 4")                # only 1 card left to draw
    assert obs(state)["hand"] == ["black", "green", "orange", "purple", "purple"]
    assert obs(state)["deck_size"] == 0
    play(state, "field 1 purple 1")
    assert "discard purple 2" in state.legal_moves(), "a discard is legal with an empty deck"
    play(state, "discard purple 2")
    assert obs(state)["hand"] == ["black", "green", "orange"]


def test_decision_mountain_and_discard_may_empty_a_hand_then_the_only_move_is_pass():
    state = start(hands=[ALL_SIX, ALL_SIX])
    burn_deck(state, 0)
    for colour in COLOURS[:5]:                  # both players discard their hands card by card
        play(state, f"discard {colour} 1", f"discard {colour} 1")
    play(state, "mountain 0 yellow")            # seat 0's last card, nothing to draw
    assert obs(state, 0)["hand"] == []
    play(state, "discard yellow 1")             # seat 1's last card
    assert obs(state)["hand"] == [] and state.legal_moves() == ["pass"]
    with pytest.raises(IllegalMoveError):
        state.apply("discard black 1")


def test_pass_is_refused_while_holding_cards():
    state = start(hands=[ALL_SIX, ALL_SIX])
    assert "pass" not in state.legal_moves()
    with pytest.raises(IllegalMoveError, match="empty hand"):
        state.apply("pass")


def discard_one(state):
    """The player to move discards one card (the first of their hand)."""
    hand = state.observation(state.to_move())["hand"]
    state.apply(f"discard {hand[0]} 1")


def test_decision_two_passes_in_a_row_end_the_game_and_a_draw_shares_rank_one():
    state = start(hands=[ALL_SIX, ALL_SIX])
    burn_deck(state, 3)
    play(state, "mountain 0 yellow")            # seat 1 draws the last 3 cards: 8 in hand
    while player(state, 0)["hand_size"]:
        discard_one(state)
    assert player(state, 1)["hand_size"] == 3
    discard_one(state)
    assert state.legal_moves() == ["pass"]
    play(state, "pass")
    assert obs(state)["passes"] == 1
    discard_one(state)                          # not a pass: the count starts again
    assert obs(state)["passes"] == 0
    play(state, "pass")
    discard_one(state)                          # seat 1's last card
    play(state, "pass")
    assert not state.is_over() and obs(state)["passes"] == 1
    play(state, "pass")
    assert state.is_over() and obs(state)["end"] == "passes"
    # Nothing in any river: every cup card scores 0; equal cups too, so it is a draw.
    assert state.scores() == [0, 0]
    assert state.ranks() == [1, 1]


# -- completion and destruction -----------------------------------------------------------------

def test_a_mandala_is_complete_when_all_six_colours_stand_in_it():
    state = start(hands=[["orange", "purple", "purple", "yellow", "yellow", "yellow"],
                         ["orange", "red", "red", "red", "red", "red"]])
    play(state, "field 0 yellow 3", "field 0 red 2", "mountain 0 purple")
    assert obs(state)["phase"] == "turn", "five colours are not a complete mandala"
    play(state, "discard red 1")                # a discard completes nothing
    play(state, "mountain 0 orange")
    seen = obs(state)
    assert (seen["phase"], seen["destroying"], seen["completed_by"]) == ("take", 0, 0)
    # Seat 0 has 3 field cards, seat 1 has 2: seat 0 chooses first.
    assert seen["to_move"] == 0
    assert state.legal_moves() == ["take black", "take green", "take orange", "take purple"]


def test_decision_a_mountain_action_draws_before_completion_is_checked():
    # The completing mountain action draws 3 of the last 4 cards: 1 is left, so the destroyed
    # mandala cannot be refilled and the game ends.
    state = start(hands=[ALL_SIX, ALL_SIX])
    burn_deck(state, 4)
    play(state, "field 0 orange 1", "field 0 purple 1", "field 0 red 1", "mountain 0 yellow")
    assert player(state, 1)["hand_size"] == 7 and obs(state)["deck_size"] == 1
    assert obs(state)["to_move"] == 0, "seat 0 has the larger field (2 against 1)"
    play(state, "take green", "take yellow", "take black")
    assert state.is_over() and obs(state)["end"] == "refill"


def test_the_larger_field_chooses_first_even_if_the_other_player_completed():
    state = start(hands=[ALL_SIX, ["orange", "orange", "orange", "red", "red", "red"]])
    play(state, "field 0 purple 1", "field 0 orange 3", "field 0 yellow 1", "field 0 red 1")
    assert obs(state)["completed_by"] == 1
    assert obs(state)["to_move"] == 1, "seat 1 has 4 field cards, seat 0 only 2"
    play(state, "take black", "take green")
    # Seat 0 took last, but the turn goes to the opponent of the completer: seat 0 again.
    assert (obs(state)["phase"], obs(state)["to_move"]) == ("turn", 0)


def test_on_a_field_tie_the_player_who_did_not_complete_chooses_first():
    state = start(hands=[ALL_SIX, ["black", "black", "orange", "orange", "orange", "red"]])
    play(state, "field 0 yellow 1", "field 0 orange 3", "field 0 purple 1")
    assert mandala(state, 0)[1:] == (["purple", "yellow"], ["orange", "orange", "orange"])
    play(state, "discard black 1", "field 0 red 1")
    assert obs(state)["completed_by"] == 0 and obs(state)["phase"] == "take"
    assert [len(field) for field in mandala(state, 0)[1:]] == [3, 3]
    assert obs(state)["to_move"] == 1


def test_a_mandala_completed_with_both_fields_empty_is_still_taken_in_turns():
    state = start(hands=[ALL_SIX, ALL_SIX])
    play(state, "mountain 1 orange", "mountain 1 purple", "mountain 1 red", "mountain 1 yellow")
    assert obs(state)["completed_by"] == 1
    assert obs(state)["to_move"] == 0, "0 against 0 is a tie: seat 0 did not complete"
    play(state, "take black", "take green", "take orange", "take purple", "take red",
         "take yellow")
    assert player(state, 0)["river"] == ["black", "orange", "red"]
    assert player(state, 1)["river"] == ["green", "purple", "yellow"]


def test_takes_alternate_and_a_new_colour_fills_the_lowest_free_river_slot_the_rest_the_cup():
    state = start(hands=[["black", "green", "purple", "purple", "yellow", "yellow"],
                         ["black", "black", "orange", "orange", "red", "red"]],
                  mountains=(["black", "black"], ["black", "green"]),
                  deck_top=["yellow", "red"])
    # Mandala 0: black x2 on the mountain; five field moves complete it.
    play(state, "field 0 green 1", "field 0 orange 1", "field 0 purple 1", "field 0 red 1",
         "field 0 yellow 1")
    assert obs(state)["to_move"] == 0 and state.legal_moves() == ["take black"]
    play(state, "take black")
    # One black to river slot 1, the other one to the cup (face up, so it is public).
    assert player(state, 0)["river"] == ["black"]
    assert player(state, 0)["cup_taken"] == ["black"] and player(state, 0)["cup_size"] == 3
    # The mountain is empty: both fields went to the discard pile, two deck cards refill it,
    # and the opponent of the completer (seat 0) moves.
    assert mandala(state, 0) == (["red", "yellow"], [], [])
    assert obs(state)["discard"] == ["green", "orange", "purple", "red", "yellow"]
    assert (obs(state)["phase"], obs(state)["to_move"]) == ("turn", 1)
    # Mandala 1: black and green on the mountain; a 2-2 field tie that seat 0 completes.
    play(state, "field 1 orange 1", "field 1 purple 1", "field 1 red 1", "field 1 yellow 1")
    assert obs(state)["to_move"] == 1, "tie: seat 1 did not complete, it chooses first"
    play(state, "take green")
    assert obs(state)["to_move"] == 0, "takes alternate"
    play(state, "take black")
    # Black is already in seat 0's river: the card goes to the cup.
    assert player(state, 0)["river"] == ["black"]
    assert player(state, 0)["cup_taken"] == ["black", "black"]
    assert player(state, 1)["river"] == ["green"] and player(state, 1)["cup_taken"] == []
    # After the destruction the turn goes to the opponent of the completer, not of the taker.
    assert (obs(state)["phase"], obs(state)["to_move"]) == ("turn", 1)


def two_destructions(cups):
    """Plays up to a second destruction in which seat 0 can take its sixth river colour."""
    state = start(hands=[["black", "green", "orange", "red", "yellow", "yellow"],
                         ["black", "orange", "purple", "purple", "red", "yellow"]], cups=cups)
    play(state, "mountain 0 orange", "mountain 0 purple", "mountain 0 red", "mountain 1 orange",
         "field 0 yellow 1")
    # Mandala 0 (mountain: black green orange purple red) is destroyed, seat 0 first.
    play(state, "take black", "take green", "take orange", "take purple", "take red")
    assert player(state, 0)["river"] == ["black", "orange", "red"]
    assert player(state, 1)["river"] == ["green", "purple"]
    play(state, "mountain 1 yellow", "mountain 1 yellow", "mountain 1 purple", "discard black 1",
         "mountain 1 red")
    # Mandala 1's mountain holds all six colours; seat 1 completed it, so seat 0 takes first.
    assert mandala(state, 1)[0] == ["black", "green", "orange", "purple", "red", "yellow",
                                    "yellow"]
    return state


def test_the_game_ends_at_once_on_a_sixth_river_colour_in_the_middle_of_a_destruction():
    state = two_destructions(cups=(["black", "black"], ["green", "yellow"]))
    deck_before = obs(state)["deck_size"]
    play(state, "take green", "take black", "take purple", "take orange", "take yellow")
    assert state.is_over() and obs(state)["end"] == "river"
    assert player(state, 0)["river"] == ["black", "orange", "red", "green", "purple", "yellow"]
    # That take is completed (the second yellow goes to the cup), then nothing more happens:
    # red stays on the mountain, nothing is refilled.
    assert player(state, 0)["cup_taken"] == ["yellow"]
    assert mandala(state, 1)[0] == ["red"]
    assert obs(state)["deck_size"] == deck_before
    assert state.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="over"):
        state.apply("take red")


def test_the_sixth_river_colour_ends_the_game_before_the_fields_are_discarded_or_refilled():
    # As two_destructions, but seat 0 draws a red first and lays it in its field of mandala 1,
    # so that field is in play when the sixth colour ends the game with an empty mountain.
    state = start(hands=[["black", "green", "orange", "red", "yellow", "yellow"],
                         ["black", "orange", "purple", "purple", "red", "yellow"]],
                  cups=(["black", "black"], ["green", "yellow"]), deck_top=["red"])
    play(state, "mountain 0 orange", "mountain 0 purple", "mountain 0 red", "mountain 1 orange",
         "field 0 yellow 1")
    play(state, "take black", "take green", "take orange", "take purple", "take red")
    play(state, "mountain 1 purple", "field 1 red 1", "mountain 1 yellow")
    # Mandala 1: mountain black green orange purple yellow, seat 0's field red: complete by
    # seat 1, and seat 0 has the larger field, so it chooses first.
    assert (obs(state)["completed_by"], obs(state)["to_move"]) == (1, 0)
    discard, deck = obs(state)["discard"], obs(state)["deck_size"]
    play(state, "take green", "take black", "take purple", "take orange", "take yellow")
    assert state.is_over() and obs(state)["end"] == "river"
    # The mountain is empty, yet the field stays, nothing is discarded and nothing refilled.
    assert mandala(state, 1) == ([], ["red"], [])
    assert (obs(state)["discard"], obs(state)["deck_size"]) == (discard, deck)


def test_a_destroyed_mandala_is_refilled_with_the_last_two_cards_and_the_game_goes_on():
    state = start(hands=[ALL_SIX, ALL_SIX], deck_bottom=["red", "yellow"])
    burn_deck(state, 2)
    play(state, "field 0 orange 1", "field 0 purple 1", "field 0 red 1", "field 0 yellow 1")
    assert (obs(state)["completed_by"], obs(state)["to_move"]) == (1, 0)
    play(state, "take black", "take green")
    assert not state.is_over()
    assert mandala(state, 0) == (["red", "yellow"], [], [])
    assert (obs(state)["deck_size"], obs(state)["phase"], obs(state)["to_move"]) == (0, "turn", 0)


# -- end and scoring ----------------------------------------------------------------------------

def test_scoring_counts_the_secret_cup_cards_at_their_river_slot():
    state = two_destructions(cups=(["black", "purple"], ["orange", "orange"]))
    play(state, "take green", "take black", "take purple", "take orange", "take yellow")
    # Seat 0: river black(1) orange(2) red(3) green(4) purple(5) yellow(6); cup: the secret
    # black (1) and purple (5), and a yellow taken face up (6).
    # Seat 1: river green(1) purple(2) black(3) orange(4); cup: two secret oranges (4 each).
    assert state.scores() == [1 + 5 + 6, 8]
    assert state.ranks() == [1, 2]
    assert "12 points" in state.render_result()


def test_a_cup_card_of_a_colour_not_in_the_river_scores_nothing_and_ties_go_to_the_smaller_cup():
    # Mandala 0 holds black x2 on the mountain; seat 0 takes black (river + 1 cup card), seat 1
    # takes yellow (river only). Then it cannot be refilled: the game ends.
    state = start(hands=[ALL_SIX, ALL_SIX], mountains=(["black", "black"], ["black", "green"]),
                  cups=(["orange", "purple"], ["green", "yellow"]))
    burn_deck(state, 4)
    play(state, "field 0 orange 1", "field 0 purple 1", "field 0 red 1", "mountain 0 yellow",
         "field 0 green 1")
    assert obs(state)["to_move"] == 0 and state.legal_moves() == ["take black", "take yellow"]
    play(state, "take black", "take yellow")
    assert state.is_over() and obs(state)["end"] == "refill"
    assert obs(state)["mandalas"][0]["fields"] == [{"cards": []}, {"cards": []}], \
        "the fields were discarded before the failed refill"
    # Seat 0: black 1x1; its secret orange and purple score 0. Seat 1: secret yellow 1x1,
    # its secret green scores 0. Equal scores: seat 1 has 2 cup cards against 3 and wins.
    assert state.scores() == [1, 1]
    assert [p["cup_size"] for p in obs(state)["players"]] == [3, 2]
    assert state.ranks() == [2, 1]


# -- notation and observation -------------------------------------------------------------------

@pytest.mark.parametrize("slip", ["field 0 red 0", "field 2 red 1", "field 0 blue 1",
                                  "mountain 0 red 1", "discard red", "Discard red 1",
                                  "discard  red 1", "take", "pass ", "field 0 red 01",
                                  "", None, ["pass"]])
def test_a_move_in_bad_notation_is_an_illegal_move(slip):
    state = start(hands=[["red"] * 6, ALL_SIX])
    with pytest.raises(IllegalMoveError):
        state.apply(slip)
    assert obs(state)["hand"] == ["red"] * 6


def test_take_is_refused_outside_a_destruction_and_turn_actions_during_one():
    state = start(hands=[ALL_SIX, ALL_SIX])
    with pytest.raises(IllegalMoveError, match="destroyed"):
        state.apply("take black")
    play(state, "mountain 1 orange", "mountain 1 purple", "mountain 1 red", "mountain 1 yellow")
    with pytest.raises(IllegalMoveError, match="must take"):
        state.apply("discard black 1")
    play(state, "take black")
    with pytest.raises(IllegalMoveError, match="no black card"):
        state.apply("take black")


def test_the_observation_shows_the_own_hand_and_only_sizes_of_the_rest():
    state = start(hands=[["red"] * 6, ALL_SIX], cups=(["black", "black"], ["green", "green"]))
    mine, theirs = obs(state, 0), obs(state, 1)
    assert mine["hand"] == ["red"] * 6 and theirs["hand"] == ALL_SIX
    assert mine["players"] == theirs["players"] == [
        {"river": [], "hand_size": 6, "cup_size": 2, "cup_taken": []}] * 2
    assert {key: value for key, value in mine.items() if key not in ("seat", "hand")} == \
        {key: value for key, value in theirs.items() if key not in ("seat", "hand")}
    assert "black" not in str(mine["players"]) and "green" not in str(mine["players"])
