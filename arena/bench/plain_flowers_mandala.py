"""Flowers: A Mandala Game written plainly: the yardstick `arena bench engine` measures the
flowers-mandala engine against (issue 23).

The same rules as `engine/games/flowers_mandala.py` (docs/rules/flowers-mandala.md, default
options: draw up to 4, 6 cards dealt, 18 cards of each colour, tiles `1 1 2 2 3 x3`), written
the way one first writes them: hands and mandala sides are dicts of colour name -> count, the
legal moves are built by trying every move and sorted, a turn's steps run one after another
and stop where a decision is pending (a reshuffle, a tile choice), nothing is memoised. It
plays a deal move for move like the engine, chance moves included (tests/
test_games_and_bench_cli.py replays random games on both), so the bench's ratio compares two
implementations of one game in one run, on one machine.
"""
from __future__ import annotations

import random
from itertools import permutations

from engine.core import CHANCE

COLOURS = ("green", "grey", "orange", "purple", "red", "yellow")
DARK, LIGHT = ("grey", "purple", "red"), ("green", "orange", "yellow")
TILE_VALUES = ("1", "1", "2", "2", "3", "x3")
CARDS_PER_COLOUR, HAND_SIZE, HAND_LIMIT, DRAWS = 18, 6, 8, 4
MANDALAS, FLOWERS_TO_END = 3, 3


def deal(rng: random.Random, players: int) -> dict:
    """A shuffled deal in the engine's setup form (docs/notation.md): stacks top first."""
    cards = [colour for colour in COLOURS for _ in range(CARDS_PER_COLOUR)]
    rng.shuffle(cards)
    dark = [f"{colour}:{value}" for colour in DARK for value in TILE_VALUES]
    light = [f"{colour}:{value}" for colour in LIGHT for value in TILE_VALUES]
    rng.shuffle(dark)
    rng.shuffle(light)
    return {"hands": [sorted(cards[seat * HAND_SIZE:(seat + 1) * HAND_SIZE])
                      for seat in range(players)],
            "deck": cards[players * HAND_SIZE:],
            "centres": [[dark[m], light[m]] for m in range(MANDALAS)],
            "dark": dark[MANDALAS:], "light": light[MANDALAS:]}


def _counts(cards) -> dict[str, int]:
    counts = dict.fromkeys(COLOURS, 0)
    for card in cards:
        counts[card] += 1
    return counts


def _colour(tile: str) -> str:
    return tile.split(":")[0]


def _value(tile: str) -> int | None:
    value = tile.split(":")[1]
    return None if value == "x3" else int(value)


class PlainFlowersMandala:
    """One game from a setup; seat 0 moves first."""

    def __init__(self, setup: dict, players: int):
        self.players = players
        self.hands = [_counts(hand) for hand in setup["hands"]]
        self.deck = list(setup["deck"])               # top first
        self.discard = _counts(())
        self.dark, self.light = list(setup["dark"]), list(setup["light"])   # top first
        self.mandalas = [{"tiles": list(pair), "claim": None,
                          "up": [_counts(()) for _ in range(players)],
                          "down": [_counts(()) for _ in range(players)]}
                         for pair in setup["centres"]]
        self.singles: list[list[str]] = [[] for _ in range(players)]
        self.flowers: list[list[tuple[str, str]]] = [[] for _ in range(players)]
        self.turn = 0
        self.passes = 0
        self.active = -1         # the mandala played on this turn
        self.to_draw = 0         # cards still to draw in this turn's draw step
        self.game_ends = False   # a stack ran out or a third flower came: ends with this turn
        self.ending = False      # the end-of-game destructions are under way
        self.candidates: list[int] = []   # mandalas the `order` chance move orders
        self.queue: list[int] = []        # mandalas still to destroy at the end
        self.choice: tuple[int, int, int] | None = None   # (mandala, holder, second)
        self.phase = "play"      # play, deck (chance), tile, order (chance) or over

    def to_move(self):
        if self.phase == "play":
            return self.turn
        if self.phase == "tile":
            return self.choice[1]
        if self.phase == "over":
            return None
        return CHANCE

    def is_over(self) -> bool:
        return self.phase == "over"

    # -- legal moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[str]:
        if self.phase == "play":
            hand = self.hands[self.turn]
            held = sum(hand.values())
            if held == 0:
                return ["pass"]
            moves = []
            for m in range(MANDALAS):
                for colour in COLOURS:
                    for n in range(1, hand[colour] + 1):
                        if n == 1 or n < held:
                            moves.append(f"play {m} {colour} {n}")
            return sorted(moves)
        if self.phase == "tile":
            return ["tile dark", "tile light"]
        if self.phase == "order":
            return sorted("order " + " ".join(map(str, order))
                          for order in permutations(self.candidates))
        return []       # a reshuffle has too many outcomes to list; or the game is over

    def sample_chance(self, rng: random.Random) -> str:
        if self.phase == "deck":
            cards = [colour for colour in COLOURS for _ in range(self.discard[colour])]
            rng.shuffle(cards)
            return "deck " + " ".join(cards)
        order = list(self.candidates)
        rng.shuffle(order)
        return "order " + " ".join(map(str, order))

    # -- moves ---------------------------------------------------------------------------------
    def apply(self, move: str) -> None:
        words = move.split()
        if not self._allowed(words):
            raise ValueError(f"illegal move {move!r}")
        if self.phase == "play" and words[0] == "pass":
            self.passes += 1
            if self.passes == self.players:
                self._begin_end(list(range(MANDALAS)))
            else:
                self.turn = (self.turn + 1) % self.players
        elif self.phase == "play":
            self._play(int(words[1]), words[2], int(words[3]))
        elif self.phase == "deck":
            self.deck = words[1:]
            self.discard = _counts(())
            self.phase = "play"
            self._rest_of_turn()
        elif self.phase == "tile":
            self._choose_tile(words[1] == "dark")
        else:
            self.queue = [int(word) for word in words[1:]]
            self.ending = True
            self._next_end_destruction()

    def _allowed(self, words: list[str]) -> bool:
        """The move's own conditions, checked directly."""
        if self.phase == "play":
            hand = self.hands[self.turn]
            held = sum(hand.values())
            if words == ["pass"]:
                return held == 0
            if len(words) != 4 or words[0] != "play" or words[1] not in ("0", "1", "2"):
                return False
            colour, count = words[2], words[3]
            if colour not in COLOURS or not count.isdigit() or count != str(int(count)):
                return False
            n = int(count)
            return 1 <= n <= hand[colour] and (n == 1 or n < held)
        if self.phase == "tile":
            return words in (["tile", "dark"], ["tile", "light"])
        if self.phase == "deck":
            return (words[0] == "deck" and all(word in COLOURS for word in words[1:])
                    and _counts(words[1:]) == self.discard)
        if self.phase == "order":
            return words[0] == "order" and sorted(words[1:]) == sorted(map(str, self.candidates))
        return False

    def _play(self, m: int, colour: str, n: int) -> None:
        seat = self.turn
        mandala = self.mandalas[m]
        self.hands[seat][colour] -= n
        if colour in self._colours_shown(m):
            mandala["down"][seat][colour] += n
        else:
            mandala["up"][seat][colour] += n
        self.passes = 0
        self.active = m
        held = sum(self.hands[seat].values())
        self.to_draw = DRAWS if n == 1 and held < HAND_LIMIT else 0
        self._rest_of_turn()

    def _colours_shown(self, m: int) -> set[str]:
        """The tiles' colours and those of the face-up cards on mandala m."""
        mandala = self.mandalas[m]
        shown = {_colour(tile) for tile in mandala["tiles"] or []}
        for side in mandala["up"]:
            shown |= {colour for colour in COLOURS if side[colour]}
        return shown

    def _rest_of_turn(self) -> None:
        """Draw, check the claim, complete; stops where a reshuffle or a tile is pending."""
        seat, m = self.turn, self.active
        hand = self.hands[seat]
        while self.to_draw and sum(hand.values()) < HAND_LIMIT:
            if not self.deck:
                if any(self.discard.values()):
                    self.phase = "deck"
                    return
                break
            hand[self.deck.pop(0)] += 1
            self.to_draw -= 1
        self.to_draw = 0
        self._check_claim(seat, m)
        if len(self._colours_shown(m)) == len(COLOURS):
            if self._destroy(m, completer=seat):
                return              # the holder chooses a tile first
        self._end_turn()

    def _cards_on(self, m: int, seat: int) -> int:
        mandala = self.mandalas[m]
        return sum(mandala["up"][seat].values()) + sum(mandala["down"][seat].values())

    def _face_up(self, m: int, seat: int) -> int:
        return sum(self.mandalas[m]["up"][seat].values())

    def _check_claim(self, seat: int, m: int) -> None:
        if not self._face_up(m, seat):
            return
        mine = self._cards_on(m, seat)
        if all(mine > self._cards_on(m, other) for other in range(self.players)
               if other != seat and self._face_up(m, other)):
            self.mandalas[m]["claim"] = seat

    def _end_turn(self) -> None:
        if self.game_ends:
            self._begin_end([m for m in range(MANDALAS) if m != self.active])
        else:
            self.turn = (self.turn + 1) % self.players

    # -- destroying a mandala ------------------------------------------------------------------
    def _destroy(self, m: int, completer: int | None) -> bool:
        """Destroys mandala m; True when its holder must choose a tile first."""
        mandala = self.mandalas[m]
        holder = mandala["claim"]
        if holder is None:
            self._clear(m, takers=())          # its tiles leave the game
            return False
        second = self._second(m, holder, completer)
        if second is None:
            for tile in mandala["tiles"]:
                self._take_tile(holder, tile)
            self._clear(m, takers=(holder,))
            return False
        self.choice = (m, holder, second)
        self.phase = "tile"
        return True

    def _second(self, m: int, holder: int, completer: int | None) -> int | None:
        if self.players == 2 and completer == holder:
            other = 1 - holder
            everything = self._cards_on(m, 0) + self._cards_on(m, 1)
            if self._face_up(m, other) and 2 * self._cards_on(m, other) >= everything:
                return other
            return None
        keys = {seat: (self._cards_on(m, seat), self._face_up(m, seat))
                for seat in range(self.players) if seat != holder and self._face_up(m, seat)}
        if not keys:
            return None
        best = max(keys.values())
        leaders = [seat for seat, key in keys.items() if key == best]
        return leaders[0] if len(leaders) == 1 else None

    def _choose_tile(self, keep_dark: bool) -> None:
        m, holder, second = self.choice
        dark, light = self.mandalas[m]["tiles"]
        self._take_tile(holder, dark if keep_dark else light)
        self._take_tile(second, light if keep_dark else dark)
        self.choice = None
        self.phase = "play"
        self._clear(m, takers=(holder, second))
        if self.ending:
            self._next_end_destruction()
        else:
            self._end_turn()

    def _take_tile(self, seat: int, tile: str) -> None:
        for single in self.singles[seat]:
            if _colour(single) == _colour(tile):
                self.singles[seat].remove(single)
                self.flowers[seat].append((single, tile))
                if len(self.flowers[seat]) >= FLOWERS_TO_END:
                    self.game_ends = True
                return
        self.singles[seat].append(tile)

    def _clear(self, m: int, takers: tuple[int, ...]) -> None:
        """Takers discard their cards on m, the others take theirs back; new tiles."""
        mandala = self.mandalas[m]
        for seat in range(self.players):
            pile = self.discard if seat in takers else self.hands[seat]
            for side in (mandala["up"][seat], mandala["down"][seat]):
                for colour in COLOURS:
                    pile[colour] += side[colour]
                    side[colour] = 0
        mandala["claim"] = None
        if self.ending or not self.dark or not self.light:
            if not self.ending:
                self.game_ends = True
            mandala["tiles"] = None
        else:
            mandala["tiles"] = [self.dark.pop(0), self.light.pop(0)]

    # -- the end -------------------------------------------------------------------------------
    def _begin_end(self, mandalas: list[int]) -> None:
        self.candidates = mandalas
        self.phase = "order"

    def _next_end_destruction(self) -> None:
        self.phase = "play"
        while self.queue:
            if self._destroy(self.queue.pop(0), completer=None):
                return
        self.phase = "over"

    # -- results -------------------------------------------------------------------------------
    def scores(self) -> list[int]:
        def flower(a: int | None, b: int | None) -> int:
            if a is None and b is None:
                return 0
            if a is None or b is None:
                return 3 * (b if a is None else a)
            return 2 * min(a, b) + max(a, b)

        return [sum(_value(tile) or 0 for tile in self.singles[seat])
                + sum(flower(_value(a), _value(b)) for a, b in self.flowers[seat])
                for seat in range(self.players)]

    def cards_in_hand(self) -> list[int]:
        return [sum(hand.values()) for hand in self.hands]
