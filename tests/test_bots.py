"""Bot folders and bot processes: manifests, versions, the process pool, crashes, restarts.

Real sample bots in the real bubblewrap sandbox over real gRPC.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena import sandbox
from arena.bots import BotHost, BotSpec
from arena.errors import ArenaError
from arena.clock import TimeControl
from arena.match import StrategySeat, play_match

SAMPLE_BOTS = Path(__file__).parent.parent / "sample_bots"
TEST_BOTS = Path(__file__).parent / "protocol_bots"
needs_sandbox = pytest.mark.sandbox


def random_builtin() -> StrategySeat:
    return StrategySeat("random", "mandala")


# -- manifests ---------------------------------------------------------------------------------
def test_a_sample_bot_manifest_loads():
    spec = BotSpec.load(SAMPLE_BOTS / "greedy")
    assert spec.name == "greedy"
    assert spec.command == ("python3", "bot.py")
    assert spec.games == ("mandala", "flowers-mandala", "flowers")
    assert len(spec.version) == 12


def test_the_version_is_the_folder_content(tmp_path):
    folder = shutil.copytree(SAMPLE_BOTS / "random", tmp_path / "random")
    before = BotSpec.load(folder).version
    assert before == BotSpec.load(SAMPLE_BOTS / "random").version
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# changed\n")
    assert BotSpec.load(folder).version != before


@pytest.mark.parametrize("manifest, says", [
    (None, "has no bot.toml manifest"),
    ("name = ", "cannot read"),
    ('name = "x"\ngames = ["mandala"]\n', "`command` must be a list of strings"),
    ('name = "x"\ncommand = ["python3", "bot.py"]\n', "`games` must list game ids"),
    ('command = ["python3"]\ngames = ["mandala"]\n', "`name` must be a non-empty string"),
    ('name = "x"\ncommand = ["python3"]\ngames = ["chess"]\n', "unknown game 'chess'"),
])
def test_a_bad_manifest_is_one_clear_error(tmp_path, manifest, says):
    if manifest is not None:
        (tmp_path / "bot.toml").write_text(manifest)
    with pytest.raises(ArenaError, match=says):
        BotSpec.load(tmp_path)


def test_a_missing_folder_is_one_clear_error(tmp_path):
    with pytest.raises(ArenaError, match="does not exist"):
        BotSpec.load(tmp_path / "nowhere")


# -- processes -----------------------------------------------------------------------------------
@needs_sandbox
def test_a_bot_process_lives_across_matches_and_goes_back_to_the_pool(host):
    spec = BotSpec.load(SAMPLE_BOTS / "random")
    with host.seat(spec) as seat:
        play_match("mandala", 2, {}, 1, [seat, random_builtin()])
        pid = seat.process.process.pid
        play_match("mandala", 2, {}, 2, [random_builtin(), seat])
        assert seat.process.process.pid == pid
    with host.seat(spec) as again, host.seat(spec) as second:
        play_match("mandala", 2, {}, 3, [again, second])
        assert again.process.process.pid == pid           # reused from the pool
        assert second.process.process.pid != pid          # the same bot twice: two processes


@needs_sandbox
def test_a_crash_forfeits_and_the_bot_is_restarted_for_its_next_match(host):
    with host.seat(BotSpec.load(TEST_BOTS / "crash_as_seat0")) as crasher:
        crashed = play_match("mandala", 2, {}, 4, [crasher, random_builtin()])
        first_pid = crasher.process.process.pid
        assert not sandbox.running(first_pid)
        played = play_match("mandala", 2, {}, 4, [random_builtin(), crasher])
        assert crasher.process.process.pid != first_pid
    forfeit = crashed["result"]["forfeit"]
    assert (forfeit["seat"], forfeit["reason"]) == (0, "crash")
    assert "exited with status 3" in forfeit["detail"] and "ply 0" in forfeit["detail"]
    assert played["result"]["end"] == "normal"


@needs_sandbox
def test_a_bot_that_hangs_up_after_a_match_is_ended_and_restarted(host):
    # A bot is frozen between its turns, so it reads a MatchOver at its next turn: the
    # hang-up then ends its stream instead of answering, which forfeits that match (no
    # waiting for its clock). Its lingering process is killed and the match after that is
    # played by a new one.
    with host.seat(BotSpec.load(TEST_BOTS / "hangs_up")) as seat:
        first = play_match("mandala", 2, {}, 8, [seat, random_builtin()])
        lingering = seat.process.process
        second = play_match("mandala", 2, {}, 9, [random_builtin(), seat])
        third = play_match("mandala", 2, {}, 10, [random_builtin(), seat])
        assert seat.process.process.pid != lingering.pid
    assert lingering.pids() == set() and not sandbox.running(lingering.pid)
    assert first["result"]["end"] == third["result"]["end"] == "normal"
    assert (second["result"]["forfeit"]["seat"], second["result"]["forfeit"]["reason"]) == (
        1, "protocol")


@needs_sandbox
def test_a_hang_up_just_after_the_thaw_is_a_protocol_forfeit_not_a_crash(monkeypatch):
    # The race a loaded machine makes: thawed for its next act, the bot reads the MatchOver
    # and hangs up before the act is even sent. Forced here by a thaw that returns only once
    # the stream has ended; the process lives on, so it is no crash. (A host of its own: no
    # pooled hangs_up process of another test.)
    with BotHost() as own_host, own_host.seat(BotSpec.load(TEST_BOTS / "hangs_up")) as seat:
        play_match("mandala", 2, {}, 8, [seat, random_builtin()])
        process = seat.process
        real_thaw = type(process.process).thaw

        def thaw_then_wait(sandboxed, surely=False):
            real_thaw(sandboxed, surely)
            if surely:   # the kill's thaw, after the hang-up
                return
            assert process.stream_over.wait(timeout=30)
        monkeypatch.setattr(type(process.process), "thaw", thaw_then_wait)
        second = play_match("mandala", 2, {}, 9, [random_builtin(), seat])
    assert (second["result"]["forfeit"]["seat"], second["result"]["forfeit"]["reason"]) == (
        1, "protocol"), second["result"]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.serial   # CPU seconds against a CPU limit: measured with nothing beside it
def test_a_pooled_bot_is_replaced_between_matches_before_its_cpu_limit_kills_it():
    # RLIMIT_CPU counts a process's whole life: a pooled bot that spends 0.8 s of CPU a
    # match would be killed (SIGXCPU) in its 5th match under a 4 s limit. Past half the
    # limit it is replaced between matches instead, and no match is lost.
    limits = sandbox.Limits(cpu_seconds=4)
    with BotHost(limits=limits) as own_host:
        pids, results = set(), []
        for seed in range(7):
            with own_host.seat(BotSpec.load(TEST_BOTS / "thinks_hard")) as seat:
                record = play_match("mandala", 2, {}, seed, [seat, random_builtin()],
                                    TimeControl(move_time=5.0))
                pids.add(seat.process.process.pid)
            results.append(record["result"])
    assert [result["end"] for result in results] == ["normal"] * 7, results
    assert 2 <= len(pids) <= 4


@needs_sandbox
def test_fresh_per_match_starts_a_new_process_for_every_match():
    with BotHost(fresh_per_match=True) as fresh_host:
        with fresh_host.seat(BotSpec.load(SAMPLE_BOTS / "random")) as seat:
            pids = []
            for seed in (1, 2):
                play_match("mandala", 2, {}, seed, [seat, random_builtin()])
                pids.append(seat.process.process.pid)
                assert not sandbox.running(pids[-1])   # ended with its match
    assert pids[0] != pids[1]


@needs_sandbox
def test_closing_the_host_ends_every_bot_process():
    with BotHost() as short_host:
        seats = [short_host.seat(BotSpec.load(SAMPLE_BOTS / name)) for name in ("random", "greedy")]
        play_match("mandala", 2, {}, 5, seats)
        pids = [pid for seat in seats for pid in seat.process.process.pids()]
        assert pids and all(sandbox.running(pid) for pid in pids)
    assert not any(sandbox.running(pid) for pid in pids)


@needs_sandbox
def test_a_bot_is_not_seated_in_a_game_it_does_not_play(host, tmp_path):
    folder = shutil.copytree(SAMPLE_BOTS / "random", tmp_path / "mandala_only")
    (folder / "bot.toml").write_text('name = "m"\ncommand = ["python3", "bot.py"]\n'
                                     'games = ["mandala"]\n')
    with host.seat(BotSpec.load(folder)) as seat:
        with pytest.raises(ArenaError, match="does not play flowers"):
            play_match("flowers", 2, {}, 1, [seat, StrategySeat("random", "flowers")])


@needs_sandbox
def test_a_full_host_ends_an_idle_bot_to_make_room():
    random_spec, greedy_spec = (BotSpec.load(SAMPLE_BOTS / name) for name in ("random", "greedy"))
    with BotHost(max_bots=2) as small_host:
        with small_host.seat(greedy_spec) as greedy, small_host.seat(random_spec) as random_bot:
            play_match("mandala", 2, {}, 6, [greedy, random_bot])
            greedy_pid = greedy.process.process.pid
            random_pid = random_bot.process.process.pid
        # The random process is reused; the second random bot needs a new process, and
        # the host is full: the idle greedy process makes room.
        with small_host.seat(random_spec) as first, small_host.seat(random_spec) as second:
            play_match("mandala", 2, {}, 7, [first, second])
            assert first.process.process.pid == random_pid
            assert not sandbox.running(greedy_pid)
