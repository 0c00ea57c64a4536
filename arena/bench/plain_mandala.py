"""Mandala written plainly: the yardstick `arena bench engine` measures the engine against.

The same rules as `engine/games/mandala.py` (docs/rules/mandala.md), written the way one
first writes them: piles are dicts of colour name -> count, the legal moves are built by
trying every move and sorted, nothing is memoised or kept as bit masks. It plays a deal move
for move like the engine (tests/test_bench_engine.py replays random games on both), so the
bench's ratio compares two implementations of one game in one run, on one machine.
"""
from __future__ import annotations

import random

COLOURS = ("black", "green", "orange", "purple", "red", "yellow")
HAND_LIMIT, MOUNTAIN_DRAW, RIVER_SLOTS = 8, 3, 6


def _counts(cards) -> dict[str, int]:
    counts = dict.fromkeys(COLOURS, 0)
    for card in cards:
        counts[card] += 1
    return counts


def deal(rng: random.Random) -> dict:
    """A shuffled deal in the engine's setup form (docs/notation.md)."""
    deck = [colour for colour in COLOURS for _ in range(18)]
    rng.shuffle(deck)
    cups, hands = [deck[0:2], deck[2:4]], [deck[4:10], deck[10:16]]
    mountains = [deck[16:18], deck[18:20]]
    return {"cups": [sorted(c) for c in cups], "hands": [sorted(h) for h in hands],
            "mountains": [sorted(m) for m in mountains], "deck": deck[20:]}


class PlainMandala:
    """One game of Mandala from a setup; seat 0 moves first."""

    def __init__(self, setup: dict):
        self.deck = list(setup["deck"])
        self.hands = [_counts(hand) for hand in setup["hands"]]
        self.cups = [_counts(cup) for cup in setup["cups"]]
        self.rivers: list[list[str]] = [[], []]
        self.mountains = [_counts(mountain) for mountain in setup["mountains"]]
        self.fields = [[_counts(()), _counts(())] for _ in range(2)]   # [mandala][seat]
        self.discard = _counts(())
        self.turn = 0            # whose turn (during a destruction: the completer's)
        self.mover: int | None = 0
        self.destroying = -1
        self.passes = 0

    def to_move(self) -> int | None:
        return self.mover

    def is_over(self) -> bool:
        return self.mover is None

    # -- legal moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[str]:
        seat = self.mover
        if seat is None:
            return []
        if self.destroying >= 0:
            mountain = self.mountains[self.destroying]
            return sorted(f"take {c}" for c in COLOURS if mountain[c])
        hand = self.hands[seat]
        held = sum(hand.values())
        if held == 0:
            return ["pass"]
        moves = []
        for c in COLOURS:
            for n in range(1, hand[c] + 1):
                moves.append(f"discard {c} {n}")
        for m in range(2):
            fields = self.fields[m]
            for c in COLOURS:
                if not hand[c]:
                    continue
                if not self.mountains[m][c] and not fields[1 - seat][c]:
                    for n in range(1, min(hand[c], held - 1) + 1):
                        moves.append(f"field {m} {c} {n}")
                if not fields[0][c] and not fields[1][c]:
                    moves.append(f"mountain {m} {c}")
        return sorted(moves)

    # -- moves ---------------------------------------------------------------------------------
    def apply(self, move: str) -> None:
        seat = self.mover
        words = move.split()
        if not self._allowed(seat, words):
            raise ValueError(f"illegal move {move!r}")
        if words[0] == "take":
            self._take(seat, words[1])
            return
        if words[0] == "pass":
            self.passes += 1
            if self.passes == 2:
                self.mover = None
            else:
                self.mover = self.turn = 1 - seat
            return
        self.passes = 0
        hand = self.hands[seat]
        if words[0] == "discard":
            colour, n = words[1], int(words[2])
            hand[colour] -= n
            self.discard[colour] += n
            self._draw(seat, n)
        elif words[0] == "field":
            m, colour, n = int(words[1]), words[2], int(words[3])
            hand[colour] -= n
            self.fields[m][seat][colour] += n
            self._check_complete(seat, m)
        else:
            m, colour = int(words[1]), words[2]
            hand[colour] -= 1
            self.mountains[m][colour] += 1
            self._draw(seat, min(MOUNTAIN_DRAW, HAND_LIMIT - sum(hand.values())))
            self._check_complete(seat, m)
        if self.destroying < 0:
            self.mover = self.turn = 1 - seat

    def _allowed(self, seat: int | None, words: list[str]) -> bool:
        """The move's own conditions, checked directly (as the engine does, not by building
        the legal list again)."""
        if seat is None or not words:
            return False
        if self.destroying >= 0:
            return (words[0] == "take" and len(words) == 2 and words[1] in COLOURS
                    and self.mountains[self.destroying][words[1]] > 0)
        hand = self.hands[seat]
        held = sum(hand.values())
        try:
            if words == ["pass"]:
                return held == 0
            if words[0] == "discard" and len(words) == 3:
                return 1 <= int(words[2]) <= hand[words[1]]
            if words[0] == "field" and len(words) == 4:
                m, c, n = int(words[1]), words[2], int(words[3])
                return (1 <= n <= min(hand[c], held - 1) and not self.mountains[m][c]
                        and not self.fields[m][1 - seat][c])
            if words[0] == "mountain" and len(words) == 3:
                m, c = int(words[1]), words[2]
                return hand[c] > 0 and not self.fields[m][0][c] and not self.fields[m][1][c]
        except (KeyError, ValueError, IndexError):
            return False
        return False

    def _draw(self, seat: int, wanted: int) -> None:
        for _ in range(wanted):
            if self.deck:
                self.hands[seat][self.deck.pop(0)] += 1

    def _check_complete(self, seat: int, m: int) -> None:
        areas = [self.mountains[m], *self.fields[m]]
        if all(any(area[c] for area in areas) for c in COLOURS):
            mine = sum(self.fields[m][seat].values())
            theirs = sum(self.fields[m][1 - seat].values())
            self.destroying = m
            self.mover = seat if mine > theirs else 1 - seat

    def _take(self, seat: int, colour: str) -> None:
        m = self.destroying
        count, self.mountains[m][colour] = self.mountains[m][colour], 0
        if colour in self.rivers[seat]:
            self.cups[seat][colour] += count
        else:
            self.rivers[seat].append(colour)
            self.cups[seat][colour] += count - 1
            if len(self.rivers[seat]) == RIVER_SLOTS:
                self.mover = None
                return
        if any(self.mountains[m].values()):
            self.mover = 1 - seat
            return
        for field in self.fields[m]:
            for c in COLOURS:
                self.discard[c] += field[c]
                field[c] = 0
        self.destroying = -1
        if len(self.deck) < 2:
            self.mover = None
            return
        for _ in range(2):
            self.mountains[m][self.deck.pop(0)] += 1
        self.mover = self.turn = 1 - self.turn

    # -- results -------------------------------------------------------------------------------
    def scores(self) -> list[int]:
        return [sum(count * (self.rivers[seat].index(c) + 1)
                    for c, count in self.cups[seat].items() if c in self.rivers[seat])
                for seat in (0, 1)]
