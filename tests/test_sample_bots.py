"""Every sample bot, as a real sandboxed process over gRPC, plays every game its manifest
names to a normal end, and the record of each match verifies."""
from __future__ import annotations

from pathlib import Path

import pytest

from arena.bots import BotSpec
from arena.clock import TimeControl
from arena.match import StrategySeat, play_match
from engine import records, registry

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots"
# node-random needs `npm install` (the npm registry): tests/test_writing_a_bot.py installs it
# and plays it, sandboxed, in every game and player count. ismcts thinks for 40% of its
# clock: tests/test_ismcts.py plays it with iteration budgets. go-random must be built first
# (its build.sh, from Debian's Go packages): tests/test_go_bot.py builds it and plays it,
# sandboxed, in every game and player count.
NOT_HERE = {"node-random", "ismcts", "go-random"}
CASES = [(folder.name, game_id)
         for folder in sorted(SAMPLE_BOTS.iterdir())
         if (folder / "bot.toml").exists() and folder.name not in NOT_HERE
         for game_id in BotSpec.load(folder).games]


def test_there_are_sample_bots_for_every_game():
    assert {"random", "greedy"} <= {name for name, _ in CASES}
    for game_id in registry.ids():
        assert {name for name, game in CASES if game == game_id} >= {"random", "greedy"}


@pytest.mark.parametrize("bot, game_id", CASES)
def test_a_sample_bot_plays_its_games_to_a_normal_end(host, bot, game_id):
    with host.seat(BotSpec.load(SAMPLE_BOTS / bot, game_id)) as seat:
        record = play_match(game_id, 2, {}, 5, [seat, StrategySeat("random", game_id)],
                            TimeControl(move_time=2.0))
    assert record["result"]["end"] == "normal", record["result"]
    assert records.verify(record)["ok"]
