"""A `flowers-mandala` position: its legal moves, applying them, chance and scores (the game is
in engine/games/flowers_mandala.py, its constants in flowers_mandala_rules.py, what a seat sees
and the text in flowers_mandala_view.py)."""
from __future__ import annotations

import random
from itertools import permutations, repeat
from typing import TYPE_CHECKING, Any

from engine.core import (CHANCE, EngineError, GameNotOverError, IllegalMoveError, State,
                         ranks_from_keys)
from engine.games.flowers_mandala_rules import (ALL_COLOURS, COLOUR_CODES, COLOUR_INDEX,
                                                COLOURS, DECK, FLOWERS_TO_END, HAND_LIMIT,
                                                MANDALAS, NO_SEAT, ORDER, OVER, PLAY,
                                                PLAY_LISTS, PLAY_MOVES, TILE, TWO_DRAWS,
                                                UP_TO_4_DRAWS, card_list, card_text,
                                                colour_bits, extend_play_lists, flower_points,
                                                parse_play, single_points, tile_colour)
from engine.games.flowers_mandala_view import render_position, render_result, seat_view
from engine.shuffle import shuffle

if TYPE_CHECKING:
    from engine.games.flowers_mandala import FlowersMandala
    from engine.games.flowers_mandala_start import Deal


# Here, not in flowers_mandala_rules: CPython 3.11 compiles `NAME.get(...)` on an imported NAME
# to a slower attribute load, and legal_moves looks this up on every move.
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
                moves += row[k] if k < len(row) else extend_play_lists(mandala, colour, k)
    if len(PLAYS_BY_HAND) >= PLAYS_BY_HAND_LIMIT:
        PLAYS_BY_HAND.clear()
    PLAYS_BY_HAND[counts] = result = tuple(moves)
    return result


NO_CARDS = (0,) * len(COLOURS)
"""The colour counts of no cards."""


def _copies(row: tuple[Any, ...], count: int) -> list[list[Any]]:
    """`count` lists, each a copy of row."""
    return list(map(list, repeat(row, count)))


class FlowersMandalaState(State):
    """A position. Hands and mandala sides are counts per colour index (see COLOURS)."""

    # Slots: a playout reads and writes these all the time, and an instance dict of this
    # many keys is a plain dict (the interpreter's faster shared layout stops at 30).
    __slots__ = ("game", "players", "options", "deal", "_setup", "up_to_4", "hands",
                 "hand_totals", "known", "deck", "discard", "discard_total", "dark", "light",
                 "centres", "present", "up", "down", "cards_on", "up_on", "claims", "singles",
                 "flowers", "left_game", "turn", "active", "passes", "draw_left", "stack_out",
                 "third_flower", "ending", "end_candidates", "end_queue", "pending", "phase",
                 "mover")

    game: FlowersMandala
    # Set by blank and by flowers_mandala_start (see there for what each holds).
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

    deal: Deal | None
    """A seeded match's deal as drawn: the setup is written from it when first asked for."""
    _setup: dict[str, Any] | None

    @classmethod
    def blank(cls, game: FlowersMandala, players: int,
              options: dict[str, Any]) -> "FlowersMandalaState":
        """A state before its cards and tiles are dealt (engine/games/flowers_mandala_start.py
        deals them): nothing played, taken or pending."""
        state = cls.__new__(cls)
        state.game = game
        state.players = players
        state.options = dict(options)
        state.deal = state._setup = None
        state.up_to_4 = options["draw_rule"] == "up-to-4"
        # Rows made by copying, not by comprehensions: every seeded match starts here.
        state.known = _copies(NO_CARDS, players)
        state.discard = [0] * len(COLOURS)
        state.discard_total = 0
        state.up = [_copies(NO_CARDS, players) for _ in range(MANDALAS)]
        state.down = [_copies(NO_CARDS, players) for _ in range(MANDALAS)]
        state.cards_on = _copies((0,) * players, MANDALAS)
        state.up_on = _copies((0,) * players, MANDALAS)
        state.claims = [NO_SEAT] * MANDALAS
        state.singles = _copies((), players)
        state.flowers = _copies((), players)
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

    @property
    def setup(self) -> dict[str, Any]:
        """The starting deal in the setup form of docs/notation.md."""
        if self._setup is None:
            assert self.deal is not None, "a state is made with a setup or a deal"
            self._setup = self.deal.as_setup(self.players)
        return self._setup

    @setup.setter
    def setup(self, setup: dict[str, Any]) -> None:
        self._setup = setup

    # -- whose decision ---------------------------------------------------------------------
    def to_move(self) -> int | str | None:
        return self.mover

    def set_phase(self, phase: str) -> None:
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
        if self.phase != PLAY:
            self._apply_other(move)
            return
        seat = self.turn
        if move == "pass":
            self._pass()
            return
        # Step 1 of a play, here: a play runs its whole turn in this method and _finish_turn
        # (in a random playout a call per step cost as much as the steps).
        try:
            mandala, colour, n = PLAY_MOVES[move]
        except (KeyError, TypeError):
            mandala, colour, n = parse_play(move)
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
            self._finish_turn(0)
        elif self.up_to_4:
            self._finish_turn(UP_TO_4_DRAWS if total < HAND_LIMIT else 0)
        else:
            self._finish_turn(TWO_DRAWS)

    def _apply_other(self, move: str) -> None:
        """apply in the phases other than PLAY."""
        phase = self.phase
        if phase == TILE:
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

    def _finish_turn(self, draws: int) -> None:
        """Steps 2 to 4 of the turn and its end, `draws` cards still to draw in step 2;
        pauses at a reshuffle or a tile choice."""
        mandala, seat = self.active, self.turn
        if draws:
            hand, total, deck = self.hands[seat], self.hand_totals[seat], self.deck
            wanted = min(draws, HAND_LIMIT - total) if self.up_to_4 else draws
            if 0 < wanted <= len(deck):
                # The deck holds them all: no reshuffle can come in between.
                for _ in range(wanted):
                    hand[deck.pop()] += 1
                self.hand_totals[seat] = total + wanted
            else:
                self.draw_left = draws
                if not self._draw():
                    return
        # Step 3: strictly more cards than every other player with a face-up card there.
        up_on = self.up_on[mandala]
        if up_on[seat] and self.claims[mandala] != seat:
            cards_on = self.cards_on[mandala]
            mine = cards_on[seat]
            for other in range(self.players):
                if other != seat and up_on[other] and cards_on[other] >= mine:
                    break
            else:
                self.claims[mandala] = seat
        if self.present[mandala] == ALL_COLOURS:
            if self._begin_destruction(mandala, completer=seat):
                return
        if self.stack_out or self.third_flower:
            self._end_turn()
        else:                   # the phase is PLAY
            self.turn = self.mover = (seat + 1) % self.players

    def _draw(self) -> bool:
        """Draws what is left of step 2; False when paused for a reshuffle chance move."""
        seat = self.turn
        hand = self.hands[seat]
        total = self.hand_totals[seat]
        left = self.draw_left
        limit = HAND_LIMIT if self.up_to_4 else total + left     # `two`: no hand limit
        deck = self.deck
        while left and total < limit:
            if not deck:
                if self.discard_total:
                    self.hand_totals[seat] = total
                    self.draw_left = left
                    self.set_phase(DECK)
                    return False
                break   # deck and discard pile both empty: stop drawing
            hand[deck.pop()] += 1
            total += 1
            left -= 1
        self.hand_totals[seat] = total
        self.draw_left = 0
        return True

    def _reshuffle(self, move: str) -> None:
        cards = move.split(" ")
        if cards[0] != "deck":
            raise IllegalMoveError(move, "a reshuffle is pending: expected 'deck' and an "
                                         "ordering of the discard pile")
        del cards[0]
        counts = [cards.count(name) for name in COLOURS]
        if sum(counts) != len(cards):       # some word is not a colour
            raise IllegalMoveError(move, "not a list of card colours after 'deck'")
        if counts != self.discard:
            raise IllegalMoveError(move, "the new deck must be an ordering of the discard pile "
                                         f"({card_text(self.discard)})")
        cards.reverse()                     # top at the end
        self.deck = list(map(COLOUR_INDEX.__getitem__, cards))
        self.discard = [0] * len(COLOURS)
        self.discard_total = 0
        self.set_phase(PLAY)
        self._finish_turn(self.draw_left)

    def _end_turn(self) -> None:
        if self.stack_out or self.third_flower:
            self._begin_end([m for m in range(MANDALAS) if m != self.active])
        else:
            self.turn = self.mover = (self.turn + 1) % self.players
            self.phase = PLAY

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
        self.set_phase(TILE)
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
        same_colour = tile_colour(tile) + ":"     # a tile is COLOUR:VALUE
        singles = self.singles[seat]
        for index, single in enumerate(singles):
            if single.startswith(same_colour):
                del singles[index]
                self.flowers[seat].append(tuple(sorted((single, tile))))
                if len(self.flowers[seat]) >= FLOWERS_TO_END:
                    self.third_flower = True   # the game ends with this turn
                return
        singles.append(tile)

    def _finish_destruction(self, mandala: int, takers: tuple[int, ...]) -> None:
        """Steps 5 and 6: takers discard their cards there, the others take theirs back."""
        ups, downs = self.up[mandala], self.down[mandala]
        cards_on = self.cards_on[mandala]
        for seat in range(self.players):
            count = cards_on[seat]
            if not count:
                continue
            up, down = ups[seat], downs[seat]
            if seat in takers:
                pile, known = self.discard, None
                self.discard_total += count
            else:
                pile, known = self.hands[seat], self.known[seat]
                self.hand_totals[seat] += count
            for colour in COLOUR_CODES:
                moved = up[colour] + down[colour]
                if moved:
                    pile[colour] += moved
                    if known is not None:
                        known[colour] += moved
            ups[seat] = [0] * len(COLOURS)
            downs[seat] = [0] * len(COLOURS)
            cards_on[seat] = self.up_on[mandala][seat] = 0
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
            self.present[mandala] = colour_bits(tiles)

    # -- the end ------------------------------------------------------------------------------
    def _begin_end(self, mandalas: list[int]) -> None:
        self.end_candidates = mandalas
        self.set_phase(ORDER)

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
        self.set_phase(OVER)

    # -- chance ---------------------------------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> str:
        if self.phase == DECK:
            cards = card_list(self.discard)
            shuffle(cards, rng)         # rng.shuffle's order and draws, faster
            return "deck " + " ".join(cards)
        if self.phase == ORDER:
            order = list(self.end_candidates)
            shuffle(order, rng)
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
        return seat_view(self, seat)

    # -- copies and text --------------------------------------------------------------------
    def clone(self) -> "FlowersMandalaState":
        other = FlowersMandalaState.__new__(FlowersMandalaState)
        for name in _SHARED_BY_CLONES:
            setattr(other, name, getattr(self, name))
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
        return render_position(self)

    def render_result(self) -> str:
        return render_result(self)


_SHARED_BY_CLONES = ("game", "players", "deal", "_setup", "up_to_4", "discard_total", "turn",
                     "active", "passes", "draw_left", "stack_out", "third_flower", "ending",
                     "pending", "phase", "mover")
"""What a clone shares with its state: values never changed in place (the deal, the setup
once written, numbers, flags, tuples, strings)."""
