"""Flowers: A Mandala Game (`flowers-mandala`), 2 to 4 players (docs/rules/flowers-mandala.md).

Players play cards of one colour onto one of three mandalas. A colour new to the mandala goes
face up, a present colour face down; the player with strictly the most cards there (and at
least one face up) holds its claim marker. When the two centre tiles and the cards on a
mandala show all six colours it is destroyed: the claim holder chooses one of its two
half-flower tiles, the second player (most cards among the other players with a face-up
card, ties to more face-up cards) gets the other one, or the holder takes both. Two tiles of
one colour pair at once into a flower. The game ends at the end of the turn in which someone
completes a third flower, when a tile stack runs out, or when every player passes in a row;
the remaining mandalas are then destroyed in a random order and the tiles are scored.

Players: 2 to 4; seat 0 starts; turns go by seat order.

Options (see the rules file; every number Arena chose is an option):
    draw_rule         `up-to-4` (default): playing exactly one card draws until 4 drawn or 8
                      held, nothing at 8+; `two`: playing exactly one card draws 2.
    hand_size         cards dealt to each seat (6); players x hand_size must fit the deck.
    cards_per_colour  cards of each of the six colours (18).
    tile_values       the six values of each colour's tiles, one string (`1 1 2 2 3 x3`):
                      canonical integers 0 to 99, or `x3`.

Colours: dark `grey purple red`, light `green orange yellow`. Tiles are written
`COLOUR:VALUE` (`grey:2`, `red:x3`).

Moves (docs/notation.md notation):
    play M COLOUR N   play N >= 1 cards of COLOUR onto mandala M (0, 1 or 2). N >= 2 may not
                      empty the hand; a single last card may always be played.
    pass              only when the seat to move holds no card.
    tile dark|light   the claim holder of the mandala being destroyed keeps that tile (the
                      other goes to the second player). It is that seat's decision even when
                      it is not its turn: `to_move()` returns the holder.
    deck C1 C2 ...    chance: the discard pile reshuffled into a new deck, top card first.
    order A B [C]     chance: the order of the end-of-game destructions.

Chance nodes (`to_move()` is CHANCE; `sample_chance(rng)` draws the outcome):
    `order`: `legal_moves()` lists every ordering of the mandalas still to destroy (sorted).
    `deck`: the orderings of the discard pile are too many to list, so `legal_moves()`
    returns [] there and `apply` accepts exactly `deck` followed by some ordering of the
    discard pile's cards as it is at that moment; anything else is an IllegalMoveError.

Readings of the rules file made here: when a third flower ends the game while the stacks
still hold tiles, step 6 has already put new tiles on the destroyed mandala; they stay there
unscored and only the other two mandalas are destroyed (`order A B`). A destruction at the
game's end puts no new tiles on its mandala. In two-player games the opponent of a holder
who completes a mandala can never hold half its cards (a face-up player with more cards
than the holder would have taken the claim), so that holder always takes both tiles.

Observation (proto `FlowersMandalaObservation`, proto/arena/v1/flowers_mandala.proto): the
seat's own hand; for every seat its hand size, the cards everyone knows it holds (cards
taken back from a mandala and not since played), its tiles, flowers and points; every
mandala with its tiles, claim holder and each seat's face-up and face-down cards; deck,
discard pile (contents), tile-stack sizes, tiles that left the game; whose turn it is and
which decision is pending. Never the deck order, the tile stacks' order or another hand.

Version: flowers-mandala/1 (rules file docs/rules/flowers-mandala.md, 2026-11).
"""
from __future__ import annotations

import random
from collections import Counter
from itertools import permutations
from typing import Any, Mapping, NoReturn, Sequence

from engine.core import (CHANCE, EngineError, Game, GameNotOverError, IllegalMoveError,
                         InvalidOptionError, InvalidSetupError, Option, State, ranks_from_keys)

COLOURS = ("green", "grey", "orange", "purple", "red", "yellow")
"""Card and tile colours in alphabetical order; a colour's index stands for it internally."""
COLOUR_INDEX = {name: index for index, name in enumerate(COLOURS)}
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


def _extend_play_lists(mandala: int, colour: int, k: int) -> list[str]:
    row = PLAY_LISTS[mandala][colour]
    while len(row) <= k:
        n = len(row)
        move = f"play {mandala} {COLOURS[colour]} {n}"
        PLAY_MOVES[move] = (mandala, colour, n)
        row.append(sorted(row[-1] + [move]))
    return row[k]


for _m in range(MANDALAS):
    for _c in range(len(COLOURS)):
        _extend_play_lists(_m, _c, 20)


PLAYS_BY_HAND: dict[tuple[int, ...], tuple[str, ...]] = {}
"""Colour counts of a hand -> its legal plays; the same hands come back all the time."""
PLAYS_BY_HAND_LIMIT = 200_000


def _plays_for_hand(counts: tuple[int, ...]) -> tuple[str, ...]:
    """The sorted legal plays of a non-empty hand with these colour counts (and caches them)."""
    total = sum(counts)
    if total >= 2 and total in counts:
        # A one-colour hand of 2+ cards: playing all of it would empty the hand.
        counts_allowed = [k - 1 if k == total else k for k in counts]
    else:
        counts_allowed = list(counts)
    moves: list[str] = []
    for mandala in range(MANDALAS):
        rows = PLAY_LISTS[mandala]
        for colour, k in enumerate(counts_allowed):
            if k:
                row = rows[colour]
                moves += row[k] if k < len(row) else _extend_play_lists(mandala, colour, k)
    if len(PLAYS_BY_HAND) >= PLAYS_BY_HAND_LIMIT:
        PLAYS_BY_HAND.clear()
    PLAYS_BY_HAND[counts] = result = tuple(moves)
    return result


def _parse_play(move: str) -> tuple[int, int, int]:
    """(mandala, colour, count) of a `play M COLOUR N` string; IllegalMoveError if malformed."""
    known = PLAY_MOVES.get(move)
    if known is not None:
        return known
    parts = move.split(" ")
    if (len(parts) != 4 or parts[0] != "play" or parts[1] not in ("0", "1", "2")
            or parts[2] not in COLOUR_INDEX or not _is_canonical_int(parts[3])
            or parts[3] == "0"):
        raise IllegalMoveError(move, "not a move: expected 'play M COLOUR N' (M 0-2, a colour of "
                               f"{' '.join(COLOURS)}, N >= 1) or 'pass'")
    return int(parts[1]), COLOUR_INDEX[parts[2]], int(parts[3])


def _is_canonical_int(text: str) -> bool:
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
    if len(values) != 6 or not all(v == X3 or (_is_canonical_int(v) and int(v) <= MAX_TILE_VALUE)
                                   for v in values):
        raise InvalidOptionError(
            f"option tile_values must be six values separated by single spaces, each an "
            f"integer 0 to {MAX_TILE_VALUE} or x3 (like '1 1 2 2 3 x3'), got {text!r}")
    return values


def _all_tiles(colours: tuple[str, ...], values: list[str]) -> list[str]:
    return [f"{colour}:{value}" for colour in colours for value in values]


class FlowersMandala(Game):
    id = "flowers-mandala"
    title = "Flowers: A Mandala Game"
    min_players = 2
    max_players = 4
    has_chance = True
    options = (
        Option("draw_rule", "str", "up-to-4",
               "after playing exactly one card: up-to-4 draws until 4 drawn or 8 held; "
               "two draws 2", ("up-to-4", "two")),
        Option("hand_size", "int", 6, "cards dealt to each player"),
        Option("cards_per_colour", "int", 18, "cards of each of the six colours"),
        Option("tile_values", "str", "1 1 2 2 3 x3",
               "the six values of each colour's tiles (integers or x3)"),
    )

    def max_plies(self, players: int, options: Mapping[str, Any]) -> int:
        # Tiles bound the destructions: each stack holds 3 colours x 6 tiles, 3 of them are
        # placed at the start and each destruction in play places one more, so the 16th ends
        # the game; 2 more come at the end. Between two destructions no card leaves a mandala
        # and every play puts at least one there: at most a deck's worth of plays per period.
        # Each play brings at most one reshuffle (chance) and players - 1 passes before it
        # (all pass: the game ends); each destruction one tile choice; the end one `order`.
        tiles_per_stack = len(DARK_COLOURS) * len(parse_tile_values(options["tile_values"]))
        in_play = tiles_per_stack - MANDALAS + 1
        per_colour: int = options["cards_per_colour"]
        plays = in_play * per_colour * len(COLOURS)
        return plays * (players + 1) + players + (in_play + MANDALAS - 1) + 1

    def check_options(self, options: dict[str, Any], players: int) -> None:
        parse_tile_values(options["tile_values"])
        per_colour = options["cards_per_colour"]
        if not 1 <= per_colour <= 999:
            raise InvalidOptionError(
                f"option cards_per_colour must be 1 to 999, got {per_colour}")
        hand_size = options["hand_size"]
        deck = per_colour * len(COLOURS)
        if hand_size < 1 or players * hand_size > deck:
            raise InvalidOptionError(
                f"option hand_size must be 1 to {deck // players} for {players} players with "
                f"{deck} cards (cards_per_colour {per_colour}), got {hand_size}")

    def deal(self, players: int, options: dict[str, Any],
             rng: random.Random) -> dict[str, Any]:
        cards = [colour for colour in COLOURS for _ in range(options["cards_per_colour"])]
        rng.shuffle(cards)
        size = options["hand_size"]
        hands = [sorted(cards[seat * size:(seat + 1) * size]) for seat in range(players)]
        values = parse_tile_values(options["tile_values"])
        dark = _all_tiles(DARK_COLOURS, values)
        light = _all_tiles(LIGHT_COLOURS, values)
        rng.shuffle(dark)
        rng.shuffle(light)
        return {"hands": hands, "deck": cards[players * size:],
                "centres": [[dark[m], light[m]] for m in range(MANDALAS)],
                "dark": dark[MANDALAS:], "light": light[MANDALAS:]}

    def start(self, players: int, options: dict[str, Any],
              setup: Mapping[str, Any]) -> "FlowersMandalaState":
        _check_setup(players, options, setup)
        return FlowersMandalaState.from_setup(self, players, options, setup)

    def start_dealt(self, players: int, options: dict[str, Any],
                    rng: random.Random) -> "FlowersMandalaState":
        # Every seeded match starts here: the deal just made is legal, so unlike start it
        # goes to the state unchecked (_check_setup counts every card and tile again).
        return FlowersMandalaState.from_setup(self, players, options,
                                              self.deal(players, options, rng))

    def determinize(self, observation: Mapping[str, Any], seat: int, rng: random.Random, *,
                    options: Mapping[str, Any] | None = None,
                    history: Sequence[Mapping[str, Any]] | None = None
                    ) -> "FlowersMandalaState":
        """See Game.determinize. Unseen: the other hands (beyond the cards known to be in
        them), the deck order and the tile stacks' order; everything played stays in view
        (face-down cards included) until it goes to the discard pile, which is shown.

        Not used: after a reshuffle the seat could know the deck is the discard pile it saw,
        but telling that pile apart from the cards already drawn needs every turn's events,
        which observations between the seat's own decisions do not show; the deck is then
        drawn from all unseen cards alike."""
        players = observation["players"]
        resolved = self.resolve_options(options, players)
        seen = list(observation["hand"]) + list(observation["discard"])
        for other in range(players):
            if other != seat:
                seen += observation["known_hands"][other]["cards"]
        for mandala in observation["mandalas"]:
            for side in mandala["sides"]:
                seen += side["face_up"] + side["face_down"]
        unseen = Counter({colour: resolved["cards_per_colour"] for colour in COLOURS})
        unseen.subtract(seen)
        hidden = [0 if other == seat else observation["hand_sizes"][other]
                  - len(observation["known_hands"][other]["cards"]) for other in range(players)]
        pool = sorted(unseen.elements())
        if min(unseen.values()) < 0 or len(pool) != sum(hidden) + observation["deck_size"]:
            raise InvalidSetupError(
                f"not a flowers-mandala observation: {len(pool)} cards unseen, but hands and "
                f"deck hide {sum(hidden) + observation['deck_size']}")
        rng.shuffle(pool)
        hands = []
        for other in range(players):
            shown = observation["hand"] if other == seat else (
                observation["known_hands"][other]["cards"] + pool[:hidden[other]])
            pool = pool[hidden[other]:]
            hands.append(shown)
        values = parse_tile_values(resolved["tile_values"])
        in_view = [tile for m in observation["mandalas"]
                   for tile in (m["dark_tile"], m["light_tile"]) if tile]
        in_view += observation["left_game"]
        for tableau in observation["tableaus"]:
            in_view += tableau["singles"]
            in_view += [tile for flower in tableau["flowers"] for tile in flower["tiles"]]
        stacks = []
        for colours, size in ((DARK_COLOURS, observation["dark_stack_size"]),
                              (LIGHT_COLOURS, observation["light_stack_size"])):
            left = Counter(_all_tiles(colours, values))
            left.subtract(tile for tile in in_view if tile_colour(tile) in colours)
            tiles = sorted(left.elements())
            if min(left.values()) < 0 or len(tiles) != size:
                raise InvalidSetupError("not a flowers-mandala observation: the tiles in view "
                                        "do not leave the tile stacks' sizes")
            rng.shuffle(tiles)
            stacks.append(tiles)                # top at the end, as the state keeps them
        return FlowersMandalaState.from_view(self, resolved, observation, hands, pool, stacks)


def _check_setup(players: int, options: dict[str, Any], setup: Mapping[str, Any]) -> None:
    """Raises InvalidSetupError unless `setup` is a legal deal under the options."""
    def fail(why: str) -> NoReturn:
        raise InvalidSetupError(f"flowers-mandala setup: {why}")

    def string_list(value: Any, what: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            fail(f"{what} must be a list of strings")
        return value

    if not isinstance(setup, Mapping):
        fail("must be a JSON object with keys centres, dark, deck, hands, light")
    keys = {"hands", "deck", "centres", "dark", "light"}
    if set(setup) != keys:
        missing, extra = sorted(keys - set(setup)), sorted(set(setup) - keys)
        fail(f"keys must be exactly centres, dark, deck, hands, light "
             f"(missing: {', '.join(missing) or 'none'}; unknown: {', '.join(extra) or 'none'})")
    hands = setup["hands"]
    if not isinstance(hands, list) or len(hands) != players:
        fail(f"hands must list one hand per seat ({players})")
    cards: list[str] = []
    for seat, hand in enumerate(hands):
        hand = string_list(hand, f"hand of seat {seat}")
        if len(hand) != options["hand_size"]:
            fail(f"hand of seat {seat} has {len(hand)} cards, hand_size is "
                 f"{options['hand_size']}")
        if hand != sorted(hand):
            fail(f"hand of seat {seat} is not sorted")
        cards += hand
    cards += string_list(setup["deck"], "deck")
    unknown = sorted(set(cards) - set(COLOURS))
    if unknown:
        fail(f"unknown card colour {unknown[0]!r} (colours: {' '.join(COLOURS)})")
    counts = Counter(cards)
    per_colour = options["cards_per_colour"]
    for colour in COLOURS:
        if counts[colour] != per_colour:
            fail(f"hands and deck hold {counts[colour]} {colour} cards, "
                 f"cards_per_colour is {per_colour}")
    centres = setup["centres"]
    if (not isinstance(centres, list) or len(centres) != MANDALAS
            or not all(isinstance(pair, list) and len(pair) == 2 for pair in centres)):
        fail("centres must list a [dark, light] pair of tiles for each of the 3 mandalas")
    values = parse_tile_values(options["tile_values"])
    for shade, colours, index in (("dark", DARK_COLOURS, 0), ("light", LIGHT_COLOURS, 1)):
        stack = string_list(setup[shade], f"{shade} stack")
        centre = string_list([pair[index] for pair in centres], f"{shade} centre tiles")
        wanted = Counter(_all_tiles(colours, values))
        have = Counter(centre + stack)
        if have != wanted:
            extra = sorted((have - wanted).elements())
            missing = sorted((wanted - have).elements())
            fail(f"{shade} tiles (centres and stack) are not the {shade} tiles of the game "
                 f"(unexpected: {' '.join(extra) or 'none'}; "
                 f"missing: {' '.join(missing) or 'none'})")


class FlowersMandalaState(State):
    """A position. Hands and mandala sides are counts per colour index (see COLOURS)."""

    game: FlowersMandala
    # Set by from_setup and from_view (see there for what each holds).
    up_to_4: bool
    hands: list[list[int]]               # [seat][colour]
    hand_totals: list[int]
    known: list[list[int]]               # [seat][colour]: cards everyone knows the seat holds
    deck: list[int]                      # colour codes, top at the end
    discard: list[int]                   # [colour]
    discard_total: int
    dark: list[str]                      # tile stacks, top at the end
    light: list[str]
    centres: list[list[str] | None]      # [mandala]: [dark, light] tiles, None once empty
    present: list[int]                   # [mandala]: mask of colours shown there
    up: list[list[list[int]]]            # [mandala][seat][colour]
    down: list[list[list[int]]]
    cards_on: list[list[int]]            # [mandala][seat]
    up_on: list[list[int]]
    claims: list[int]                    # [mandala]: claim holder or NO_SEAT
    singles: list[list[str]]             # [seat]: unpaired tiles
    flowers: list[list[tuple[str, ...]]]  # [seat]: pairs of tiles
    left_game: list[str]
    turn: int
    active: int
    passes: int
    draw_left: int
    stack_out: bool
    third_flower: bool
    ending: bool
    end_candidates: list[int]
    end_queue: list[int]
    pending: tuple[int, int, int]        # TILE: (mandala, holder, second)
    phase: str
    mover: int | str | None

    @classmethod
    def from_setup(cls, game: FlowersMandala, players: int, options: dict[str, Any],
                   setup: Mapping[str, Any]) -> "FlowersMandalaState":
        state = cls.__new__(cls)
        state.game = game
        state.players = players
        state.options = dict(options)
        state.setup = {key: [list(item) if isinstance(item, list) else item
                             for item in setup[key]] for key in setup}
        state.up_to_4 = options["draw_rule"] == "up-to-4"
        state.hands = []
        for hand in setup["hands"]:
            counts = [0] * len(COLOURS)
            for card in hand:
                counts[COLOUR_INDEX[card]] += 1
            state.hands.append(counts)
        state.hand_totals = [len(hand) for hand in setup["hands"]]
        state.known = [[0] * len(COLOURS) for _ in range(players)]
        state.deck = [COLOUR_INDEX[card] for card in reversed(setup["deck"])]  # top at the end
        state.discard = [0] * len(COLOURS)
        state.discard_total = 0
        state.dark = list(reversed(setup["dark"]))  # top at the end
        state.light = list(reversed(setup["light"]))
        centres: list[list[str]] = [list(pair) for pair in setup["centres"]]
        state.centres = list(centres)
        state.present = [_colour_bits(pair) for pair in centres]
        state.up = [[[0] * len(COLOURS) for _ in range(players)] for _ in range(MANDALAS)]
        state.down = [[[0] * len(COLOURS) for _ in range(players)] for _ in range(MANDALAS)]
        state.cards_on = [[0] * players for _ in range(MANDALAS)]
        state.up_on = [[0] * players for _ in range(MANDALAS)]
        state.claims = [NO_SEAT] * MANDALAS
        state.singles = [[] for _ in range(players)]
        state.flowers = [[] for _ in range(players)]
        state.left_game = []      # tiles of mandalas destroyed with no claim holder
        state.turn = 0
        state.active = NO_SEAT    # the mandala played on this turn
        state.passes = 0          # passes in a row
        state.draw_left = 0       # cards still to draw in this turn's draw step
        state.stack_out = False   # a tile stack ran out: the game ends with this turn
        state.third_flower = False  # somebody has three flowers: the game ends with this turn
        state.ending = False      # end-of-game destructions under way
        state.end_candidates = []  # mandalas the `order` chance move orders
        state.end_queue = []      # mandalas still to destroy at the end, in order
        state.pending = (NO_SEAT, NO_SEAT, NO_SEAT)  # TILE: (mandala, holder, second)
        state.phase = PLAY
        state.mover = 0
        return state

    @classmethod
    def from_view(cls, game: FlowersMandala, options: dict[str, Any], view: Mapping[str, Any],
                  hands: list[list[str]], deck: list[str],
                  stacks: list[list[str]]) -> "FlowersMandalaState":
        """The state an observation shows, with every hand, the deck (top last) and the tile
        stacks (top last) given. Only decisions of a seat are views: no chance is pending."""
        def counts(cards: list[str]) -> list[int]:
            result = [0] * len(COLOURS)
            for card in cards:
                result[COLOUR_INDEX[card]] += 1
            return result

        players = view["players"]
        state = cls.__new__(cls)
        state.game = game
        state.players = players
        state.options = dict(options)
        state.setup = {}                    # a determinised state has no starting deal
        state.up_to_4 = options["draw_rule"] == "up-to-4"
        state.hands = [counts(hand) for hand in hands]
        state.hand_totals = [len(hand) for hand in hands]
        state.known = [counts(known["cards"]) for known in view["known_hands"]]
        state.deck = [COLOUR_INDEX[card] for card in deck]
        state.discard = counts(view["discard"])
        state.discard_total = len(view["discard"])
        state.dark, state.light = (list(stack) for stack in stacks)
        mandalas = view["mandalas"]
        state.centres = [[m["dark_tile"], m["light_tile"]] if m["dark_tile"] else None
                         for m in mandalas]
        state.present = [sum(1 << COLOUR_INDEX[c] for c in m["present"]) for m in mandalas]
        state.up = [[counts(side["face_up"]) for side in m["sides"]] for m in mandalas]
        state.down = [[counts(side["face_down"]) for side in m["sides"]] for m in mandalas]
        state.cards_on = [[len(side["face_up"]) + len(side["face_down"]) for side in m["sides"]]
                          for m in mandalas]
        state.up_on = [[len(side["face_up"]) for side in m["sides"]] for m in mandalas]
        state.claims = [m["claim"] for m in mandalas]
        state.singles = [list(t["singles"]) for t in view["tableaus"]]
        state.flowers = [[tuple(f["tiles"]) for f in t["flowers"]] for t in view["tableaus"]]
        state.left_game = list(view["left_game"])
        state.turn = view["turn"]
        state.passes = view["passes"]
        state.draw_left = 0
        # A decision never falls in a turn whose end is already due: a stack running out or a
        # third flower ends the game at the end of the turn that caused it.
        state.stack_out = state.third_flower = False
        state.end_candidates = []
        state.end_queue = list(view["end_order"])
        phase = view["decision"]
        destroying = view["destroying"]
        if phase == TILE:
            # A tile choice in play follows a completed mandala; at the end, mandalas are
            # destroyed as they stand, never complete (completing one destroys it at once).
            state.ending = bool(state.end_queue) or state.present[destroying] != ALL_COLOURS
            state.active = destroying
            state.pending = (destroying, view["to_move"], view["second"])
        else:
            state.ending = False
            state.active = NO_SEAT
            state.pending = (NO_SEAT, NO_SEAT, NO_SEAT)
        state.phase = phase
        state._set_phase(phase)
        return state

    # -- whose decision ---------------------------------------------------------------------
    def to_move(self) -> int | str | None:
        return self.mover

    def _set_phase(self, phase: str) -> None:
        self.phase = phase
        if phase == PLAY:
            self.mover = self.turn
        elif phase == TILE:
            self.mover = self.pending[1]
        elif phase == OVER:
            self.mover = None
        else:
            self.mover = CHANCE

    # -- legal moves --------------------------------------------------------------------------
    def legal_moves(self) -> list[str]:
        phase = self.phase
        if phase == PLAY:
            seat = self.turn
            total = self.hand_totals[seat]
            if total == 0:
                return ["pass"]
            counts = tuple(self.hands[seat])
            moves = PLAYS_BY_HAND.get(counts)
            if moves is None:
                moves = _plays_for_hand(counts)
            return list(moves)
        if phase == TILE:
            return ["tile dark", "tile light"]
        if phase == ORDER:
            return sorted("order " + " ".join(map(str, order))
                          for order in permutations(self.end_candidates))
        return []   # DECK (too many orderings to list; see the module docstring) or OVER

    # -- applying moves -----------------------------------------------------------------------
    def apply(self, move: str) -> None:
        phase = self.phase
        if phase == PLAY:
            if move == "pass":
                self._pass()
            else:
                self._play(move)
        elif phase == TILE:
            if move not in ("tile dark", "tile light"):
                mandala, holder, _ = self.pending
                raise IllegalMoveError(move, f"seat {holder} must choose a tile of mandala "
                                             f"{mandala}: 'tile dark' or 'tile light'")
            self._choose_tile(move == "tile dark")
        elif phase == DECK:
            self._reshuffle(move)
        elif phase == ORDER:
            self._order(move)
        else:
            raise IllegalMoveError(move, "the game is over")

    def _play(self, move: str) -> None:
        seat = self.turn
        mandala, colour, n = _parse_play(move)
        hand = self.hands[seat]
        total = self.hand_totals[seat]
        if hand[colour] < n:
            raise IllegalMoveError(move, f"seat {seat} holds {hand[colour]} "
                                         f"{COLOURS[colour]} card(s), not {n}")
        if n >= 2 and n == total:
            raise IllegalMoveError(move, f"playing {n} cards would empty seat {seat}'s hand "
                                         f"(only a single last card may be played)")
        hand[colour] -= n
        total -= n
        self.hand_totals[seat] = total
        known = self.known[seat]
        if known[colour]:
            known[colour] = max(0, known[colour] - n)
        bit = 1 << colour
        if self.present[mandala] & bit:
            self.down[mandala][seat][colour] += n
        else:
            self.present[mandala] |= bit
            self.up[mandala][seat][colour] += n
            self.up_on[mandala][seat] += n
        self.cards_on[mandala][seat] += n
        self.active = mandala
        self.passes = 0
        if n != 1:
            self.draw_left = 0
        elif self.up_to_4:
            self.draw_left = UP_TO_4_DRAWS if total < HAND_LIMIT else 0
        else:
            self.draw_left = TWO_DRAWS
        self._finish_turn()

    def _pass(self) -> None:
        seat = self.turn
        if self.hand_totals[seat]:
            raise IllegalMoveError("pass", f"seat {seat} holds cards and must play one")
        self.passes += 1
        if self.passes >= self.players:
            self._begin_end(list(range(MANDALAS)))
        else:
            self.turn = (seat + 1) % self.players
            self.mover = self.turn

    def _finish_turn(self) -> None:
        """Steps 2 to 4 of the turn and its end; pauses at a reshuffle or a tile choice."""
        if self.draw_left and not self._draw():
            return
        mandala = self.active
        self._check_claim(self.turn, mandala)
        if self.present[mandala] == ALL_COLOURS:
            if self._begin_destruction(mandala, completer=self.turn):
                return
        self._end_turn()

    def _draw(self) -> bool:
        """Draws what is left of step 2; False when paused for a reshuffle chance move."""
        seat = self.turn
        hand = self.hands[seat]
        limit = HAND_LIMIT if self.up_to_4 else None
        deck = self.deck
        while self.draw_left and (limit is None or self.hand_totals[seat] < limit):
            if not deck:
                if self.discard_total:
                    self._set_phase(DECK)
                    return False
                break   # deck and discard pile both empty: stop drawing
            hand[deck.pop()] += 1
            self.hand_totals[seat] += 1
            self.draw_left -= 1
        self.draw_left = 0
        return True

    def _reshuffle(self, move: str) -> None:
        parts = move.split(" ")
        if parts[0] != "deck":
            raise IllegalMoveError(move, "a reshuffle is pending: expected 'deck' and an "
                                         "ordering of the discard pile")
        if not all(card in COLOUR_INDEX for card in parts[1:]):
            raise IllegalMoveError(move, "not a list of card colours after 'deck'")
        counts = [0] * len(COLOURS)
        for card in parts[1:]:
            counts[COLOUR_INDEX[card]] += 1
        if counts != self.discard:
            raise IllegalMoveError(move, "the new deck must be an ordering of the discard pile "
                                         f"({_card_text(self.discard)})")
        self.deck = [COLOUR_INDEX[card] for card in reversed(parts[1:])]
        self.discard = [0] * len(COLOURS)
        self.discard_total = 0
        self._set_phase(PLAY)
        self._finish_turn()

    def _check_claim(self, seat: int, mandala: int) -> None:
        """Step 3: strictly more cards than every other player with a face-up card there."""
        up_on = self.up_on[mandala]
        if not up_on[seat] or self.claims[mandala] == seat:
            return
        cards_on = self.cards_on[mandala]
        mine = cards_on[seat]
        for other in range(self.players):
            if other != seat and up_on[other] and cards_on[other] >= mine:
                return
        self.claims[mandala] = seat

    def _end_turn(self) -> None:
        if self.stack_out or self.third_flower:
            self._begin_end([m for m in range(MANDALAS) if m != self.active])
        else:
            self.turn = (self.turn + 1) % self.players
            self._set_phase(PLAY)

    # -- destroying a mandala -----------------------------------------------------------------
    def _begin_destruction(self, mandala: int, completer: int | None) -> bool:
        """Destroys a mandala; True when it pauses for the holder's tile choice."""
        holder = self.claims[mandala]
        if holder == NO_SEAT:
            self.left_game += self._tiles(mandala)
            self._finish_destruction(mandala, ())
            return False
        second = self._second(mandala, holder, completer)
        if second == NO_SEAT:
            dark, light = self._tiles(mandala)
            self._take_tile(holder, dark)
            self._take_tile(holder, light)
            self._finish_destruction(mandala, (holder,))
            return False
        self.pending = (mandala, holder, second)
        self._set_phase(TILE)
        return True

    def _tiles(self, mandala: int) -> list[str]:
        """The centre tiles of a mandala that has them (every mandala until the end)."""
        tiles = self.centres[mandala]
        assert tiles is not None, f"mandala {mandala} has no centre tiles"
        return tiles

    def _second(self, mandala: int, holder: int, completer: int | None) -> int:
        """The seat that gets the tile the holder leaves, NO_SEAT if the holder takes both."""
        cards_on, up_on = self.cards_on[mandala], self.up_on[mandala]
        if self.players == 2 and completer == holder:
            # Two-player rule: the opponent needs half of all the cards and one face up. (With
            # this claim rule an opponent with a face-up card never has as many cards as the
            # holder, so the holder who completes always takes both; kept as the rule reads.)
            other = 1 - holder
            if up_on[other] and 2 * cards_on[other] >= sum(cards_on):
                return other
            return NO_SEAT
        best, best_key, tied = NO_SEAT, (0, 0), False
        for other in range(self.players):
            if other == holder or not up_on[other]:
                continue
            key = (cards_on[other], up_on[other])
            if key > best_key:
                best, best_key, tied = other, key, False
            elif key == best_key:
                tied = True
        return NO_SEAT if tied else best

    def _choose_tile(self, keep_dark: bool) -> None:
        mandala, holder, second = self.pending
        dark, light = self._tiles(mandala)
        self._take_tile(holder, dark if keep_dark else light)
        self._take_tile(second, light if keep_dark else dark)
        self.pending = (NO_SEAT, NO_SEAT, NO_SEAT)
        self._finish_destruction(mandala, (holder, second))
        if self.ending:
            self._next_end_destruction()
        else:
            self._end_turn()

    def _take_tile(self, seat: int, tile: str) -> None:
        """Nobody refuses a tile; two unpaired tiles of one colour pair at once into a flower."""
        colour = tile_colour(tile)
        singles = self.singles[seat]
        for index, single in enumerate(singles):
            if tile_colour(single) == colour:
                del singles[index]
                self.flowers[seat].append(tuple(sorted((single, tile))))
                if len(self.flowers[seat]) >= FLOWERS_TO_END:
                    self.third_flower = True   # the game ends with this turn
                return
        singles.append(tile)

    def _finish_destruction(self, mandala: int, takers: tuple[int, ...]) -> None:
        """Steps 5 and 6: takers discard their cards there, the others take theirs back."""
        for seat in range(self.players):
            up, down = self.up[mandala][seat], self.down[mandala][seat]
            if not self.cards_on[mandala][seat]:
                continue
            if seat in takers:
                pile = self.discard
                self.discard_total += self.cards_on[mandala][seat]
            else:
                pile = self.hands[seat]
                self.hand_totals[seat] += self.cards_on[mandala][seat]
                known = self.known[seat]
                for colour in range(len(COLOURS)):
                    known[colour] += up[colour] + down[colour]
            for colour in range(len(COLOURS)):
                pile[colour] += up[colour] + down[colour]
                up[colour] = down[colour] = 0
            self.cards_on[mandala][seat] = self.up_on[mandala][seat] = 0
        self.claims[mandala] = NO_SEAT
        if self.ending or not self.dark or not self.light:
            # No new mandala at the end; during play an empty stack ends the game.
            if not self.ending:
                self.stack_out = True
            self.centres[mandala] = None
            self.present[mandala] = 0
        else:
            tiles = [self.dark.pop(), self.light.pop()]
            self.centres[mandala] = tiles
            self.present[mandala] = _colour_bits(tiles)

    # -- the end ------------------------------------------------------------------------------
    def _begin_end(self, mandalas: list[int]) -> None:
        self.end_candidates = mandalas
        self._set_phase(ORDER)

    def _order(self, move: str) -> None:
        if move not in self.legal_moves():
            mandalas = " ".join(map(str, self.end_candidates))
            raise IllegalMoveError(move, "the order of the end-of-game destructions is pending: "
                                         f"expected 'order' and the mandalas {mandalas} in "
                                         "some order")
        self.end_queue = [int(token) for token in move.split(" ")[1:]]
        self.ending = True
        self._next_end_destruction()

    def _next_end_destruction(self) -> None:
        while self.end_queue:
            if self._begin_destruction(self.end_queue.pop(0), completer=None):
                return
        self._set_phase(OVER)

    # -- chance ---------------------------------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> str:
        if self.phase == DECK:
            cards = [COLOURS[colour] for colour in range(len(COLOURS))
                     for _ in range(self.discard[colour])]
            rng.shuffle(cards)
            return "deck " + " ".join(cards)
        if self.phase == ORDER:
            order = list(self.end_candidates)
            rng.shuffle(order)
            return "order " + " ".join(map(str, order))
        raise EngineError("flowers-mandala: no chance move is pending "
                          f"({'the game is over' if self.mover is None else 'a seat decides'})")

    # -- results --------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.mover is None

    def points(self, seat: int) -> int:
        """Current points of a seat's tiles (the final score once the game is over)."""
        return (sum(single_points(tile) for tile in self.singles[seat])
                + sum(flower_points(*flower) for flower in self.flowers[seat]))

    def scores(self) -> list[int]:
        if self.mover is not None:
            raise GameNotOverError("flowers-mandala: scores asked for before the game ended")
        return [self.points(seat) for seat in range(self.players)]

    def ranks(self) -> list[int]:
        """Most points; tie: more cards left in hand; still tied: shared."""
        scores = self.scores()
        return ranks_from_keys([(scores[seat], self.hand_totals[seat])
                                for seat in range(self.players)])

    # -- what a seat sees -------------------------------------------------------------------
    def observation(self, seat: int) -> dict[str, Any]:
        if seat not in range(self.players):
            raise ValueError(f"flowers-mandala: no seat {seat!r} in a {self.players}-player match")
        mandala, holder, second = self.pending
        return {
            "seat": seat,
            "players": self.players,
            "draw_rule": self.options["draw_rule"],
            "turn": self.turn,
            "decision": self.phase,
            "to_move": self.mover if isinstance(self.mover, int) else NO_SEAT,
            "destroying": mandala,
            "second": second,
            "hand": _card_list(self.hands[seat]),
            "hand_sizes": list(self.hand_totals),
            "known_hands": [{"cards": _card_list(known)} for known in self.known],
            "deck_size": len(self.deck),
            "discard": _card_list(self.discard),
            "dark_stack_size": len(self.dark),
            "light_stack_size": len(self.light),
            "mandalas": [self._mandala_view(m) for m in range(MANDALAS)],
            "tableaus": [{"singles": sorted(self.singles[s]),
                          "flowers": [{"tiles": list(f)} for f in self.flowers[s]],
                          "points": self.points(s)} for s in range(self.players)],
            "left_game": sorted(self.left_game),
            "passes": self.passes,
            "end_order": list(self.end_queue),
        }

    def _mandala_view(self, mandala: int) -> dict[str, Any]:
        centre = self.centres[mandala] or ["", ""]
        return {
            "number": mandala,
            "dark_tile": centre[0],
            "light_tile": centre[1],
            "claim": self.claims[mandala],
            "present": [COLOURS[c] for c in range(len(COLOURS))
                        if self.present[mandala] >> c & 1],
            "sides": [{"face_up": _card_list(self.up[mandala][s]),
                       "face_down": _card_list(self.down[mandala][s])}
                      for s in range(self.players)],
        }

    # -- copies and text --------------------------------------------------------------------
    def clone(self) -> "FlowersMandalaState":
        other = FlowersMandalaState.__new__(FlowersMandalaState)
        other.__dict__.update(self.__dict__)
        other.options = dict(self.options)
        other.hands = [list(hand) for hand in self.hands]
        other.hand_totals = list(self.hand_totals)
        other.known = [list(known) for known in self.known]
        other.deck = list(self.deck)
        other.discard = list(self.discard)
        other.dark = list(self.dark)
        other.light = list(self.light)
        other.centres = [list(pair) if pair else pair for pair in self.centres]
        other.present = list(self.present)
        other.up = [[list(side) for side in sides] for sides in self.up]
        other.down = [[list(side) for side in sides] for sides in self.down]
        other.cards_on = [list(row) for row in self.cards_on]
        other.up_on = [list(row) for row in self.up_on]
        other.claims = list(self.claims)
        other.singles = [list(tiles) for tiles in self.singles]
        other.flowers = [list(flowers) for flowers in self.flowers]
        other.left_game = list(self.left_game)
        other.end_candidates = list(self.end_candidates)
        other.end_queue = list(self.end_queue)
        return other

    def render(self) -> str:
        if self.phase == PLAY:
            head = f"turn: seat {self.turn} to play"
        elif self.phase == TILE:
            head = (f"turn: seat {self.turn}; seat {self.pending[1]} chooses a tile of "
                    f"mandala {self.pending[0]} (other tile to seat {self.pending[2]})")
        elif self.phase in (DECK, ORDER):
            head = f"turn: seat {self.turn}; chance: {self.phase}"
        else:
            head = "game over"
        lines = [f"{head} | deck {len(self.deck)}, discard {self.discard_total} | "
                 f"stacks dark {len(self.dark)} light {len(self.light)}"]
        for m in range(MANDALAS):
            centre = self.centres[m]
            if centre is None:
                lines.append(f"  mandala {m}: empty")
                continue
            claim = self.claims[m]
            sides = []
            for s in range(self.players):
                if self.cards_on[m][s]:
                    down = _card_text(self.down[m][s])
                    sides.append(f"s{s} up {_card_text(self.up[m][s]) or '-'}"
                                 + (f" down {down}" if down else ""))
            lines.append(f"  mandala {m} [{' '.join(centre)}] claim "
                         f"{'-' if claim == NO_SEAT else f's{claim}'}: "
                         + ("; ".join(sides) or "no cards"))
        for s in range(self.players):
            flowers = " ".join("(" + "+".join(f) + ")" for f in self.flowers[s])
            lines.append(f"  seat {s}: hand {self.hand_totals[s]} | tiles "
                         f"{' '.join(sorted(self.singles[s])) or '-'} | flowers "
                         f"{flowers or '-'} | points {self.points(s)}")
        return "\n".join(lines)

    def render_result(self) -> str:
        scores, ranks = self.scores(), self.ranks()
        lines = []
        for s in range(self.players):
            parts = [f"{tile}={single_points(tile)}" for tile in sorted(self.singles[s])]
            parts += [f"({a}+{b})={flower_points(a, b)}" for a, b in self.flowers[s]]
            lines.append(f"seat {s}: {scores[s]} points ({' '.join(parts) or 'no tiles'}), "
                         f"{self.hand_totals[s]} cards in hand, rank {ranks[s]}")
        return "\n".join(lines)


def _colour_bits(tiles: list[str]) -> int:
    bits = 0
    for tile in tiles:
        bits |= 1 << COLOUR_INDEX[tile_colour(tile)]
    return bits


def _card_list(counts: list[int]) -> list[str]:
    """Colour counts as a sorted list of card names."""
    return [COLOURS[c] for c in range(len(COLOURS)) for _ in range(counts[c])]


def _card_text(counts: list[int]) -> str:
    """Colour counts as `green 2 red 1` (empty string for no cards)."""
    return " ".join(f"{COLOURS[c]} {counts[c]}" for c in range(len(COLOURS)) if counts[c])
