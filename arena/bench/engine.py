"""Random-playout speed of the engines: plies and games per second, one core, one process.

Each configuration (game, player count) plays random games for a fixed wall time with the
loop below, game creation included; every applied move counts as a ply, chance included.
Seeds run 0, 1, 2, ... so a configuration always plays the same games in the same order.
The rates divide by the CPU time of the measuring thread, not the wall time: "per second on
one core" stays the same figure when other processes share the machine's cores.
"""
from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass

from engine import registry
from engine.core import CHANCE

# Plies per second the issues ask for (issue 2: mandala; 3: flowers-mandala; 4: flowers).
TARGETS = {
    ("mandala", 2): 80_000,
    ("flowers-mandala", 4): 50_000,
    ("flowers", 2): 120_000,
    ("flowers", 1): 60_000,
}

# Plies per second of a plain, unoptimised implementation of the same rules on this machine,
# as the issues that built the engines state them (issues 2, 3 and 4). Issue 23 measures the
# engines against them: each should be at least SPEEDUP_TARGET times as fast.
PLAIN = {
    ("mandala", 2): 38_000,
    ("flowers-mandala", 4): 25_000,
    ("flowers", 2): 64_000,
    ("flowers", 1): 32_000,
}
SPEEDUP_TARGET = 5


@dataclass(frozen=True)
class Figure:
    """What one configuration measured."""

    game: str
    players: int
    games: int
    plies: int
    seconds: float              # wall time
    cpu_seconds: float          # CPU time of the playouts: the rates below divide by it
    plies_per_second: float
    games_per_second: float
    target_plies_per_second: int | None
    plain_plies_per_second: int | None

    @property
    def meets_target(self) -> bool | None:
        if self.target_plies_per_second is None:
            return None
        return self.plies_per_second >= self.target_plies_per_second

    @property
    def speedup(self) -> float | None:
        """How many times as fast as the plain implementation (None where none is known)."""
        if self.plain_plies_per_second is None:
            return None
        return round(self.plies_per_second / self.plain_plies_per_second, 2)

    @property
    def meets_speedup(self) -> bool | None:
        """At least SPEEDUP_TARGET times the plain implementation (issue 23)."""
        if self.speedup is None:
            return None
        return self.plies_per_second >= SPEEDUP_TARGET * self.plain_plies_per_second

    def to_json(self) -> dict:
        return {**asdict(self), "meets_target": self.meets_target, "speedup": self.speedup,
                "speedup_target": SPEEDUP_TARGET, "meets_speedup": self.meets_speedup}


def configurations(game_ids: list[str] | None = None) -> list[tuple[str, int]]:
    """(game id, player count) for every player count of every chosen game, registry order."""
    chosen = registry.ids() if not game_ids else game_ids
    configs = []
    for game_id in chosen:
        game = registry.get(game_id)   # UnknownGameError names the known ids
        configs += [(game_id, players)
                    for players in range(game.min_players, game.max_players + 1)]
    return configs


def measure(game_id: str, players: int, seconds: float) -> Figure:
    """Plays random games (seeds 0, 1, ...) until `seconds` have passed; at least one game."""
    game = registry.get(game_id)
    games = plies = 0
    started, cpu_started = time.perf_counter(), time.thread_time()
    elapsed = 0.0
    while games == 0 or elapsed < seconds:
        state = game.new_state(players, seed=games)
        rng = random.Random(games)
        while not state.is_over():
            state.apply(state.sample_chance(rng) if state.to_move() == CHANCE
                        else rng.choice(state.legal_moves()))
            plies += 1
        games += 1
        elapsed = time.perf_counter() - started
    cpu = max(time.thread_time() - cpu_started, 1e-6)
    return Figure(game_id, players, games, plies, round(elapsed, 3), round(cpu, 3),
                  round(plies / cpu, 1), round(games / cpu, 2), TARGETS.get((game_id, players)),
                  PLAIN.get((game_id, players)))
