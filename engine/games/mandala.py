"""Mandala: two players build two shared mandalas and collect colours into a river and a cup.

Rules: `docs/rules/mandala.md` (every reading marked "Arena's reading" there is implemented here).

- Players: exactly 2; seat 0 moves first. No rule options. No chance moves: the setup holds
  the whole deck order, so a match is fully determined by its setup and its moves.
- Components: 108 cards, 18 of each colour `black green orange purple red yellow`; two
  mandalas `0` and `1`, each a shared mountain plus one field per player; per player a river
  (slots 1..6) and a cup (face down).
- Setup (docs/notation.md): `{"cups": [[c, c], [c, c]], "hands": [[6 colours], [6 colours]],
  "mountains": [[c, c], [c, c]], "deck": [88 colours, top first]}`, cups, hands and
  mountains sorted.
- Moves (notation of docs/notation.md, sorted by code point in the legal list):
  `mountain M COLOUR` (play one card on mandala M's mountain, then draw up to 3 / to 8 held),
  `field M COLOUR N` (N cards into your own field of M, keeping at least one card in hand),
  `discard COLOUR N` (then draw N), `pass` (only with an empty hand; two in a row end the
  game), and during a destruction `take COLOUR` (all mountain cards of that colour).
- Observation (`proto/arena/v1/mandala.proto`, MandalaObservation): the seat, who is to move
  and in which phase, the seat's own hand, both mandalas (mountains and fields), per seat the
  river, hand size, cup size and the cup cards taken face up, the discard pile, the deck
  size, the count of consecutive passes and the end reason. Never the opponent's hand, the
  secret starting cup cards or the deck order.
- Result: each cup card scores the river slot (1..6) of its colour, 0 if the colour is not in
  that player's river; ranks by score, then fewer cards in cup; still tied: shared rank.

Version: mandala/1 (rules file `docs/rules/mandala.md` as of issue 2).
"""
from __future__ import annotations

import random
from itertools import accumulate
from typing import Any, Callable, Mapping, Sequence

from engine.core import (Game, GameNotOverError, IllegalMoveError, InvalidSetupError, State,
                         ranks_from_keys)
from engine.games.mandala_rules import (ALL_COLOURS, CARD_OF_UNIT, CARDS_PER_COLOUR, COLOURS,
                                        COUNTS, CUP_CARDS, DEALT, DISCARD, END_PASSES, END_REFILL,
                                        END_RIVER, FIELD, FULL_DECK_UNITS, HAND_LIMIT, HAND_SHIFT,
                                        HAND_UNIT, INDEX, MANDALAS, MOUNTAIN, MOUNTAIN_DRAW,
                                        NOTATION_HELP, PAIRS, PASS, PILE_SHIFT, PILE_UNIT,
                                        RIVER_SLOTS, SIX, TAKE, TAKE_BY_MASK, HandFacts,
                                        colour_counts, colour_mask, deal_cards, dealing_order,
                                        hand_counts, hand_facts, hand_names, layout, pack_hand,
                                        pack_pile, pile_counts, pile_names, pile_size,
                                        unseen_colours, read_setup, setup_names)

# What strategies and tests import from here (the game's one public module).
__all__ = ["COLOURS", "CUP_CARDS", "RIVER_SLOTS", "Mandala", "MandalaState"]

_HANDS: dict[int, HandFacts] = {}
"""Hand -> mandala_rules.hand_facts(hand), as hands come up (there are 3003)."""

# Move text -> (kind, mandala, colour, count, the colour's cards in a hand as a mask and the
# least the hand must hold, the cards as a hand and as another pile (a take: the colour's
# cards in another pile as a mask, and one card of it), the colour's bit): parsing is one
# dictionary look-up, in the table of the moves the phase plays (_TURN while players
# take turns, _TAKING while a mandala is destroyed, none once over). A move it does not list
# is refused (MandalaState._refusal says why). Moves of more cards than a hand holds (8) are
# only in _PARSE_MORE, for their refusals: the tables stay small enough to stay in the
# processor's cache.
_DISCARD_KIND, _FIELD_KIND, _MOUNTAIN_KIND, _TAKE_KIND, _PASS_KIND = range(5)
_Action = tuple[int, int, int, int, int, int, int, int, int]
_TURN: dict[str, _Action] = {PASS: (_PASS_KIND, -1, -1, 0, 0, 0, 0, 0, 0)}
_TAKING: dict[str, _Action] = {}
_OVER: dict[str, _Action] = {}
_PARSE_MORE: dict[str, _Action] = {}
for _c in SIX:
    _TAKING[TAKE[_c]] = (_TAKE_KIND, -1, _c, 0, 31 << PILE_SHIFT[_c], 0, 0, PILE_UNIT[_c], 1 << _c)
    _mask = 15 << HAND_SHIFT[_c]
    for _m in MANDALAS:
        _TURN[MOUNTAIN[_m][_c]] = (_MOUNTAIN_KIND, _m, _c, 1, _mask, 1 << HAND_SHIFT[_c],
                                   HAND_UNIT[_c], PILE_UNIT[_c], 1 << _c)
    for _n in COUNTS:
        _moved = (_n, _mask, _n << HAND_SHIFT[_c], _n * HAND_UNIT[_c], _n * PILE_UNIT[_c], 1 << _c)
        _table = _TURN if _n <= HAND_LIMIT else _PARSE_MORE
        _table[DISCARD[_c][_n - 1]] = (_DISCARD_KIND, -1, _c, *_moved)
        for _m in MANDALAS:
            _table[FIELD[_m][_c][_n - 1]] = (_FIELD_KIND, _m, _c, *_moved)

_MOUNTAIN_DRAWS = [max(0, min(MOUNTAIN_DRAW, HAND_LIMIT - held)) for held in range(16)]
"""Cards held after playing on a mountain -> cards to draw (up to 3, up to 8 held)."""


class Mandala(Game):
    id = "mandala"
    title = "Mandala"
    min_players = 2
    max_players = 2
    options = ()
    has_chance = False

    def max_plies(self, players: int, options: Mapping[str, Any]) -> int:
        # Cards reach hands only from the deck (108 - 4 in cups - 4 on mountains = 100), and
        # every mountain, field or discard move takes at least one card out of a hand; every
        # take empties a colour off a mountain, which holds no more than 108 cards in all; a
        # pass is followed by a non-pass or ends the game (second pass).
        plays = len(COLOURS) * CARDS_PER_COLOUR - 8
        takes = len(COLOURS) * CARDS_PER_COLOUR
        return 2 * (plays + takes) + 2

    def deal(self, players: int, options: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return setup_names(*layout(deal_cards(rng)))

    def start(self, players: int, options: dict[str, Any],
              setup: Mapping[str, Any]) -> "MandalaState":
        self.check_players(players)
        piles, deck = read_setup(setup)
        return MandalaState(self, options, [HAND_UNIT[c] for c in dealing_order(piles, deck)])

    def start_dealt(self, players: int, options: dict[str, Any],
                    rng: random.Random) -> "MandalaState":
        # Every seeded match starts here: the deal just made is legal, so unlike start it
        # goes to the state unchecked (checking it cost a third of a random playout), dealt
        # as hands of one card: the state reads its piles off their running sums.
        return MandalaState(self, options, deal_cards(rng, FULL_DECK_UNITS))

    def determinize(self, observation: Mapping[str, Any], seat: int, rng: random.Random, *,
                    options: Mapping[str, Any] | None = None,
                    history: Sequence[Mapping[str, Any]] | None = None) -> "MandalaState":
        return self.determinizer(observation, seat, options=options)(rng)

    def determinizer(self, observation: Mapping[str, Any], seat: int, *,
                     options: Mapping[str, Any] | None = None,
                     history: Sequence[Mapping[str, Any]] | None = None
                     ) -> Callable[[random.Random], "MandalaState"]:
        """See Game.determinizer. Mandala's observation is enough: every card a seat ever saw
        is still in sight (`unseen_colours`), so the unseen ones are the opponent's hand, both
        secret cup pairs and the deck, which a fair shuffle fills alike. The observation is
        read once (that was a third of an ISMCTS iteration); each draw deals the rest anew."""
        resolved = self.resolve_options(options, 2)
        unseen = unseen_colours(observation)
        unseen_pool = [c for c in SIX for _ in range(unseen[c])]
        hidden = observation["players"][1 - seat]["hand_size"]
        secret_sizes = [p["cup_size"] - len(p["cup_taken"]) for p in observation["players"]]
        wanted = hidden + sum(secret_sizes) + observation["deck_size"]
        if min(unseen) < 0 or wanted != len(unseen_pool):
            raise InvalidSetupError(f"not a mandala observation: {len(unseen_pool)} cards "
                                    f"unseen, but hand, cups and deck hide {wanted}")
        own_hand = pack_hand(colour_counts([INDEX[name] for name in observation["hand"]]))
        seen_state = MandalaState.from_view(self, resolved, observation, [[0] * 6] * 2,
                                            [[0] * 6] * 2, [])
        starts = [hidden + sum(secret_sizes[:i]) for i in range(3)]   # of the cups, the deck

        def draw(rng: random.Random) -> "MandalaState":
            pool = unseen_pool[:]
            rng.shuffle(pool)
            state = seen_state.clone()
            state._set_deck([HAND_UNIT[c] for c in pool[starts[2]:]], 0)
            hands = [own_hand, pack_hand(colour_counts(pool[:hidden]))]
            state._hands = hands if seat == 0 else hands[::-1]
            state._secret = [pack_hand(colour_counts(pool[at:at + size]))
                             for at, size in zip(starts, secret_sizes)]
            return state
        return draw


class MandalaState(State):
    """A Mandala position. Every pile in play is an int (see mandala_rules.HAND_UNIT);
    rivers, river slots and the secret cup cards are lists indexed by colour code."""

    __slots__ = ("game", "players", "options", "_setup", "_cards", "_sums", "_top",
                 "_deck_end", "_hands", "_secret", "_taken", "_river", "_slot", "_mountain",
                 "_field", "_field_size", "_discard", "_refused", "_mountain_left",
                 "_completer", "_to_move", "_destroying", "_actions", "_passes", "_end")

    def __init__(self, game: Mandala, options: dict[str, Any], cards: list[int]):
        """The start of a match from a deal: its 108 cards in dealing order (see
        mandala_rules.layout), each as a hand of one card (HAND_UNIT)."""
        self.game = game
        self.players = 2
        self.options = dict(options)
        self._setup: dict[str, Any] | None = None       # made from the deal when first asked
        self._set_deck(cards, DEALT)
        sums = self._sums                   # sums[j] - sums[i]: cards i to j - 1 as a hand
        self._hands = [sums[10] - sums[4], sums[16] - sums[10]]
        self._secret = [sums[2], sums[4] - sums[2]]     # face-down starting cups, as hands
        self._taken = [0, 0]                # cup cards taken face up in destructions
        self._river: list[list[int]] = [[], []]     # colour codes in slot order (slot 1 first)
        self._slot = [[0] * 6, [0] * 6]     # river slot (1..6) of each colour, 0 if absent
        (mountain0, mask0), (mountain1, mask1) = (PAIRS[sums[18] - sums[16]],
                                                  PAIRS[sums[20] - sums[18]])
        self._mountain = [mountain0, mountain1]
        self._field = [[0, 0], [0, 0]]      # [mandala][seat]
        self._field_size = [[0, 0], [0, 0]]   # its cards, for who takes first in a destruction
        self._discard = 0
        # Colours as bit masks, kept in step with the piles above. Per mandala, the colours
        # the rule of colour refuses to seat 0's field (those on the mountain or in seat 1's
        # field), to seat 1's field, and to the mountain (those in either field):
        # legal_moves reads them as they are, apply checks a move with one of them. No colour
        # stands in both fields, so the colours refused to both fields are the mountain's.
        self._refused = [[mask0, mask0, 0], [mask1, mask1, 0]]
        self._mountain_left = 0             # colours left on the mountain being destroyed
        self._completer = -1                # who completed the mandala being destroyed, or -1
        self._to_move: int | None = 0       # seat to decide now; None once over
        self._destroying = -1               # mandala being taken apart, -1 if none
        self._actions = _TURN               # the moves the phase plays (see _TURN)
        self._passes = 0                    # consecutive passes just played
        self._end = ""                      # why the game ended, "" while it runs

    @property
    def setup(self) -> dict[str, Any]:      # type: ignore[override]  # read-only: it is the deal
        """The starting deal in the setup form of docs/notation.md: made only when asked for,
        as most random playouts never ask."""
        if self._setup is None:
            self._setup = setup_names(*layout([CARD_OF_UNIT[card] for card in self._cards]))
        return self._setup

    def _set_deck(self, cards: list[int], top: int) -> None:
        """The cards (hands of one card) the deck is drawn from, in order: those from `top`
        on are the deck, top first. Never changed."""
        self._cards = cards
        # The first i cards as a hand, for every i (as if one hand could hold them all: the
        # fields overflow, the differences are exact): a draw of the cards from top to
        # top + n is one subtraction.
        self._sums = list(accumulate(cards, initial=0))
        self._top = top                     # index of the next card to draw
        self._deck_end = len(cards)

    @classmethod
    def from_view(cls, game: Mandala, options: dict[str, Any], view: Mapping[str, Any],
                  hands: list[list[int]], secret: list[list[int]],
                  deck: list[int]) -> "MandalaState":
        """The state a seat's observation shows, with the hidden parts given (determinize)."""
        def counts(names: list[str]) -> list[int]:
            return colour_counts([INDEX[name] for name in names])

        state = cls.__new__(cls)
        state.game = game
        state.players = 2
        state.options = dict(options)
        state._setup = {}                   # a determinised state has no starting deal
        state._set_deck([HAND_UNIT[c] for c in deck], 0)
        state._hands = [pack_hand(hand) for hand in hands]
        state._secret = [pack_hand(cup) for cup in secret]
        players = view["players"]
        state._taken = [pack_pile(counts(p["cup_taken"])) for p in players]
        state._river = [[INDEX[name] for name in p["river"]] for p in players]
        state._slot = [[0] * 6, [0] * 6]
        for s in (0, 1):
            for slot, c in enumerate(state._river[s], 1):
                state._slot[s][c] = slot
        mountains = [counts(m["mountain"]) for m in view["mandalas"]]
        fields = [[counts(f["cards"]) for f in m["fields"]] for m in view["mandalas"]]
        state._mountain = [pack_pile(mountain) for mountain in mountains]
        state._field = [[pack_pile(field) for field in pair] for pair in fields]
        state._field_size = [[sum(field) for field in pair] for pair in fields]
        state._discard = pack_pile(counts(view["discard"]))
        state._refused = []
        for mountain, (field0, field1) in zip(mountains, fields):
            on, on0, on1 = colour_mask(mountain), colour_mask(field0), colour_mask(field1)
            state._refused.append([on | on1, on | on0, on0 | on1])
        state._destroying = view["destroying"]
        state._mountain_left = (colour_mask(mountains[state._destroying])
                                if state._destroying >= 0 else 0)
        to_move = view["to_move"]
        state._to_move = None if to_move < 0 else to_move
        state._completer = view["completed_by"] if state._destroying >= 0 else -1
        state._actions = (_OVER if state._to_move is None
                          else _TAKING if state._destroying >= 0 else _TURN)
        state._passes = view["passes"]
        state._end = view["end"]
        return state

    # -- whose decision ------------------------------------------------------------------------
    def to_move(self) -> int | None:
        return self._to_move

    def is_over(self) -> bool:
        return self._to_move is None

    def deck_size(self) -> int:
        return self._deck_end - self._top

    def hand(self, seat: int) -> list[int]:
        """The seat's hand as six colour counts."""
        return hand_counts(self._hands[seat])

    # -- legal moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[str]:
        if self._actions is not _TURN:      # over, or a mandala being destroyed
            if self._to_move is None:
                return []
            return TAKE_BY_MASK[self._mountain_left][:]
        seat: int = self._to_move           # type: ignore[assignment]  # a turn has a seat
        hand = self._hands[seat]
        if not hand:
            return [PASS]
        try:
            discards, low0, high0, low1, high1, mountain0, mountain1 = _HANDS[hand]
        except KeyError:
            discards, low0, high0, low1, high1, mountain0, mountain1 = _HANDS[hand] = \
                hand_facts(hand)
        # The rule of colour: the colours refused to the seat's field and to the mountain of
        # each mandala (see _refused).
        refused0, refused1 = self._refused
        field0, field1 = refused0[seat], refused1[seat]
        # Kinds, mandalas, colours and counts come in code-point order.
        return [*discards, *low0[field0], *high0[field0], *low1[field1], *high1[field1],
                *mountain0[refused0[2]], *mountain1[refused1[2]]]

    # -- applying a move -----------------------------------------------------------------------
    def apply(self, move: str) -> None:
        # One method for every move: in a random playout, a call per step costs as much as
        # the step itself. Each action checks its own conditions before it changes anything.
        try:
            kind, m, c, n, mask, least, in_hand, cards, bit = self._actions[move]
        except (KeyError, TypeError):       # TypeError: not even a string (a list, a dict...)
            raise self._refusal(move) from None
        seat: int = self._to_move           # type: ignore[assignment]  # a phase with moves
        if kind >= _TAKE_KIND:
            if kind == _PASS_KIND:
                self._pass(seat)
                return
            # Take: every card of the colour on the mountain of the mandala destroyed.
            m = self._destroying
            mountain = self._mountain[m]
            taken = mountain & mask
            if not taken:
                raise IllegalMoveError(TAKE[c], f"no {COLOURS[c]} card is left on the "
                                                f"mountain of mandala {m}")
            self._mountain[m] = mountain - taken
            left = self._mountain_left ^ bit
            self._mountain_left = left
            slot = self._slot[seat]
            if slot[c]:
                self._taken[seat] += taken
            else:
                river = self._river[seat]
                river.append(c)                 # the lowest free slot
                slot[c] = len(river)
                self._taken[seat] += taken - cards     # one card goes to the river
                if len(river) == RIVER_SLOTS:
                    # The game ends at once: nothing more is taken, discarded or refilled.
                    self._finish(END_RIVER)
                    return
            if left:
                self._to_move = 1 - seat
            else:
                self._refill(m)
            return
        hands = self._hands
        hand = hands[seat]
        if hand & mask < least:
            raise IllegalMoveError(move, f"seat {seat} holds {hand >> HAND_SHIFT[c] & 15} "
                                         f"{COLOURS[c]} card(s), not {n}")
        if kind == _DISCARD_KIND:
            # Arena's reading: legal with an empty deck too (fewer or no cards are drawn).
            top = self._top
            drawn = top + n
            if drawn > self._deck_end:
                drawn = self._deck_end
            hands[seat] = hand - in_hand + self._sums[drawn] - self._sums[top]
            self._top = drawn
            self._discard += cards
            self._passes = 0
            self._to_move = 1 - seat
            return
        refused = self._refused[m]
        if kind == _FIELD_KIND:
            # Rule of colour: not on M's mountain nor in the opponent's field of M.
            if refused[seat] & bit:
                where = ("on the mountain of mandala" if refused[0] & refused[1] & bit
                         else f"in seat {1 - seat}'s field of mandala")
                raise IllegalMoveError(move, f"{COLOURS[c]} stands {where} {m} (rule of colour)")
            if hand == in_hand:             # the n cards are the whole hand
                raise IllegalMoveError(move, f"a field action must keep at least 1 card in "
                                             f"hand (seat {seat} holds {hand & 15})")
            hands[seat] = hand - in_hand
            self._field[m][seat] += cards
            self._field_size[m][seat] += n
            refused[1 - seat] |= bit
            refused[2] |= bit
        else:
            # Rule of colour: in neither field of M.
            if refused[2] & bit:
                owner = 0 if self._field[m][0] >> PILE_SHIFT[c] & 31 else 1
                raise IllegalMoveError(move, f"{COLOURS[c]} stands in seat {owner}'s field of "
                                             f"mandala {m} (rule of colour)")
            hand -= in_hand
            self._mountain[m] += cards
            refused[0] |= bit
            refused[1] |= bit
            # Arena's reading: the player draws first, then completion is checked.
            top = self._top
            drawn = top + _MOUNTAIN_DRAWS[hand & 15]
            if drawn > self._deck_end:
                drawn = self._deck_end
            hands[seat] = hand + self._sums[drawn] - self._sums[top]
            self._top = drawn
        self._passes = 0
        # Complete: all six colours on M (its mountain and the fields, either seat's
        # refusals naming the mountain and the other seat's field).
        if refused[0] | refused[1] == ALL_COLOURS:
            self._destroy(seat, m)
        else:
            self._to_move = 1 - seat

    def _refusal(self, move: str) -> IllegalMoveError:
        """Why the phase refuses a move it does not list."""
        try:
            action = _TURN.get(move) or _TAKING.get(move) or _PARSE_MORE[move]
        except (KeyError, TypeError):
            return IllegalMoveError(move, f"not a mandala move ({NOTATION_HELP})")
        kind, _, c, n = action[:4]
        seat = self._to_move
        if seat is None:
            return IllegalMoveError(move, f"the game is over ({self._end})")
        if self._destroying >= 0:
            return IllegalMoveError(move, f"mandala {self._destroying} is being destroyed: "
                                          f"seat {seat} must take a colour from its mountain")
        if kind == _TAKE_KIND:
            return IllegalMoveError(move, "take is only played while a mandala is destroyed")
        held = self._hands[seat] >> HAND_SHIFT[c] & 15     # fewer than n: n is over 8
        return IllegalMoveError(move, f"seat {seat} holds {held} {COLOURS[c]} card(s), not {n}")

    def _pass(self, seat: int) -> None:
        if self._hands[seat]:
            raise IllegalMoveError(PASS, "pass is only allowed with an empty hand")
        self._passes += 1
        if self._passes == 2:               # Arena's reading: two passes in a row end the game
            self._finish(END_PASSES)
        else:
            self._to_move = 1 - seat

    def _destroy(self, completer: int, m: int) -> None:
        """Starts taking mandala m apart: the larger field chooses first, on a tie the
        player who did not complete it."""
        mine, theirs = self._field_size[m][completer], self._field_size[m][1 - completer]
        self._destroying = m
        refused = self._refused[m]
        self._mountain_left = refused[0] & refused[1]
        self._actions = _TAKING
        self._completer = completer
        self._to_move = completer if mine > theirs else 1 - completer

    def _refill(self, m: int) -> None:
        """The end of a destruction, its mountain empty: the fields go to the discard pile,
        two cards from the deck make the new mountain."""
        field = self._field[m]
        self._discard += field[0] + field[1]
        field[0] = field[1] = 0
        self._field_size[m] = [0, 0]
        self._refused[m] = [0, 0, 0]
        self._destroying = -1
        self._actions = _TURN
        completer, self._completer = self._completer, -1
        top = self._top
        if self._deck_end - top < 2:
            self._finish(END_REFILL)
            return
        self._mountain[m], mask = PAIRS[self._sums[top + 2] - self._sums[top]]
        self._refused[m] = [mask, mask, 0]
        self._top = top + 2
        # The turn passes to the opponent of the completer, whoever took last.
        self._to_move = 1 - completer

    def _finish(self, reason: str) -> None:
        self._end = reason
        self._actions = _OVER
        self._to_move = None

    # -- results -------------------------------------------------------------------------------
    def end_reason(self) -> str:
        """Why the game ended (`river`, `refill`, `passes`), "" while it runs."""
        return self._end

    def cup_size(self, seat: int) -> int:
        return (self._secret[seat] & 15) + pile_size(self._taken[seat])

    def _cup(self, seat: int) -> list[int]:
        """The colour counts of the seat's cup, secret and taken cards together."""
        return [secret + taken for secret, taken in zip(self.secret_cup(seat),
                                                        pile_counts(self._taken[seat]))]

    def secret_cup(self, seat: int) -> list[int]:
        """The seat's face-down starting cup cards as six colour counts."""
        return hand_counts(self._secret[seat])

    def _points(self, seat: int) -> list[int]:
        """Per colour, what the seat's cup cards of that colour score."""
        slot = self._slot[seat]
        return [cards * slot[c] for c, cards in enumerate(self._cup(seat))]

    def scores(self) -> list[int]:
        if self._to_move is not None:
            raise GameNotOverError("mandala scores are known only once the game is over")
        return [sum(self._points(seat)) for seat in (0, 1)]

    def ranks(self) -> list[int]:
        scores = self.scores()
        # Higher score wins; tie: fewer cards in cup wins; still tied: shared rank.
        return ranks_from_keys([(scores[seat], -self.cup_size(seat)) for seat in (0, 1)])

    # -- what a seat sees ----------------------------------------------------------------------
    def observation(self, seat: int) -> dict[str, Any]:
        if seat not in (0, 1):
            raise ValueError(f"mandala has seats 0 and 1, not {seat!r}")
        to_move = self._to_move
        if to_move is None:
            phase = "over"
        elif self._destroying >= 0:
            phase = "take"
        else:
            phase = "turn"
        return {
            "seat": seat,
            "to_move": -1 if to_move is None else to_move,
            "phase": phase,
            "destroying": self._destroying,
            "completed_by": self._completer,
            "hand": hand_names(self._hands[seat]),
            "mandalas": [{"mountain": pile_names(self._mountain[m]),
                          "fields": [{"cards": pile_names(field)}
                                     for field in self._field[m]]}
                         for m in MANDALAS],
            "players": [{"river": [COLOURS[c] for c in self._river[s]],
                         "hand_size": self._hands[s] & 15,
                         "cup_size": self.cup_size(s),
                         "cup_taken": pile_names(self._taken[s])}
                        for s in (0, 1)],
            "discard": pile_names(self._discard),
            "deck_size": self.deck_size(),
            "passes": self._passes,
            "end": self._end,
        }

    # -- copies and text -----------------------------------------------------------------------
    def clone(self) -> "MandalaState":
        other = MandalaState.__new__(MandalaState)
        other.game = self.game
        other.players = self.players
        other.options = dict(self.options)
        other._setup = self._setup          # never mutated once made
        other._cards = self._cards          # never mutated
        other._sums = self._sums            # never mutated
        other._top = self._top
        other._deck_end = self._deck_end
        other._hands = self._hands[:]
        other._secret = self._secret        # never mutated
        other._taken = self._taken[:]
        other._river = [river[:] for river in self._river]
        other._slot = [slot[:] for slot in self._slot]
        other._mountain = self._mountain[:]
        other._field = [pair[:] for pair in self._field]
        other._field_size = [pair[:] for pair in self._field_size]
        other._discard = self._discard
        other._mountain_left = self._mountain_left
        other._refused = [masks[:] for masks in self._refused]
        other._completer = self._completer
        other._to_move = self._to_move
        other._destroying = self._destroying
        other._actions = self._actions
        other._passes = self._passes
        other._end = self._end
        return other

    def render(self) -> str:
        def pile(packed: int) -> str:
            counts = pile_counts(packed)
            return ", ".join(f"{COLOURS[c]} {counts[c]}" for c in SIX if counts[c]) or "-"

        lines = []
        for m in MANDALAS:
            lines.append(f"mandala {m}: mountain {pile(self._mountain[m])} | seat 0 field "
                         f"{pile(self._field[m][0])} | seat 1 field {pile(self._field[m][1])}")
        for s in (0, 1):
            river = " ".join(f"{slot}:{COLOURS[c]}" for slot, c in enumerate(self._river[s], 1))
            lines.append(f"seat {s}: hand {self._hands[s] & 15}, cup {self.cup_size(s)} "
                         f"(taken {pile(self._taken[s])}), river {river or '-'}")
        if self._to_move is None:
            status = f"over ({self._end})"
        elif self._destroying >= 0:
            status = f"seat {self._to_move} takes from mandala {self._destroying}"
        else:
            status = f"seat {self._to_move} to move"
        discard = sum(pile_counts(self._discard))
        lines.append(f"deck {self.deck_size()}, discard {discard}; {status}")
        return "\n".join(lines)

    def render_result(self) -> str:
        scores = self.scores()
        ranks = self.ranks()
        lines = [f"game over: {_END_TEXT[self._end]}"]
        for s in (0, 1):
            points = self._points(s)
            cup = self._cup(s)
            parts = []
            for slot, c in enumerate(self._river[s], 1):
                parts.append(f"{COLOURS[c]} {cup[c]}x{slot}={points[c]}")
            unscored = sum(cup[c] for c in SIX if not self._slot[s][c])
            if unscored:
                parts.append(f"{unscored} card(s) of colours not in the river=0")
            lines.append(f"seat {s}: {' + '.join(parts) or 'empty cup'} -> {scores[s]} points, "
                         f"{self.cup_size(s)} cards in cup, rank {ranks[s]}")
        return "\n".join(lines)


_END_TEXT = {END_RIVER: "a sixth colour reached a river",
             END_REFILL: "a destroyed mandala could not be refilled",
             END_PASSES: "both players passed in a row"}
