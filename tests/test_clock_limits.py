"""Every time limit is bounded (at most a day): a huge, infinite, NaN or non-number figure is
refused in one line where it is given (flags, a record's time_control), never an overflow
later."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from arena.clock import MAX_SECONDS, TimeControl, TimeControlError

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]


@pytest.mark.parametrize("field", ["move_time", "bank", "increment", "startup", "margin"])
@pytest.mark.parametrize("value", [MAX_SECONDS + 1, 1e10, 1e308, 10 ** 5000],
                         ids=["a day and a second", "1e10", "1e308", "5000 digits"])
def test_a_limit_beyond_a_day_is_refused(field, value):
    with pytest.raises(TimeControlError, match=rf"{field} must be at most 86400 seconds"):
        TimeControl(**{field: value})


@pytest.mark.parametrize("field", ["move_time", "bank", "increment", "startup", "margin"])
@pytest.mark.parametrize("value", [math.inf, math.nan, -1, "x", True, [1]])
def test_a_limit_that_is_no_usable_number_is_refused(field, value):
    with pytest.raises(TimeControlError):
        TimeControl(**{field: value})


def test_a_day_itself_is_allowed():
    control = TimeControl(move_time=MAX_SECONDS, bank=MAX_SECONDS, increment=MAX_SECONDS,
                          startup=MAX_SECONDS)
    assert control.move_time == MAX_SECONDS


@pytest.mark.parametrize("data", [{"move_time": 1e10}, {"bank": 10 ** 5000},
                                  {"move_time": "x"}, {"startup": None}, {"margin": -1}],
                         ids=["1e10", "5000 digits", "text", "null startup", "negative margin"])
def test_a_records_unusable_time_control_is_one_error(data):
    with pytest.raises(TimeControlError, match="the record's time_control is unusable"):
        TimeControl.from_record(data)


@pytest.mark.parametrize("flags", [["--move-time", "1e10"], ["--move-time", "1e308"],
                                   ["--tc", "999999999+0"], ["--tc", "10+999999"],
                                   ["--startup-time", "1e9"]])
@pytest.mark.parametrize("command", [["play", "mandala"],
                                     ["league", "run", "--game", "mandala", "--deals", "1",
                                      "--seed", "1"]])
def test_the_cli_refuses_a_limit_beyond_a_day_in_one_line(command, flags, tmp_path):
    done = subprocess.run([*ARENA, *command, "--bot", "random", "--bot", "greedy", *flags,
                           *(["--out", str(tmp_path / "lg")] if command[0] == "league" else [])],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "must be at most 86400 seconds (a day)" in lines[0], lines
    assert not (tmp_path / "lg").exists()
