"""Bots that misbehave, played for real: sandboxed subprocesses over gRPC, against a good bot.

Every bot in tests/misbehaving_bots/ plays mandala in seat 0 against the `random` sample bot,
all in one BotHost (one arena), with 0.5 s per move. For each: the record names the right
outcome and forfeit reason, none of the bot's processes survives (checked by pid), what it
tried to reach outside its sandbox is untouched, its log stays within its cap, the arena plays
the next match, and the good bot keeps playing with the very same process throughout. A bot
slow to start is held to the start-up budget, not to the move time.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena import sandbox
from arena.bots import BotHost, BotSpec
from arena.clock import TimeControl
from arena.errors import ArenaError
from arena.match import StrategySeat, play_match

pytestmark = pytest.mark.sandbox

HERE = Path(__file__).parent
MISBEHAVING = HERE / "misbehaving_bots"
GOOD_BOT = HERE.parent / "sample_bots" / "random"
TIME_CONTROL = TimeControl(move_time=0.5, startup=10.0)
LOG_CAP = 64 * 1024
TRUNCATION_NOTE_MAX = 200


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    with BotHost(log_dir=tmp_path_factory.mktemp("bot-logs"), log_cap_bytes=LOG_CAP) as arena:
        yield arena


@pytest.fixture(scope="module")
def good(host):
    """The good bot's seat, warmed up: its process is started and has played a match."""
    spec = BotSpec.load(GOOD_BOT)
    seat = host.seat(spec)
    record = play_match("mandala", 2, {}, 1, [seat, StrategySeat("random", "mandala")],
                        TIME_CONTROL)
    assert record["result"]["end"] == "normal"
    yield seat
    seat.close()


class ProcessWatch:
    """Every pid the process trees of a bot had while the match ran (polled every 10 ms),
    from the moment the host starts a process, so a bot that never finishes its start-up is
    watched too."""

    def __init__(self, host, spec):
        self.host = host
        self.spec = spec
        self.pids: set[int] = set()
        self.uids: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self._look()

    def _look(self) -> None:
        for process in self.host.processes():
            sandboxed = process.process
            if process.spec == self.spec and sandboxed is not None:
                self.pids |= sandboxed.pids()
                if sandboxed.uid is not None:
                    self.uids.add(sandboxed.uid)

    def __enter__(self) -> "ProcessWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def processes_of_uids(uids: set[int]) -> list[int]:
    """Live processes of the given uids (each sandboxed bot has one of its own, as root)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid in uids:
                found.append(int(entry.name))
        except OSError:
            pass
    return [pid for pid in found if sandbox.running(pid)]


def bot_copy(tmp_path: Path, name: str, *arguments: str) -> Path:
    """A copy of a misbehaving bot whose command gets `arguments` appended."""
    folder = tmp_path / name
    shutil.copytree(MISBEHAVING / name, folder)
    manifest = folder / "bot.toml"
    quoted = "".join(f', "{argument}"' for argument in arguments)
    manifest.write_text(manifest.read_text().replace('"bot.py"]', f'"bot.py"{quoted}]'))
    return folder


def play_misbehaving(host, good, folder: Path, *, time_control: TimeControl = TIME_CONTROL,
                     seed: int = 11) -> tuple[dict, str, set[int]]:
    """Plays the bot in `folder` (seat 0) against the good bot; checks what every case must.

    Returns the record, the bot's log and every pid its processes had.
    """
    good_seat = good
    good_pid = good_seat.process.process.pid
    spec = BotSpec.load(folder)
    seat = host.seat(spec)
    with ProcessWatch(host, spec) as watch:
        record = play_match("mandala", 2, {}, seed, [seat, good_seat], time_control)
        if seat.process is not None:
            watch._look()
            seat.process.kill()  # a bot that played on to the end: the arena's own kill
    seat.close()

    assert watch.pids, f"no process of {spec.name} was seen: the check below would be empty"
    survivors = [pid for pid in watch.pids if sandbox.running(pid)]
    assert survivors == [], f"processes of {spec.name} survive: {survivors}"
    assert processes_of_uids(watch.uids) == []
    log_path = host.log_dir / f"{spec.name}-{spec.version}.log"
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    assert len(log.encode()) <= LOG_CAP + TRUNCATION_NOTE_MAX

    assert record["result"].get("forfeit", {}).get("seat") != 1  # the good bot never forfeits
    # The arena goes on: the next match, on the same host, ends normally, and the good bot
    # still plays with the process it had before.
    after = play_match("mandala", 2, {}, seed + 1, [good_seat, StrategySeat("random", "mandala")],
                       TIME_CONTROL)
    assert after["result"]["end"] == "normal", after["result"]
    assert good_seat.process.process.pid == good_pid
    return record, log, watch.pids


def forfeit_of(record: dict) -> dict:
    result = record["result"]
    assert result["end"] == "forfeit", result
    assert result["ranks"] == [2, 1]  # with two players the other one wins
    return result["forfeit"]


# -- bots that lose on the board's clock or by breaking the protocol -----------------------------

# Building and sending 100 MB takes the bot longer than 0.5 s on a slow machine: with more time,
# what is checked is how the arena takes the message, not the clock.
ROOMY = TimeControl(move_time=20.0, startup=10.0)


@pytest.mark.parametrize("name, reason, time_control, log_says", [
    ("hang", "timeout", TIME_CONTROL, ""),
    ("late", "timeout", TIME_CONTROL, ""),
    ("garbage", "protocol", TIME_CONTROL, ""),
    ("illegal_move", "illegal", TIME_CONTROL, ""),
    ("huge_move", "protocol", ROOMY, ""),
    ("memory_hog", "memory", ROOMY, ""),  # the kernel killed it at 1 GiB (writing 1 GiB takes time)
    ("wrong_token", "crash", TIME_CONTROL, "handshake refused: UNAUTHENTICATED"),
], ids=lambda value: value if isinstance(value, str) and value.isidentifier() else "")
@pytest.mark.serial   # forfeits on a short clock: timed with nothing beside it
def test_a_misbehaving_bot_forfeits_with_its_reason(host, good, name, reason, time_control,
                                                    log_says):
    record, log, _ = play_misbehaving(host, good, MISBEHAVING / name, time_control=time_control)
    forfeit = forfeit_of(record)
    assert (forfeit["seat"], forfeit["reason"]) == (0, reason), forfeit
    assert log_says in log


def test_a_bot_that_crashes_mid_match_forfeits_and_keeps_its_moves_in_the_record(host, good):
    record, _, _ = play_misbehaving(host, good, MISBEHAVING / "crash_mid_match")
    assert (forfeit_of(record)["seat"], forfeit_of(record)["reason"]) == (0, "crash")
    assert [seat for seat, _ in record["moves"]].count(0) == 2


def test_a_bot_that_exits_at_start_forfeits_before_any_move(host, good):
    record, log, _ = play_misbehaving(host, good, MISBEHAVING / "exit_at_start")
    assert (forfeit_of(record)["seat"], forfeit_of(record)["reason"]) == (0, "crash")
    assert record["moves"] == []
    assert "giving up before the handshake" in log


@pytest.mark.serial   # forfeits on a short clock: timed with nothing beside it
def test_the_start_up_budget_is_its_own_and_the_arena_measures_it(host, good, tmp_path):
    # 0.8 s to start: over a 0.4 s start-up budget (a forfeit on time before any move), but
    # fine with a 5 s one although every move may take only 0.5 s.
    folder = bot_copy(tmp_path, "slow_start", "0.8")
    tight = TimeControl(move_time=0.5, startup=0.4)
    record, _, _ = play_misbehaving(host, good, folder, time_control=tight)
    assert (forfeit_of(record)["seat"], forfeit_of(record)["reason"]) == (0, "timeout")
    assert "no handshake within the start-up budget of 0.4 s" in forfeit_of(record)["detail"]
    assert "other processes used" in forfeit_of(record)["detail"]   # weighed, then charged
    assert record["moves"] == []
    roomy = TimeControl(move_time=0.5, startup=5.0)
    record, _, _ = play_misbehaving(host, good, folder, time_control=roomy)
    assert record["result"]["end"] == "normal"


@pytest.mark.serial   # forfeits on a short clock: timed with nothing beside it
def test_a_fork_bomb_times_out_and_leaves_nothing(host, good):
    record, log, pids = play_misbehaving(host, good, MISBEHAVING / "fork_bomb")
    assert (forfeit_of(record)["seat"], forfeit_of(record)["reason"]) == (0, "timeout")
    assert "bombing" in log
    # It did fork (many processes came and went, within the limit), and none is left.
    assert len(pids) > 10


# -- bots that try to leave their sandbox, then play on ----------------------------------------

def test_a_bot_cannot_reach_a_tcp_port_on_the_hosts_loopback(host, good, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        record, log, _ = play_misbehaving(host, good,
                                          bot_copy(tmp_path, "network", str(port)))
        listener.settimeout(0.2)
        with pytest.raises(socket.timeout):
            listener.accept()
    assert record["result"]["end"] == "normal"
    assert "network: no connection" in log


def test_a_bot_cannot_read_a_planted_file(host, good, tmp_path):
    planted = tmp_path / "planted.txt"
    planted.write_text("the planted secret")
    before = planted.stat()
    record, log, _ = play_misbehaving(host, good,
                                      bot_copy(tmp_path, "read_planted", str(planted)))
    assert record["result"]["end"] == "normal"
    assert "read_planted: cannot read" in log and "the planted secret" not in log
    after = planted.stat()
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)


def test_a_bot_cannot_write_into_another_bots_folder(host, good, tmp_path):
    victim = tmp_path / "victim"
    shutil.copytree(GOOD_BOT, victim)
    original = (victim / "bot.py").read_bytes()
    record, log, _ = play_misbehaving(host, good,
                                      bot_copy(tmp_path, "write_other_bot", str(victim)))
    assert record["result"]["end"] == "normal"
    assert "write_other_bot: cannot write" in log
    assert (victim / "bot.py").read_bytes() == original


def test_a_1_gib_stderr_flood_stays_within_the_log_cap(host, good):
    record, log, _ = play_misbehaving(host, good, MISBEHAVING / "stderr_flood")
    assert record["result"]["end"] == "normal"
    assert log.count("log truncated") == 1


# -- sandbox v2: signals, names, floods ------------------------------------------------------------

def test_a_bot_killed_by_sigkill_forfeits_as_killed_by_signal_9_without_a_traceback(host, good):
    record, log, _ = play_misbehaving(host, good, MISBEHAVING / "sigkill_self")
    forfeit = forfeit_of(record)
    assert (forfeit["seat"], forfeit["reason"]) == (0, "crash")
    assert "killed by signal 9" in forfeit["detail"]
    assert "Traceback" not in log and "OSError" not in log


def test_a_bot_cannot_end_its_sandboxs_init_and_so_never_passes_its_crash_off_as_the_hosts(
        host, good):
    # Its init keeps another uid (root): every signal is refused, and its own exit is a crash.
    # (An unprivileged arena's init, of the bot's uid: tests/test_sandbox_nonroot.py.)
    record, log, _ = play_misbehaving(host, good, MISBEHAVING / "kill_init")
    forfeit = forfeit_of(record)
    assert (forfeit["seat"], forfeit["reason"]) == (0, "crash")
    assert "exited with status 3" in forfeit["detail"], forfeit
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGKILL"):
        assert f"kill_init: {name} refused" in log, log


@pytest.mark.parametrize("name", ["../../../../tmp/x/pwned", "a/b", ".hidden", "x" * 65, ""])
def test_a_manifest_name_that_is_not_a_plain_name_is_refused_in_one_line(tmp_path, name):
    folder = tmp_path / "traversal"
    shutil.copytree(GOOD_BOT, folder)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py"]\ngames = ["mandala"]\n')
    with pytest.raises(ArenaError) as refused:
        BotSpec.load(folder)
    assert "`name`" in str(refused.value) and "\n" not in str(refused.value)
    done = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", "play",
                           "mandala", "--bot", str(folder), "--bot", "random"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("arena: error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_connection_flood_never_stops_the_other_bot_and_the_arena_exits_cleanly(tmp_path):
    roomy = TimeControl(move_time=5.0, startup=20.0)   # three flooding processes share 2 cores
    fresh_bot = shutil.copytree(GOOD_BOT, tmp_path / "fresh")   # a bot started mid-flood
    host = BotHost(log_dir=tmp_path / "logs", log_cap_bytes=LOG_CAP)
    try:
        with host.seat(BotSpec.load(MISBEHAVING / "flood")) as flood, \
                host.seat(BotSpec.load(GOOD_BOT)) as good:
            # A bot (and so its flooding children) runs only during its own turns: it
            # floods on its own clock, and the connections it opened stay open between.
            flood_log = host.log_dir / f"flood-{flood.version}.log"
            for seed in range(3, 8):
                first = play_match("mandala", 2, {}, seed, [flood, good], roomy)
                if _opened(flood_log) >= 100:
                    break
            before = _opened(flood_log)
            assert flood.process.alive(), "the flooder must still be flooding"
            with host.seat(BotSpec.load(fresh_bot)) as fresh:
                second = play_match("mandala", 2, {}, 9, [flood, fresh], roomy)
    finally:
        started = time.monotonic()
        host.close()
        closing = time.monotonic() - started
    assert first["result"]["end"] == "normal", first["result"]
    assert second["result"]["end"] == "normal", second["result"]
    assert [seat for seat, _ in second["moves"]].count(1) > 5   # the fresh bot played
    assert closing < 15
    assert before >= 100, before   # a real flood held open while the fresh bot started


def _opened(log: Path) -> int:
    """How many connections one flooding process last said it had opened."""
    # A bot's lines come behind its process tag: `TAG| flood: opened N connections, ...`.
    lines = [line.split("| ", 1)[-1] for line in
             (log.read_text() if log.exists() else "").splitlines()]
    opened = [line for line in lines if line.startswith("flood: opened")]
    return int(opened[-1].split()[2]) if opened else 0
