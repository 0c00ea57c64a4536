"""Random-playout speed of the engines: plies and games per second, one core, one process.

Each configuration (game, player count) plays random games for a fixed wall time with the
loop below, game creation included; every applied move counts as a ply, chance included.
Seeds run 0, 1, 2, ... so a configuration always plays the same games in the same order.
"""
from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass

from engine import registry

# Plies per second the issues ask for (issue 2: mandala; 3: flowers-mandala; 4: flowers).
TARGETS = {
    ("mandala", 2): 80_000,
    ("flowers-mandala", 4): 50_000,
    ("flowers", 2): 120_000,
    ("flowers", 1): 60_000,
}


@dataclass(frozen=True)
class Figure:
    """What one configuration measured."""

    game: str
    players: int
    games: int
    plies: int
    seconds: float
    plies_per_second: float
    games_per_second: float
    target_plies_per_second: int | None

    @property
    def meets_target(self) -> bool | None:
        if self.target_plies_per_second is None:
            return None
        return self.plies_per_second >= self.target_plies_per_second

    def to_json(self) -> dict:
        return {**asdict(self), "meets_target": self.meets_target}


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
    started = time.perf_counter()
    elapsed = 0.0
    while games == 0 or elapsed < seconds:
        s = games
        state = game.new_state(players, seed=s)
        rng = random.Random(s)
        while not state.is_over():
            mover = state.to_move()
            state.apply(state.sample_chance(rng) if mover == "chance"
                        else rng.choice(state.legal_moves()))
            plies += 1
        games += 1
        elapsed = time.perf_counter() - started
    return Figure(game_id, players, games, plies, round(elapsed, 3), round(plies / elapsed, 1),
                  round(games / elapsed, 2), TARGETS.get((game_id, players)))
