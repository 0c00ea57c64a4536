"""Random-playout speed of the engines: plies and games per second, one core, one process.

Each configuration (game, player count) plays random games for a fixed wall time with the
loop below, game creation included; every applied move counts as a ply, chance included.
Where a plain implementation of the same rules exists (arena/bench/plain_mandala.py,
plain_flowers_mandala.py), it plays in turns beside the engine.
Seeds run 0, 1, 2, ... so a configuration always plays the same games in the same order.
The rates divide by the CPU time of the measuring thread, not the wall time: "per second on
one core" stays the same figure when other processes share the machine's cores.
"""
from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from arena.bench import plain_flowers_mandala, plain_mandala
from engine import registry
from engine.core import CHANCE

# Plies per second the issues ask for (issue 2: mandala; 3: flowers-mandala; 4: flowers).
TARGETS = {
    ("mandala", 2): 80_000,
    ("flowers-mandala", 4): 50_000,
    ("flowers", 2): 120_000,
    ("flowers", 1): 60_000,
}

# Issue 23: each engine should be at least SPEEDUP_TARGET times as fast as a plain
# implementation of the same rules, measured beside it in the same run (the configurations
# the issue names: mandala, arena/bench/plain_mandala.py; flowers-mandala with 4 players,
# arena/bench/plain_flowers_mandala.py).
SPEEDUP_TARGET = 5
PLAIN: dict[tuple[str, int], Callable[[int], Any]] = {
    ("mandala", 2): lambda seed: plain_mandala.PlainMandala(
        plain_mandala.deal(random.Random(seed))),
    ("flowers-mandala", 4): lambda seed: plain_flowers_mandala.PlainFlowersMandala(
        plain_flowers_mandala.deal(random.Random(seed), 4), 4),
}
"""(game, players) -> a new game of the plain implementation for a seed."""
ROUNDS = 4
"""The engine and the plain implementation take turns, ROUNDS turns each of a quarter of the
time: a change in the machine's speed meanwhile (hour to hour it varies 2-3x here) falls on
both alike, so their ratio holds where the plain rates do not."""


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
    plain_plies_per_second: float | None
    """The plain implementation's rate, measured in the same run (None where none exists)."""

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
    """Plays random games (seeds 0, 1, ...) until `seconds` have passed; at least one game.
    Where a plain implementation exists, it plays as long, in turns with the engine."""
    game = registry.get(game_id)
    plain = PLAIN.get((game_id, players))
    rounds = ROUNDS if plain is not None else 1
    engine_run, plain_run = _Run(), _Run()
    for _ in range(rounds):
        engine_run.play(lambda seed: game.new_state(players, seed=seed), seconds / rounds)
        if plain is not None:
            plain_run.play(plain, seconds / rounds)
    cpu = max(engine_run.cpu, 1e-6)
    plain_rate = None if plain is None else round(plain_run.plies / max(plain_run.cpu, 1e-6), 1)
    return Figure(game_id, players, engine_run.games, engine_run.plies, round(engine_run.wall, 3),
                  round(cpu, 6), round(engine_run.plies / cpu, 1),
                  round(engine_run.games / cpu, 2), TARGETS.get((game_id, players)), plain_rate)


class _Run:
    """Random games played in turns of a given wall time, seeds going on from turn to turn;
    every applied move counts as a ply, chance included."""

    def __init__(self) -> None:
        self.games = self.plies = 0
        self.wall = self.cpu = 0.0

    def play(self, new_game: Callable[[int], Any], seconds: float) -> None:
        started, cpu_started = time.perf_counter(), time.thread_time()
        elapsed, played = 0.0, 0
        while played == 0 or elapsed < seconds:
            state = new_game(self.games)
            rng = random.Random(self.games)
            while not state.is_over():
                state.apply(state.sample_chance(rng) if state.to_move() == CHANCE
                            else rng.choice(state.legal_moves()))
                self.plies += 1
            self.games += 1
            played += 1
            elapsed = time.perf_counter() - started
        self.wall += elapsed
        self.cpu += time.thread_time() - cpu_started
