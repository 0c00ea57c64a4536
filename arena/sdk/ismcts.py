"""Information-set Monte Carlo tree search over the engine, for any game and player count.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, 2012): one tree over the searching
seat's information sets, whose edges are moves. Each iteration draws one determinisation (a
full state the seat cannot tell from the real one, `Game.determinize`), walks the tree down
with UCB among the moves legal in that determinisation, adds one node, plays the game out at
random on the fast engine, and credits every move on the path with the result as the player
who made it sees it. A move is compared with the others only over the iterations where it was
legal (its `available` count replaces the parent's visits in UCB). Chance moves are drawn
as they come and do not branch the tree: like hidden cards, they are part of what one
determinisation fixes. The answer is the most visited move at the root.

The result of a playout, per seat, is its share of the opponents it beat (a tie counts half),
plus a little for its score margin so that the search still feels the difference between a
narrow and a wide loss; for a single player (`flowers` 1p) only the score counts.
"""
from __future__ import annotations

import gc
import math
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from arena.strategies import flowers as flowers_strategy
from arena.strategies import flowers_mandala as fm_strategy
from engine import registry
from engine.core import CHANCE, State

EXPLORATION = {"mandala": 0.7, "flowers": 0.25, "flowers-mandala": 0.25}
"""UCB constant per game, on rewards in [0, 1]: valued leaves differ by less than playouts."""
MARGIN_WEIGHT = 0.1    # share of the reward that comes from the score margin
MARGIN_SCALE = 10.0    # points of margin that make most of that share
SOLO_SCALE = 15.0      # points around which a lone player's reward bends
ESTIMATE_SCALE = 4.0   # estimated points between two seats that make most of a win
CONTENDED_SHARE = 0.5  # below this share of a core, a timed search stops at half its time
MOVE_SHARE = 0.6       # of a move's time limit, what a search may spend
HINT_SHARE = 0.1       # head start of a heuristic's move in the final count
HAND_CARD_VALUE = 0.2  # flowers-mandala: a card in hand, in points


class _Node:
    """An edge into an information set: who moved, how often, and what it brought them."""

    __slots__ = ("seat", "children", "visits", "reward", "available")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.available = 0


@dataclass(frozen=True)
class Result:
    """What one search did: the move, and figures for logs and benchmarks."""

    move: str
    iterations: int
    seconds: float
    visits: dict[str, int]


def rewards(state: State) -> list[float]:
    """Per seat, what the finished game is worth to it, in [0, 1]."""
    scores = state.scores()
    players = len(scores)
    if players == 1:
        return [0.5 + 0.5 * math.tanh(scores[0] / SOLO_SCALE)]
    ranks = state.ranks()
    result = []
    for seat in range(players):
        beaten = sum(1.0 if ranks[seat] < ranks[other] else 0.5 if ranks[seat] == ranks[other]
                     else 0.0 for other in range(players) if other != seat)
        margin = scores[seat] - sum(scores[o] for o in range(players) if o != seat) / (players - 1)
        result.append((1 - MARGIN_WEIGHT) * beaten / (players - 1)
                      + MARGIN_WEIGHT * (0.5 + 0.5 * math.tanh(margin / MARGIN_SCALE)))
    return result


def playout(state: State, rng: random.Random) -> list[float]:
    """Plays the state to its end with uniformly random moves (chance drawn as it comes);
    the result per seat."""
    choice = rng.choice
    while not state.is_over():
        if state.to_move() == CHANCE:
            state.apply(state.sample_chance(rng))
        else:
            state.apply(choice(state.legal_moves()))
    return rewards(state)


def flowers_leaf(state, rng: random.Random) -> list[float]:
    """`flowers` needs no playout: random placements wreck a garden, so a random game's end
    says little about a position. Each garden is valued by greedy's estimate of its final
    points instead, and seats are compared on it as on final scores."""
    if state.is_over():
        return rewards(state)
    turns_left = max(1.0, min(len(pile) for pile in state.piles) * 2.5 / state.players)
    values = [flowers_strategy.estimate(garden, turns_left,
                                        state.held if seat == state.seat else "")
              for seat, garden in enumerate(state.gardens)]
    return _shares(values)


def flowers_mandala_leaf(state, rng: random.Random) -> list[float]:
    """`flowers-mandala` values a leaf too: random play throws cards about and completes
    mandalas for whoever holds them, so its results hardly depend on the position. A seat
    is worth its points, the pairing hope of its unpaired tiles, a share of the best tile
    of each mandala it holds (larger as the mandala fills up) and a little per card held:
    the measures greedy uses."""
    if state.is_over():
        return rewards(state)
    values = []
    for seat in range(state.players):
        singles = state.singles[seat]
        value = state.points(seat) + sum(fm_strategy.hope(tile) for tile in singles)
        for mandala, holder in enumerate(state.claims):
            if holder == seat and state.centres[mandala]:
                colours = bin(state.present[mandala]).count("1")
                value += fm_strategy.claim_share(colours) * max(
                    fm_strategy.tile_gain(singles, tile) for tile in state.centres[mandala])
        values.append(value + HAND_CARD_VALUE * state.hand_totals[seat])
    return _shares(values)


def _shares(values: list[float]) -> list[float]:
    """Per seat, a soft share of the opponents it is ahead of (1p: a soft value)."""
    players = len(values)
    if players == 1:
        return [0.5 + 0.5 * math.tanh(values[0] / SOLO_SCALE)]
    return [sum(0.5 + 0.5 * math.tanh((values[seat] - values[other]) / ESTIMATE_SCALE)
                for other in range(players) if other != seat) / (players - 1)
            for seat in range(players)]


LEAVES = {"flowers": flowers_leaf, "flowers-mandala": flowers_mandala_leaf}
"""Game id -> how a search leaf is valued; other games play it out at random."""


class Searcher:
    """ISMCTS from one seat's observation of a game with these rule options."""

    def __init__(self, game_id: str, options: Mapping[str, Any] | None = None,
                 exploration: float | None = None) -> None:
        self.game = registry.get(game_id)
        self.options = dict(options or {})
        self.exploration = EXPLORATION[game_id] if exploration is None else exploration
        self.leaf = LEAVES.get(game_id, playout)

    def search(self, observation: Mapping[str, Any], legal_moves: list[str],
               rng: random.Random, *, iterations: int | None = None,
               seconds: float | None = None, hint: str | None = None) -> Result:
        """The move to play: runs `iterations` iterations, or as many as fit in `seconds`
        (at least one). With `iterations` the answer depends only on rng and the input.

        A search on a busy machine (it got less than CONTENDED_SHARE of a core so far) stops
        at half its time: there the scheduler's pauses are long and frequent, and the time
        left is what absorbs them before the deadline.

        `hint` (a heuristic's choice) starts the final count with a head start of
        HINT_SHARE of the iterations: with few iterations the visit counts are noisy, and
        another move must then earn clearly more visits to be played instead."""
        if iterations is None and seconds is None:
            raise ValueError("give an iteration count or a time budget")
        started, cpu_started = time.perf_counter(), time.thread_time()
        if len(legal_moves) == 1:
            return Result(legal_moves[0], 0, 0.0, {legal_moves[0]: 0})
        seat = observation["seat"]
        deal = self.game.determinizer(observation, seat, options=self.options)
        root = _Node(seat)
        done = 0
        # The tree holds no reference cycles (refcounting frees it): the cyclic collector's
        # passes over thousands of nodes would only be pauses the clock cannot afford.
        collecting = gc.isenabled()
        gc.disable()
        try:
            while True:
                self._iterate(root, deal, seat, rng)
                done += 1
                if iterations is not None and done >= iterations:
                    break
                if seconds is not None:
                    elapsed = time.perf_counter() - started
                    if elapsed >= seconds or (
                            elapsed >= seconds / 2 and time.thread_time() - cpu_started
                            < CONTENDED_SHARE * elapsed):
                        break
        finally:
            if collecting:
                gc.enable()
        visits = {move: root.children[move].visits if move in root.children else 0
                  for move in legal_moves}
        counted = dict(visits)
        if hint in counted:
            counted[hint] += HINT_SHARE * done
        # Most visits; ties go to the first move in the sorted legal list (deterministic).
        move = max(legal_moves, key=lambda m: counted[m])
        return Result(move, done, time.perf_counter() - started, visits)

    def _iterate(self, root: _Node, deal: Callable[[random.Random], State], seat: int,
                 rng: random.Random) -> None:
        state = deal(rng)   # a state the seat cannot tell from the real one
        node, path = root, []
        log, sqrt, c = math.log, math.sqrt, self.exploration
        while not state.is_over():
            mover = state.to_move()
            if mover == CHANCE:
                state.apply(state.sample_chance(rng))
                continue
            children = node.children
            untried = []
            best, best_value = None, -1.0
            for move in state.legal_moves():
                child = children.get(move)
                if child is None:
                    untried.append(move)
                    continue
                child.available += 1
                if not untried:
                    value = (child.reward / child.visits
                             + c * sqrt(log(child.available) / child.visits))
                    if value > best_value:
                        best, best_value = move, value
            if untried:
                move = rng.choice(untried)
                child = children[move] = _Node(mover)
                child.available = 1
                state.apply(move)
                path.append(child)
                break
            state.apply(best)
            node = children[best]
            path.append(node)
        result = self.leaf(state, rng)
        for node in path:
            node.visits += 1
            node.reward += result[node.seat]


def time_budget(remaining: float | None, move_limit: float | None, allowed: float | None,
                increment: float = 0.0) -> float:
    """Seconds to think about one move: 60% of what this move may take, keeping at least
    70 ms for the rest of the answer (the heuristic hint, the reply's way back, and a busy
    machine's scheduling delays, which in a league on shared cores reached 50 ms and more);
    with a bank only a twentieth of it plus most of the increment (a match has dozens of
    decisions)."""
    share = math.inf
    if allowed is not None:
        share = min(MOVE_SHARE * allowed, allowed - 0.07)
    if remaining is not None:
        share = min(share, remaining / 20 + 0.8 * increment)
    if move_limit is None and remaining is None:
        share = 1.0          # no limit at all: a second is plenty
    return max(share, 0.005)
