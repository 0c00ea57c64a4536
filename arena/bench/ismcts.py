"""Search speed of the `ismcts` reference bot: iterations per CPU second, per game and
player count, one core.

Positions come from greedy games (seeds 0, 1, ...), every fifth decision; each gets the
same share of the time. An iteration is one determinisation, one walk down the tree, one
leaf valued (a random playout, or a static estimate where the game has one). The rates
divide by the CPU time of the measuring thread, as in `arena bench engine`.
"""
from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass

from arena.bench.engine import configurations
from arena.sdk import strategies
from arena.sdk.ismcts import Searcher, time_budget
from engine import registry
from engine.core import CHANCE

POSITIONS = 10
MOVE_TIME = 0.2     # the ladder's time control: what one move gets to think


@dataclass(frozen=True)
class Figure:
    game: str
    players: int
    positions: int
    iterations: int
    cpu_seconds: float
    iterations_per_second: float
    iterations_per_move: float      # at MOVE_TIME per move, from the rate above

    def to_json(self) -> dict:
        return asdict(self)


def positions(game_id: str, players: int, count: int) -> list:
    """(observation, legal moves) of `count` decisions with a choice, from greedy games."""
    game = registry.get(game_id)
    greedy = strategies.get("greedy", game_id)
    found, seed = [], 0
    while len(found) < count:
        state, rng = game.new_state(players, seed=seed), random.Random(seed)
        decision = 0
        while not state.is_over() and len(found) < count:
            mover = state.to_move()
            if mover == CHANCE:
                state.apply(state.sample_chance(rng))
                continue
            seen, legal = state.observation(mover), state.legal_moves()
            if len(legal) > 1 and decision % 5 == 0:
                found.append((seen, legal))
            decision += 1
            state.apply(greedy(seen, legal, rng))
        seed += 1
    return found


def measure(game_id: str, players: int, seconds: float) -> Figure:
    chosen = positions(game_id, players, POSITIONS)
    searcher = Searcher(game_id)
    rng = random.Random(0)
    iterations = 0
    cpu_started = time.thread_time()
    for seen, legal in chosen:
        iterations += searcher.search(seen, legal, rng, seconds=seconds / len(chosen)).iterations
    cpu = max(time.thread_time() - cpu_started, 1e-6)
    rate = iterations / cpu
    budget = time_budget(None, MOVE_TIME, MOVE_TIME)
    return Figure(game_id, players, len(chosen), iterations, round(cpu, 3), round(rate, 1),
                  round(rate * budget, 1))


def measure_all(game_ids: list[str] | None, seconds: float) -> list[Figure]:
    return [measure(game_id, players, seconds)
            for game_id, players in configurations(game_ids)]
