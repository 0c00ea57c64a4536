"""The ladder of a real league: sample bots in the sandbox, stored in SQLite, rated end to end."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots"


@pytest.mark.slow
def test_greedy_ranks_above_random_with_intervals_apart(tmp_path):
    folder = tmp_path / "greedy-vs-random"
    league = CliRunner().invoke(main, [
        "league", "run", "--game", "mandala", "--bot", str(SAMPLE_BOTS / "greedy"),
        "--bot", str(SAMPLE_BOTS / "random"), "--deals", "10", "--seed", "3",
        "--workers", "2", "--quiet", "--out", str(folder)])
    assert league.exit_code == 0, league.output
    assert "rank" in league.output and "LOS next" in league.output   # the league's own ladder

    result = CliRunner().invoke(main, ["ladder", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    best, worst = json.loads(result.output)["ladder"]
    assert (best["bot"], worst["bot"]) == ("greedy", "random")
    assert best["games"] == worst["games"] == 20 and best["forfeits"] == worst["forfeits"] == 0
    # Non-overlapping 95% intervals: greedy's lowest plausible rating beats random's highest.
    assert best["elo"] - best["interval"] > worst["elo"] + worst["interval"]
