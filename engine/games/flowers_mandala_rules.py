"""The rules' numbers and words for `flowers-mandala`: colours, phases, tiles and their points,
cards as colour counts, and the ready-made move lists (see engine/games/flowers_mandala.py)."""
from __future__ import annotations

from engine.core import IllegalMoveError, InvalidOptionError

COLOURS = ("green", "grey", "orange", "purple", "red", "yellow")
"""Card and tile colours in alphabetical order; a colour's index stands for it internally."""
COLOUR_INDEX = {name: index for index, name in enumerate(COLOURS)}
COLOUR_CODES = range(len(COLOURS))
DARK_COLOURS = ("grey", "purple", "red")
LIGHT_COLOURS = ("green", "orange", "yellow")
MANDALAS = 3
ALL_COLOURS = (1 << len(COLOURS)) - 1
"""Bit mask of a complete mandala: one bit per colour present."""
HAND_LIMIT = 8
"""up-to-4: no draw while holding this many cards, and drawing stops on reaching it."""
UP_TO_4_DRAWS = 4
TWO_DRAWS = 2
FLOWERS_TO_END = 3
X3 = "x3"
MAX_TILE_VALUE = 99   # keeps every score well inside the observation's int32 fields

# Phases: who decides next. A pending decision is always exactly one of these.
PLAY = "play"      # the seat whose turn it is plays or passes
DECK = "deck"      # chance: a reshuffle in the middle of a draw
TILE = "tile"      # the claim holder of the mandala being destroyed picks a tile
ORDER = "order"    # chance: the order of the end-of-game destructions
OVER = "over"

NO_SEAT = -1


# -- move strings -------------------------------------------------------------------------
# PLAY_LISTS[m][c][k] lists the moves "play m COLOUR n" for n = 1..k in code-point order, so a
# legal-move list is a concatenation of ready lists that comes out already sorted (mandala
# digits and colour names sort the same way as the indices; "pass" stands alone).
PLAY_LISTS: list[list[list[list[str]]]] = [[[[]] for _ in COLOURS] for _ in range(MANDALAS)]
PLAY_MOVES: dict[str, tuple[int, int, int]] = {}
"""Every play string built so far -> (mandala, colour index, count)."""


def extend_play_lists(mandala: int, colour: int, k: int) -> list[str]:
    """Grows PLAY_LISTS[mandala][colour] to k cards if needed; returns its list for k."""
    row = PLAY_LISTS[mandala][colour]
    while len(row) <= k:
        n = len(row)
        move = f"play {mandala} {COLOURS[colour]} {n}"
        PLAY_MOVES[move] = (mandala, colour, n)
        row.append(sorted(row[-1] + [move]))
    return row[k]


for _m in range(MANDALAS):
    for _c in range(len(COLOURS)):
        extend_play_lists(_m, _c, 20)


def parse_play(move: str) -> tuple[int, int, int]:
    """(mandala, colour, count) of a `play M COLOUR N` string; IllegalMoveError if malformed."""
    known = PLAY_MOVES.get(move)
    if known is not None:
        return known
    parts = move.split(" ")
    if (len(parts) != 4 or parts[0] != "play" or parts[1] not in ("0", "1", "2")
            or parts[2] not in COLOUR_INDEX or not is_canonical_int(parts[3])
            or parts[3] == "0"):
        raise IllegalMoveError(move, "not a move: expected 'play M COLOUR N' (M 0-2, a colour of "
                               f"{' '.join(COLOURS)}, N >= 1) or 'pass'")
    return int(parts[1]), COLOUR_INDEX[parts[2]], int(parts[3])


def is_canonical_int(text: str) -> bool:
    return text.isdigit() and text.isascii() and (text == "0" or not text.startswith("0"))


# -- tiles --------------------------------------------------------------------------------
def tile_colour(tile: str) -> str:
    return tile.partition(":")[0]


def tile_value(tile: str) -> int | None:
    """The flowers a tile shows, None for an `x3` tile."""
    value = tile.partition(":")[2]
    return None if value == X3 else int(value)


def single_points(tile: str) -> int:
    """An unpaired tile scores its value; an unpaired x3 scores 0."""
    return tile_value(tile) or 0


def flower_points(first: str, second: str) -> int:
    """x3 with a value: 3 x that value; two x3: 0; else 2 x the lower + the higher."""
    a, b = tile_value(first), tile_value(second)
    if a is None:
        return 0 if b is None else 3 * b
    if b is None:
        return 3 * a
    return 2 * min(a, b) + max(a, b)


def parse_tile_values(text: str) -> list[str]:
    """The six tile values of the option `tile_values`; InvalidOptionError if malformed."""
    values = text.split(" ")
    if len(values) != 6 or not all(v == X3 or (is_canonical_int(v) and int(v) <= MAX_TILE_VALUE)
                                   for v in values):
        raise InvalidOptionError(
            f"option tile_values must be six values separated by single spaces, each an "
            f"integer 0 to {MAX_TILE_VALUE} or x3 (like '1 1 2 2 3 x3'), got {text!r}")
    return values


def all_tiles(colours: tuple[str, ...], values: list[str]) -> list[str]:
    return [f"{colour}:{value}" for colour in colours for value in values]


def colour_bits(tiles: list[str]) -> int:
    bits = 0
    for tile in tiles:
        bits |= 1 << COLOUR_INDEX[tile.partition(":")[0]]     # tile_colour(tile)
    return bits


def card_list(counts: list[int]) -> list[str]:
    """Colour counts as a sorted list of card names."""
    cards: list[str] = []
    for name, count in zip(COLOURS, counts):
        cards += [name] * count
    return cards


def card_text(counts: list[int]) -> str:
    """Colour counts as `green 2 red 1` (empty string for no cards)."""
    return " ".join(f"{COLOURS[c]} {counts[c]}" for c in range(len(COLOURS)) if counts[c])
