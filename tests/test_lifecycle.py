"""One way into a league (`open_league`), a run that stops when told, and the CLI's one
progress bar and one clean stop (issue 24)."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys

import pytest

from arena.cli.progress import Progress, stopped_cleanly
from arena.errors import ArenaError
from arena.league.config import LeagueConfig, LeagueError
from arena.league.lifecycle import named_folder, open_league, run
from arena.league.store import read_outcomes
from arena.league.workers import ProcessPool

CONFIG = LeagueConfig(game="mandala", bots=("random", "greedy"), deals=4, seed=3)


def test_a_run_stops_when_its_stop_condition_holds_keeping_what_it_played(tmp_path):
    with open_league(tmp_path / "l", CONFIG) as league:
        played = run(league, ProcessPool(1), stop=lambda: len(read_outcomes(league.folder)) >= 3)
        assert played == 3 and league.done() == 3
    with open_league(tmp_path / "l") as league:   # resumed: only the missing ones
        assert run(league, ProcessPool(2)) == 5 and league.missing() == []
    with open_league(tmp_path / "l") as league:   # a stop that already holds plays nothing
        assert run(league, ProcessPool(1), stop=lambda: True) == 0


def test_the_bots_are_checked_before_the_league_folder_exists(tmp_path):
    seen = []

    def refuse(config, bots):
        seen.append([bot.name for bot in bots])
        raise LeagueError("a bot failed its check")

    with pytest.raises(LeagueError, match="failed its check"):
        open_league(tmp_path / "l", CONFIG, check_bots=refuse)
    assert seen == [["random", "greedy"]] and not (tmp_path / "l").exists()


def test_a_folder_holding_a_league_is_refused_before_the_bots_are_checked(tmp_path):
    open_league(tmp_path / "l", CONFIG).close()
    checked = []
    with pytest.raises(ArenaError, match="already holds league"):
        open_league(tmp_path / "l", CONFIG, check_bots=lambda config, bots: checked.append(1))
    assert checked == []


def test_a_resumed_league_with_nothing_left_skips_the_bots_check(tmp_path):
    with open_league(tmp_path / "l", CONFIG) as league:
        run(league, ProcessPool(2))
    checked = []
    open_league(tmp_path / "l", check_bots=lambda config, bots: checked.append(1)).close()
    assert checked == []


@pytest.mark.parametrize("name", ["a/b", "..", "", "."])
def test_a_name_that_is_not_one_folder_is_refused(name):
    with pytest.raises(LeagueError, match="is not a folder name"):
        named_folder(name)


def test_progress_in_a_log_is_a_line_per_tenth_and_one_at_the_end():
    stream = io.StringIO()
    bar = Progress(25, 5, unit="matches", stream=stream, status=lambda: "leader x")
    with bar:
        for _ in range(19):
            bar.advance()
    lines = stream.getvalue().splitlines()
    done = [line.split()[1] for line in lines]
    assert done == ["8/25", "10/25", "13/25", "15/25", "18/25", "20/25", "23/25", "24/25"]
    assert all("matches/s  ETA " in line and line.endswith("leader x") for line in lines)
    assert lines[-1].startswith("[" + "#" * (24 * 24 // 25) + ".")


def test_progress_without_a_stream_writes_nothing(capsys):
    with Progress(3, 0, unit="pairs", stream=None) as bar:
        for _ in range(3):
            bar.advance()
    assert bar.line().startswith("[" + "#" * 24 + "] 3/3  ")
    assert capsys.readouterr() == ("", "")


def test_sigterm_stops_a_run_as_ctrl_c_does_and_says_what_is_kept(capsys):
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped:
        with stopped_cleanly(lambda: "stopped: 3 of 8 matches stored"):
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()   # the handler raises before this returns
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "stopped: 3 of 8 matches stored\n"
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_match_runner_and_bot_manifests_do_not_import_the_authors_sdk():
    code = ("import sys, arena.match, arena.bots.manifest, arena.league.lifecycle; "
            "print(sorted(m for m in sys.modules if m.startswith('arena.sdk')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
