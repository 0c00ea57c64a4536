"""`greedy` for `flowers-mandala`: one ply of look-ahead from the observation alone.

Each `play M COLOUR N` is valued by what it does to mandala M and to the hand:

- the claim: taking (or keeping) the claim marker of a mandala is worth a share of the best
  tile there for this seat (its points gain, pairing included), a share that grows with
  the colours already present, since a fuller mandala is destroyed sooner;
- completion: completing a mandala we hold after the move gives us the tile choice now;
  completing one somebody else holds gives them a tile, which costs us (less if we get the
  second tile); bringing a mandala held by another to five colours invites its completion;
- cards: a single card draws (card advantage), every further card is spent.

The tile choice keeps the tile that gains us most minus what the other tile gains the
second player. Ties are broken by `rng`, so the bot stays deterministic per seed.
"""
from __future__ import annotations

import random

from engine.games.flowers_mandala import flower_points, single_points, tile_colour

CLAIM_SHARE_BASE = 0.25     # share of a mandala's value for holding its claim, empty mandala
CLAIM_SHARE_PER_COLOUR = 0.1  # ... plus this per colour present after the move
GIFT_SHARE = 0.7            # cost of handing an opponent a tile, as a share of its value
FIVE_COLOURS_RISK = 0.4     # cost of making a mandala held by another one colour from complete
DRAW_BONUS = 1.0            # playing a single card refills the hand
CARD_COST = 0.35            # each card spent beyond the first
SINGLE_HOPE = {True: 1.5, False: 0.5}  # future pairing value of an unpaired tile (x3 or not)


def greedy(observation: dict, legal_moves: list[str], rng: random.Random) -> str:
    if len(legal_moves) == 1:
        return legal_moves[0]
    if observation["decision"] == "tile":
        return _choose_tile(observation, legal_moves)
    seat = observation["seat"]
    singles = observation["tableaus"][seat]["singles"]
    views = [_MandalaView(mandala, seat, singles) for mandala in observation["mandalas"]]
    hand_size = len(observation["hand"])
    up_to_4 = observation["draw_rule"] == "up-to-4"
    best_moves, best_value = [], float("-inf")
    for move in legal_moves:
        _, mandala, colour, count = move.split(" ")
        n = int(count)
        value = views[int(mandala)].value(colour, n)
        if n == 1:
            if not up_to_4 or hand_size - 1 < 8:
                value += DRAW_BONUS
        else:
            value -= CARD_COST * (n - 1)
        if value > best_value + 1e-9:
            best_moves, best_value = [move], value
        elif value > best_value - 1e-9:
            best_moves.append(move)
    return rng.choice(best_moves)


def tile_gain(singles: list[str], tile: str) -> float:
    """Points a tile adds to a tableau with these unpaired tiles, plus its pairing hope."""
    colour = tile_colour(tile)
    for single in singles:
        if tile_colour(single) == colour:
            return flower_points(single, tile) - single_points(single) - hope(single)
    return single_points(tile) + hope(tile)


def hope(tile: str) -> float:
    return SINGLE_HOPE[tile.endswith("x3")]


class _MandalaView:
    """What one mandala offers this seat, worked out once per decision."""

    def __init__(self, mandala: dict, seat: int, singles: list[str]):
        self.seat = seat
        self.present = set(mandala["present"])
        self.claim = mandala["claim"]
        tiles = [tile for tile in (mandala["dark_tile"], mandala["light_tile"]) if tile]
        gains = sorted((tile_gain(singles, tile) for tile in tiles), reverse=True)
        self.best = gains[0] if gains else 0.0
        self.worst = gains[-1] if gains else 0.0
        # What the tiles are worth to somebody else: roughly their face values.
        self.gift = max((single_points(tile) + hope(tile) for tile in tiles), default=0.0)
        sides = mandala["sides"]
        self.counts = [len(side["face_up"]) + len(side["face_down"]) for side in sides]
        self.ups = [len(side["face_up"]) for side in sides]
        self.rival = max((self.counts[other] for other in range(len(sides))
                          if other != seat and self.ups[other]), default=0)

    def value(self, colour: str, n: int) -> float:
        new = colour not in self.present
        colours = len(self.present) + new
        mine = self.counts[self.seat] + n
        up = self.ups[self.seat] + (n if new else 0)
        holds = self.claim == self.seat or (up > 0 and mine > self.rival)
        if colours == 6:
            if holds:
                return self.best
            second = up > 0 and mine >= self.rival
            return (self.worst if second else 0.0) - GIFT_SHARE * self.gift
        # The change in this mandala's claim value: held before and after, it only gains
        # from a new colour (the mandala nears its destruction).
        value = self.best * (holds * claim_share(colours)
                             - (self.claim == self.seat) * claim_share(len(self.present)))
        if not holds and colours == 5 and new:
            value -= FIVE_COLOURS_RISK * self.gift
        return value


def claim_share(colours: int) -> float:
    return CLAIM_SHARE_BASE + CLAIM_SHARE_PER_COLOUR * colours


def _choose_tile(observation: dict, legal_moves: list[str]) -> str:
    """Keep the tile worth most to us minus what the other one is worth to the second."""
    seat, second = observation["seat"], observation["second"]
    mandala = observation["mandalas"][observation["destroying"]]
    tableaus = observation["tableaus"]
    dark, light = mandala["dark_tile"], mandala["light_tile"]
    mine, theirs = tableaus[seat]["singles"], tableaus[second]["singles"]
    keep_dark = tile_gain(mine, dark) - tile_gain(theirs, light)
    keep_light = tile_gain(mine, light) - tile_gain(theirs, dark)
    return "tile dark" if keep_dark >= keep_light else "tile light"
