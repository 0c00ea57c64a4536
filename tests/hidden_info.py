"""What each seat may see, declared per game: for a game's state after some moves, another
deal (and chance outcomes) that differs only in what one seat cannot see then.

The conformance suite (test_no_seat_sees_what_is_hidden_from_it) replays both and checks that
the seat's observation is the same at every ply, for every game: a game registered without a
declaration here fails that test. `VARIANTS[game_id](states, moves, observer, rng)` returns
`(setup, moves)`; `states` are the states along `moves` (first and last included).
"""
from __future__ import annotations

import random
from collections import Counter

from engine.games.flowers import SECRET_PILE
from engine.games.flowers_mandala import COLOURS as FM_COLOURS


# -- mandala: secret cups, the undrawn deck, the opponent's hand -----------------------------

def mandala_variant(states, moves, observer: int, rng: random.Random):
    setup = states[0].setup
    entries = []   # (mover, move, deck cards it used, whether they went to the mover's hand)
    for before, after, move in zip(states, states[1:], moves):
        drawn = before.observation(0)["deck_size"] - after.observation(0)["deck_size"]
        entries.append((before.to_move(), move, drawn, not move.startswith("take")))
    final_hand = states[-1].observation(1 - observer)["hand"]
    places = _mandala_hidden_from(observer, setup, entries, final_hand)
    colours = [_card_at(setup, place) for place in places]
    rng.shuffle(colours)
    other_setup = {key: [list(pile) for pile in piles] if key != "deck" else list(piles)
                   for key, piles in setup.items()}
    for place, colour in zip(places, colours):
        if place[0] == "deck":
            other_setup["deck"][place[1]] = colour
        else:
            other_setup[place[0]][place[1]][place[2]] = colour
    for key in ("cups", "hands"):
        other_setup[key] = [sorted(pile) for pile in other_setup[key]]
    return other_setup, list(moves)


def _mandala_hidden_from(seat: int, setup: dict, moves: list[tuple[int, str, int]],
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
    for mover, _move, drawn, to_hand in moves:
        if mover == other and to_hand:
            received += [("deck", top + k) for k in range(drawn)]
        top += drawn
    places += [("deck", k) for k in range(top, len(setup["deck"]))]
    # Of each colour, the cards kept to the end are (say) the last ones received: any choice
    # works, as cards of one colour are alike.
    kept = Counter(final_hand)
    for place in reversed(received):
        colour = _card_at(setup, place)
        if kept[colour]:
            kept[colour] -= 1
            places.append(place)
    return places


def _card_at(setup: dict, place: tuple) -> str:
    if place[0] == "deck":
        return setup["deck"][place[1]]
    return setup[place[0]][place[1]][place[2]]



# -- flowers: the piles below their tops, a card drawn from the secret pile ------------------

def flowers_variant(states, moves, observer: int, rng: random.Random):
    setup = states[0].setup
    drawn = [0, 0, 0]
    for move in moves:
        if move.startswith("draw"):
            drawn[int(move[-1])] += 1
    hidden = _flowers_hidden_positions(setup, drawn, states[-1], observer)
    cards = [setup["piles"][pile][index] for pile, index in hidden]
    rng.shuffle(cards)
    other = {"gardens": list(setup["gardens"]), "piles": [list(pile) for pile in setup["piles"]]}
    for (pile, index), card in zip(hidden, cards):
        other["piles"][pile][index] = card
    return other, list(moves)


def _flowers_hidden_positions(setup: dict, drawn: list[int], state,
                              seat: int) -> list[tuple[int, int]]:
    """(pile, index) of every setup card that `seat` has not seen at this point.

    A pile's cards below its top are secret (pile 2: all of it); the card in hand is secret
    to others when it came from pile 2.
    """
    hidden = []
    for pile, cards in enumerate(setup["piles"]):
        first_unseen = drawn[pile] + (0 if pile == SECRET_PILE else 1)
        hidden += [(pile, index) for index in range(first_unseen, len(cards))]
    if state.held_from == SECRET_PILE and state.to_move() != seat:
        hidden.append((SECRET_PILE, drawn[SECRET_PILE] - 1))
    return hidden



# -- flowers-mandala: the undrawn deck, the tile stacks, other hands --------------------------

def flowers_mandala_variant(states, moves, observer: int, rng: random.Random):
    return _flowers_mandala_variant(states[0].setup, list(moves), states, observer, rng)


def _fm_spare_colours(states, moves, seat):
    """Colours `seat` held at least one card of beyond its needs at every ply of `moves`:
    with one card fewer of such a colour all its moves stay legal."""
    spare = set(FM_COLOURS)
    for state, move in zip(states, moves + [None]):
        hand = state.hands[seat]
        needed = Counter()
        if move and move.startswith("play ") and state.to_move() == seat:
            needed[move.split(" ")[2]] = int(move.split(" ")[3])
        spare = {c for c in spare if hand[FM_COLOURS.index(c)] - needed[c] >= 1}
    return spare


def _flowers_mandala_variant(setup, moves, states, observer, rng):
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
    spare = _fm_spare_colours(states, moves, seat)
    free = [i for i, card in enumerate(hand) if card in spare]
    # Cards that may take its place: undrawn cards of the dealt deck (a reshuffled deck is
    # the discard pile: its cards are fixed), and spare cards of a third seat's hand.
    partners = [] if reshuffles else [(deck, i) for i in range(deck_cut, len(deck))]
    for other in others:
        if other != seat:
            spare = _fm_spare_colours(states, moves, other)
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



VARIANTS = {"mandala": mandala_variant, "flowers": flowers_variant,
            "flowers-mandala": flowers_mandala_variant}
