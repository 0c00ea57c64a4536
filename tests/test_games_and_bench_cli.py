"""`arena games` lists what can be played; `arena bench engine` measures random-playout speed.

The benchmark runs only briefly here: its figures are checked for shape and sign, never for
size (speed targets are read from the benchmark's own output, not asserted in tests).
"""
from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner

from arena.bench import plain_flowers_mandala
from arena.bench.plain_mandala import PlainMandala
from arena.cli import main
from engine import registry
from engine.core import CHANCE


def run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_games_lists_every_game_with_players_and_options():
    result = run("games")
    assert result.exit_code == 0
    for game in registry.games().values():
        row = next(line for line in result.output.splitlines() if line.startswith(game.id + " "))
        assert game.title in row
        span = (str(game.min_players) if game.min_players == game.max_players
                else f"{game.min_players}-{game.max_players}")
        assert f" {span} " in row
        for option in game.options:
            assert f"{option.key}={option.default}" in result.output


@pytest.mark.parametrize("game_id", registry.ids())
def test_bench_engine_json_gives_positive_figures_per_player_count(game_id):
    result = run("bench", "engine", "--game", game_id, "--seconds", "0.02", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    game = registry.get(game_id)
    assert [(row["game"], row["players"]) for row in report["results"]] == \
        [(game_id, n) for n in range(game.min_players, game.max_players + 1)]
    for row in report["results"]:
        assert row["games"] >= 1 and row["plies"] > 0 and row["seconds"] > 0
        assert 0 < row["cpu_seconds"] <= row["seconds"] + 0.05
        assert row["plies_per_second"] > 0 and row["games_per_second"] > 0
        assert (row["target_plies_per_second"] is None) == (row["meets_target"] is None)
        assert (row["plain_plies_per_second"] is None) == (row["speedup"] is None) \
            == (row["meets_speedup"] is None)
        assert row["speedup_target"] == 5
        if row["speedup"] is not None:
            ratio = row["plies_per_second"] / row["plain_plies_per_second"]
            assert row["speedup"] == pytest.approx(ratio, abs=0.01)
            assert row["meets_speedup"] == (ratio >= 5)
    measured = {row["players"] for row in report["results"]
                if row["plain_plies_per_second"] is not None}
    # Mandala and 4-player flowers-mandala have a plain implementation, measured in the same
    # run (no figure is copied).
    assert measured == {"mandala": {2}, "flowers-mandala": {4}}.get(game_id, set())
    assert all(row["plain_plies_per_second"] > 0 for row in report["results"]
               if row["players"] in measured)


def test_bench_engine_table_shows_the_target_next_to_the_figure():
    result = run("bench", "engine", "--game", "mandala", "--seconds", "0.02")
    assert result.exit_code == 0
    header, _, row = result.output.splitlines()[:3]
    assert "plies/s" in header and "target plies/s" in header and "games/s" in header
    assert row.split()[:2] == ["mandala", "2"] and "80,000" in row
    assert "plain plies/s" in header and "x plain" in header and "5x met" in header
    cells = row.split()
    engine_rate, plain_rate = (float(cells[i].replace(",", "")) for i in (4, 7))
    ratio = float(cells[8])
    assert plain_rate > 0 and ratio == pytest.approx(engine_rate / plain_rate, abs=0.06)
    met = cells[9]
    assert met in ("yes", "NO")
    if abs(ratio - 5) > 0.1:                # the printed ratio is rounded
        assert met == ("yes" if ratio > 5 else "NO")


def test_the_plain_mandala_plays_every_deal_move_for_move_like_the_engine():
    # The bench's yardstick is only worth something if it is the same game: same legal lists
    # (in order), same random games, same scores.
    game = registry.get("mandala")
    for seed in range(60):
        state = game.new_state(2, seed=seed)
        plain = PlainMandala(state.setup)
        rng = random.Random(seed)
        while not state.is_over():
            legal = state.legal_moves()
            assert plain.legal_moves() == legal, (seed, legal)
            move = rng.choice(legal)
            state.apply(move)
            plain.apply(move)
        assert plain.is_over() and plain.scores() == state.scores(), seed
    with pytest.raises(ValueError, match="illegal move"):
        PlainMandala(game.new_state(2, seed=1).setup).apply("take red")


def test_bench_engine_refuses_an_unknown_game_in_one_line():
    result = run("bench", "engine", "--game", "chess", "--seconds", "0.01")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "arena: error: unknown game 'chess' (known games: mandala, flowers-mandala, flowers)"]


@pytest.mark.sandbox
def test_bench_freeze_times_the_sample_bots_moves_and_says_if_the_target_is_met():
    result = run("bench", "freeze", "--matches", "1", "--pairs", "10")
    assert result.exit_code == 0, result.output
    for way in ("hold", "freeze"):   # the arena's way, and the freezer's beside it
        row = next(line for line in result.output.splitlines()
                   if line.startswith(f"thaw + {way} per move, random sample bot"))
        moves, median, p99, arena_cpu, bot_cpu = row.split()[-5:]
        assert int(moves) > 0
        assert 0 < float(median.replace(",", "")) <= float(p99.replace(",", ""))
        assert float(arena_cpu.replace(",", "")) > 0 and float(bot_cpu.replace(",", "")) > 0
    assert re.search(r"thaw \+ hold per move: median [\d.]+ µs \(target <= 50 µs: "
                     r"(met|NOT met)\)", result.output)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_plain_flowers_mandala_plays_every_deal_move_for_move_like_the_engine(players):
    # The same deal from a seed, the same legal lists (in order) and chance outcomes from the
    # same draws along random games, the same scores and hands at the end.
    game = registry.get("flowers-mandala")
    for seed in range(40):
        state = game.new_state(players, seed=seed)
        assert plain_flowers_mandala.deal(random.Random(seed), players) == state.setup
        plain = plain_flowers_mandala.PlainFlowersMandala(state.setup, players)
        rng, plain_rng = random.Random(seed), random.Random(seed)
        while not state.is_over():
            assert plain.to_move() == state.to_move(), seed
            if state.to_move() == CHANCE:
                move = state.sample_chance(rng)
                assert plain.sample_chance(plain_rng) == move, seed
            else:
                legal = state.legal_moves()
                assert plain.legal_moves() == legal, (seed, legal)
                move = rng.choice(legal)
                plain_rng.choice(legal)
            state.apply(move)
            plain.apply(move)
        assert plain.is_over() and plain.scores() == state.scores(), seed
        assert plain.cards_in_hand() == [sum(hand) for hand in state.hands], seed
    plain = plain_flowers_mandala.PlainFlowersMandala(game.new_state(players, seed=1).setup,
                                                      players)
    for move in ("pass", "tile dark", "play 3 red 1", "play 0 red 0", "order 0 1 2"):
        with pytest.raises(ValueError, match="illegal move"):
            plain.apply(move)
