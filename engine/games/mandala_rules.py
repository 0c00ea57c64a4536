"""The rules' numbers and words for `mandala`: colours, the setup's layout, every move
string, piles packed as ints, the legal-move pieces hands share, reading, checking and
dealing a setup, and the cards an observation does not show (see engine/games/mandala.py)."""
from __future__ import annotations

import functools
import random
from typing import Any, Mapping

from engine.core import InvalidSetupError
from engine.shuffle import shuffle

COLOURS = ("black", "green", "orange", "purple", "red", "yellow")
"""Colour names, alphabetical: a colour's index in this tuple is its code everywhere below."""
INDEX = {name: c for c, name in enumerate(COLOURS)}
CARDS_PER_COLOUR = 18
HAND_LIMIT = 8          # a mountain action's draw stops at 8 cards in hand
MOUNTAIN_DRAW = 3       # ...or after 3 cards drawn
RIVER_SLOTS = 6
SIX = range(6)
MANDALAS = (0, 1)

# How a setup is laid out: key -> cards in each of its 2 piles; the deck holds the rest.
CUP_CARDS = 2           # secret cards dealt into each cup
SETUP_PILES = {"cups": CUP_CARDS, "hands": 6, "mountains": 2}
DECK_SIZE = 6 * CARDS_PER_COLOUR - 2 * sum(SETUP_PILES.values())

# Every move string, built once. Because colours are alphabetical and legal counts stay below
# 10 (a hand holds at most 8), generating moves in the nested order kind / mandala / colour /
# count yields a list that is already in code-point order, so legal_moves never sorts.
# Counts go up to the whole deck so that `discard red 12` parses and is refused for what it
# is (too many cards), not as bad notation.
COUNTS = range(1, 6 * CARDS_PER_COLOUR + 1)
DISCARD = [[f"discard {name} {n}" for n in COUNTS] for name in COLOURS]
FIELD = [[[f"field {m} {name} {n}" for n in COUNTS] for name in COLOURS] for m in MANDALAS]
MOUNTAIN = [[f"mountain {m} {name}" for name in COLOURS] for m in MANDALAS]
TAKE = [f"take {name}" for name in COLOURS]
PASS = "pass"

# Piles in play are ints, so that moving cards is one addition and a hand is a table index
# as it stands. A hand (at most 8 cards) keeps its size in bits 0-3 and colour c's count in
# the 4 bits from HAND_SHIFT[c]; any other pile (mountain, field, discard, cards taken into a
# cup) colour c's count in the 5 bits from PILE_SHIFT[c] (a colour has 18 cards). Both stay
# below 2**30, the ints CPython computes with fastest.
HAND_SHIFT = tuple(4 + 4 * c for c in SIX)
HAND_UNIT = tuple(1 | 1 << 4 + 4 * c for c in SIX)     # one card of colour c, in a hand
PILE_SHIFT = tuple(5 * c for c in SIX)
PILE_UNIT = tuple(1 << 5 * c for c in SIX)             # ...in any other pile

# Legal-move pieces. Colour sets are 6-bit masks (bit c = colour c).
ALL_COLOURS = 0b111111
BITS = [tuple(c for c in SIX if mask >> c & 1) for mask in range(64)]   # mask -> colours
_MOUNTAIN_BY_MASK = [[[MOUNTAIN[m][c] for c in BITS[mask]] for mask in range(64)]
                     for m in MANDALAS]
MOUNTAINS = [[[_MOUNTAIN_BY_MASK[m][held & ~refused] for refused in range(64)]
              for held in range(64)] for m in MANDALAS]
"""[M][colours held][colours refused on M's mountain] -> the mountain moves on M."""

# A hand's pieces are read from its halves, colours 0-2 (`hand >> 4 & 4095`) and 3-5
# (`hand >> 16`): 12 bits each, three 4-bit counts. Each piece is made once, when first
# needed, and shared by every hand that has it.
Table = list[list[str]]
HandFacts = tuple[list[str], Table, Table, Table, Table, Table, Table]
_MOVE_LISTS: dict[tuple[str, ...], list[str]] = {}
_HALVES: dict[tuple[int, int], tuple[list[str], int]] = {}
_FIELD_TABLES: dict[tuple[int, int, int], Table] = {}


def _moves(moves: list[str]) -> list[str]:
    """The one list of these moves. Hands share their pieces, so all 3003 hands take a
    few hundred kilobytes that a playout finds in the processor's cache (a table per hand
    took megabytes, and the cache misses cost more than the work)."""
    return _MOVE_LISTS.setdefault(tuple(moves), moves)


def _colours(half: int, code: int) -> list[tuple[int, int]]:
    """(colour, count) of the three colours of a half."""
    return [(3 * half + k, code >> 4 * k & 15) for k in range(3)]


def _half(half: int, code: int) -> tuple[list[str], int]:
    """A half's discard moves and the mask of its colours."""
    facts = _HALVES.get((half, code))
    if facts is None:
        colours = _colours(half, code)
        facts = _HALVES[half, code] = (
            _moves([move for c, n in colours for move in DISCARD[c][:n]]),
            sum(1 << c for c, n in colours if n))
    return facts


def _field_table(m: int, half: int, code: int) -> Table:
    """Mask of the colours refused on mandala m -> the field moves there of the half's
    colours not refused, 1 to as many cards as the half holds."""
    table = _FIELD_TABLES.get((m, half, code))
    if table is None:
        colours = _colours(half, code)
        by_three = [_moves([move for k, (c, n) in enumerate(colours) if not refused >> k & 1
                            for move in FIELD[m][c][:n]])
                    for refused in range(8)]
        table = _FIELD_TABLES[m, half, code] = [by_three[refused >> 3 * half & 7]
                                                for refused in range(64)]
    return table


def hand_facts(hand: int) -> HandFacts:
    """What a non-empty hand alone decides of the legal moves: its discard moves (one list
    per hand: the one piece it does not share); its field moves (as many cards of each colour
    as it may put there, keeping one in hand) on mandala 0 in colours 0-2, 3-5, then on
    mandala 1 in colours 0-2, 3-5; and its mountain moves on mandala 0, then 1: each of the
    last six as a table from the mask of the colours the rule of colour refuses there to the
    moves."""
    discards_low, held_low = _half(0, hand >> 4 & 4095)
    discards_high, held_high = _half(1, hand >> 16)
    held = held_low | held_high
    if not held & (held - 1):
        # A hand of one colour keeps a card of it: its field moves are those of one card less.
        hand -= HAND_UNIT[BITS[held][0]]
    low, high = hand >> 4 & 4095, hand >> 16
    return (discards_low + discards_high, _field_table(0, 0, low), _field_table(0, 1, high),
            _field_table(1, 0, low), _field_table(1, 1, high), MOUNTAINS[0][held],
            MOUNTAINS[1][held])


TAKE_BY_MASK = [[TAKE[c] for c in BITS[mask]] for mask in range(64)]


def pack_hand(counts: list[int]) -> int:
    """Six colour counts as a hand."""
    return sum(n * HAND_UNIT[c] for c, n in enumerate(counts))


def pack_pile(counts: list[int]) -> int:
    """Six colour counts as any other pile."""
    return sum(n * PILE_UNIT[c] for c, n in enumerate(counts))


def hand_counts(hand: int) -> list[int]:
    """A hand as its six colour counts."""
    return [hand >> shift & 15 for shift in HAND_SHIFT]


def pile_counts(pile: int) -> list[int]:
    """Any other pile as its six colour counts."""
    return [pile >> shift & 31 for shift in PILE_SHIFT]


NOTATION_HELP = ("expected 'mountain M COLOUR', 'field M COLOUR N', 'discard COLOUR N', "
                  "'take COLOUR' or 'pass' with M 0 or 1, N a count and COLOUR one of "
                  + " ".join(COLOURS))

# Why a game ended (observation field `end`).
END_RIVER = "river"      # a sixth colour reached a river
END_REFILL = "refill"    # a destroyed mandala could not be refilled with 2 cards
END_PASSES = "passes"    # two passes in a row


def unseen_colours(observation: Mapping[str, Any]) -> list[int]:
    """Per colour, the cards a seat's observation does not show: every card it ever saw is
    still in sight (its hand, the mandalas, the rivers, the cup cards taken, the discard)."""
    unseen = [CARDS_PER_COLOUR] * 6
    seen = list(observation["hand"]) + list(observation["discard"])
    for mandala in observation["mandalas"]:
        seen += mandala["mountain"]
        for field in mandala["fields"]:
            seen += field["cards"]
    for player in observation["players"]:
        seen += player["river"] + player["cup_taken"]
    for name in seen:
        unseen[INDEX[name]] -= 1
    return unseen


def card_names(counts: list[int]) -> list[str]:
    """Colour counts as a sorted list of colour names."""
    cards: list[str] = []
    for name, count in zip(COLOURS, counts):
        if count:
            cards += [name] * count
    return cards


def hand_names(hand: int) -> list[str]:
    """A hand as a sorted list of colour names (a fresh list: the caller may change it)."""
    return list(_hand_names(hand))


def pile_names(pile: int) -> list[str]:
    """Any other pile as a sorted list of colour names (a fresh list)."""
    return list(_pile_names(pile))


def pile_size(pile: int) -> int:
    """How many cards any other pile holds."""
    return len(_pile_names(pile))


# Observations name the same few piles again and again: each packed pile's names are worked
# out once (an observation: 30.8 -> 11.0 µs). Bounded, for a long-running arena.
@functools.lru_cache(maxsize=1 << 14)
def _hand_names(hand: int) -> tuple[str, ...]:
    return tuple(card_names(hand_counts(hand)))


@functools.lru_cache(maxsize=1 << 14)
def _pile_names(pile: int) -> tuple[str, ...]:
    return tuple(card_names(pile_counts(pile)))


FULL_DECK = [c for c in SIX for _ in range(CARDS_PER_COLOUR)]     # sorted, as before a deal
FULL_DECK_UNITS = [HAND_UNIT[c] for c in FULL_DECK]                # the same as hands of one
DEALT = 2 * sum(SETUP_PILES.values())   # cards dealt before the deck: cups, hands, mountains
CARD_OF_UNIT = {HAND_UNIT[c]: c for c in SIX}
"""A card as a hand of one (HAND_UNIT) -> its colour code."""
PAIRS = {HAND_UNIT[a] + HAND_UNIT[b]: (PILE_UNIT[a] + PILE_UNIT[b], 1 << a | 1 << b)
         for a in SIX for b in SIX}
"""Two cards as a hand -> the same cards as another pile, and the mask of their colours: a
mountain as it is dealt or refilled."""


def deal_cards(rng: random.Random, cards: list[Any] = FULL_DECK) -> list[Any]:
    """The cards of a sorted deck (codes, or any one value per code) shuffled: the deal in
    dealing order (see layout). Every deck of 108 draws the same numbers: only the length
    counts, so a seed deals the same colours whatever stands for them."""
    dealt = cards[:]
    shuffle(dealt, rng)
    return dealt


def layout(cards: list[int]) -> tuple[dict[str, list[list[int]]], list[int]]:
    """A deal in dealing order (the rules' order: cups, hands, mountains 0 and 1, each pile
    of seat or mandala 0 before 1; then the deck, top first) -> its piles and deck."""
    return ({"cups": [cards[0:2], cards[2:4]], "hands": [cards[4:10], cards[10:16]],
             "mountains": [cards[16:18], cards[18:20]]}, cards[DEALT:])


def dealing_order(piles: Mapping[str, list[list[int]]], deck: list[int]) -> list[int]:
    """Piles and deck -> the cards in dealing order (the inverse of layout)."""
    return [c for key in SETUP_PILES for pile in piles[key] for c in pile] + deck


def setup_names(piles: Mapping[str, list[list[int]]], deck: list[int]) -> dict[str, Any]:
    """A deal in the setup form of docs/notation.md (colour names, piles sorted; codes sort
    like the names they stand for, colours being alphabetical)."""
    setup: dict[str, Any] = {key: [[COLOURS[c] for c in sorted(pile)] for pile in piles[key]]
                             for key in SETUP_PILES}
    setup["deck"] = [COLOURS[c] for c in deck]
    return setup


def read_setup(setup: Mapping[str, Any]) -> tuple[dict[str, list[list[int]]], list[int]]:
    """The setup as colour codes, after checking it is a legal deal; InvalidSetupError if not."""
    if not isinstance(setup, Mapping):
        raise InvalidSetupError("mandala setup must be a JSON object with keys "
                                "cups, hands, mountains and deck")
    wanted = set(SETUP_PILES) | {"deck"}
    if set(setup) != wanted:
        missing = ", ".join(sorted(wanted - set(setup))) or "none"
        extra = ", ".join(sorted(map(str, set(setup) - wanted))) or "none"
        raise InvalidSetupError(f"mandala setup must have exactly the keys cups, hands, "
                                f"mountains and deck (missing: {missing}; unknown: {extra})")

    def codes(where: str, cards: Any, size: int, must_sort: bool) -> list[int]:
        if not isinstance(cards, list) or len(cards) != size:
            raise InvalidSetupError(f"setup {where} must be a list of {size} colours")
        for card in cards:
            if not isinstance(card, str) or card not in INDEX:
                raise InvalidSetupError(f"setup {where} holds {card!r}, which is not a colour "
                                        f"(colours: {' '.join(COLOURS)})")
        if must_sort and cards != sorted(cards):
            raise InvalidSetupError(f"setup {where} must be sorted alphabetically")
        return [INDEX[card] for card in cards]

    piles: dict[str, list[list[int]]] = {}
    for key, size in SETUP_PILES.items():
        value = setup[key]
        if not isinstance(value, list) or len(value) != 2:
            raise InvalidSetupError(f"setup {key} must be a list of 2 lists (one per "
                                    f"{'mandala' if key == 'mountains' else 'seat'})")
        piles[key] = [codes(f"{key}[{i}]", value[i], size, True) for i in range(2)]
    deck = codes("deck", setup["deck"], DECK_SIZE, False)

    every_card = deck + [c for pair in piles.values() for pile in pair for c in pile]
    for c in SIX:
        if every_card.count(c) != CARDS_PER_COLOUR:
            raise InvalidSetupError(
                f"setup holds {every_card.count(c)} {COLOURS[c]} cards; a mandala deal holds "
                f"exactly {CARDS_PER_COLOUR} of each colour")
    return piles, deck


def colour_mask(counts: list[int]) -> int:
    return sum(1 << c for c in SIX if counts[c])


def colour_counts(codes: list[int]) -> list[int]:
    counts = [0] * 6
    for c in codes:
        counts[c] += 1
    return counts
