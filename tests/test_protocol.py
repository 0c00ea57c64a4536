"""The gRPC protocol between the arena and a bot: the handshake and the stream.

Against the real server of a running bot on its Unix socket, first with a client in this
process (to read the exact status codes; the bot is a scripted one over the fake transport,
so no bubblewrap is needed), then with real sandboxed bots that get it wrong.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import grpc
import pytest

from arena.bench import grpc_floor, threadcpu
from arena.bot_errors import BotCrashed
from arena.sandbox import proctree, scratch
from arena.bots import BotHost, BotSpec
from arena.clock import TimeControl
from arena.match import MatchInfo, StrategySeat, play_match
from arena.v1 import arena_pb2, arena_pb2_grpc
from fake_transport import FakeSpawn, fake_spec, first_legal

needs_sandbox = pytest.mark.sandbox

HERE = Path(__file__).parent
SAMPLE_BOTS = HERE.parent / "sample_bots"
TEST_BOTS = HERE / "protocol_bots"
MISBEHAVING = HERE / "misbehaving_bots"


@pytest.fixture(scope="module")
def fake_host():
    """A host whose bots are scripts on threads (tests/fake_transport.py): real servers, real
    sockets, no sandbox."""
    with BotHost(spawn=FakeSpawn({"scripted": first_legal})) as bot_host:
        yield bot_host


@pytest.fixture
def seat(fake_host):
    """A seat of a bot that plays the first legal move, its process started and attached."""
    with fake_host.seat(fake_spec("scripted")) as seat:
        seat.new_match(info())
        yield seat


@pytest.fixture
def stub(seat):
    """A client on the socket of the seat's bot (what another process of that bot could do)."""
    with grpc.insecure_channel(f"unix:{seat.process.socket_path}") as channel:
        yield arena_pb2_grpc.ArenaStub(channel)


def handshake(stub, token: str, version: int = arena_pb2.PROTOCOL_VERSION_1):
    return stub.Handshake(arena_pb2.HandshakeRequest(
        token=token, protocol_version=version, bot_name="tester"), timeout=5)


def info(seat: int = 0) -> MatchInfo:
    return MatchInfo("mandala", {}, seat, 2, TimeControl(move_time=1.0, startup=10.0),
                     bot_seed=5)


def test_the_socket_folder_is_private(fake_host, seat):
    assert seat.process.socket_path.parent == fake_host.socket_dir
    assert fake_host.socket_dir.stat().st_mode & 0o777 == 0o700


def test_a_wrong_token_is_refused_as_unauthenticated(stub):
    with pytest.raises(grpc.RpcError) as refused:
        handshake(stub, "guessed")
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "wrong or already used token" in refused.value.details()


def test_a_wrong_protocol_version_is_refused_with_both_versions(stub):
    with pytest.raises(grpc.RpcError) as refused:
        handshake(stub, "guessed", version=2)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "protocol version 2 is not supported" in refused.value.details()
    assert "version 1" in refused.value.details()


def test_a_handshake_without_a_bot_name_is_refused(stub):
    with pytest.raises(grpc.RpcError) as refused:
        stub.Handshake(arena_pb2.HandshakeRequest(
            token="guessed", protocol_version=arena_pb2.PROTOCOL_VERSION_1), timeout=5)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("metadata", [(), (("arena-session", "guessed"),)])
def test_a_stream_without_a_handshake_is_refused(stub, metadata):
    stream = stub.Play(iter(()), metadata=metadata, timeout=5)
    with pytest.raises(grpc.RpcError) as refused:
        next(stream)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "no handshake for this stream" in refused.value.details()


def test_a_session_gets_one_stream_and_its_bot_plays_on(seat, stub):
    second = stub.Play(iter(()), metadata=(("arena-session", seat.process.session),),
                       timeout=5)
    with pytest.raises(grpc.RpcError) as refused:
        next(second)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "already has a stream" in refused.value.details()
    record = play_match("mandala", 2, {}, 5, [seat, StrategySeat("random", "mandala")])
    assert record["result"]["end"] == "normal"


def test_a_sample_bot_handshakes_and_its_token_cannot_be_used_again(seat, stub):
    assert seat.process.alive()
    with pytest.raises(grpc.RpcError) as refused:
        handshake(stub, seat.process.token)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


@needs_sandbox
@pytest.mark.parametrize("folder, status", [
    (MISBEHAVING / "wrong_token", "UNAUTHENTICATED: wrong or already used token"),
    (TEST_BOTS / "wrong_version", "FAILED_PRECONDITION: protocol version 99 is not supported"),
], ids=["wrong_token", "wrong_version"])
def test_a_bot_refused_at_its_handshake_cannot_start(host, folder, status):
    seat = host.seat(BotSpec.load(folder))
    with pytest.raises(BotCrashed, match="before its handshake"):
        seat.new_match(info())
    log = (host.log_dir / f"{seat.name}-{seat.version}.log").read_text()
    assert f"handshake refused: {status}" in log
    seat.close()


@needs_sandbox
def test_a_bot_started_by_hand_says_the_arena_starts_bots():
    done = subprocess.run([sys.executable, "bot.py"], cwd=SAMPLE_BOTS / "random",
                          env={"PYTHONPATH": str(HERE.parent)}, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 1
    assert "ARENA_SOCKET and ARENA_TOKEN are not set" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow   # 5-7 s on a 2-core VM: out of the quick selection
@needs_sandbox
def test_bench_protocol_prints_the_paths_the_floors_the_patterns_and_the_ratio():
    # A process of its own: the bench keeps the arena's threads on one CPU (hostload).
    done = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", "bench",
                           "protocol", "--decisions", "100", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    paths = [row["path"].split(" ")[0] for row in figures["results"]]
    assert paths == ["in-process", "arena", "pipe-json", "pipe-ping",
                     "grpc-sync", "grpc-aio", "grpc-aio-no-ee",
                     "grpc-sync-handoff", "grpc-aio-handoff", "grpc-sync-handoff-working",
                     "grpc-unary-ask", "grpc-aio-no-ee-working"]
    assert all(row["decisions"] == 100 and row["median_us"] > 0 for row in figures["results"])
    measured = {row["path"].split(" ")[0]: row for row in figures["results"]}
    # CPU on both sides, exact: the arena's from its cgroup and process clock, a floor's from
    # its processes' threads (not in 10 ms ticks, which 100 short decisions may not reach).
    for path in ("arena", "grpc-sync", "grpc-aio", "grpc-aio-no-ee", "grpc-sync-handoff",
                 "grpc-aio-handoff", "grpc-sync-handoff-working", "grpc-unary-ask",
                 "grpc-aio-no-ee-working"):
        assert measured[path]["arena_cpu_us"] > 0 and measured[path]["bot_cpu_us"] > 0, path
    assert figures["fastest_floor"].endswith("(floor)")   # never a handoff pattern or bound
    # The bound: the fastest floor's design with a decision's work, over that floor.
    assert figures["bound"] == "grpc-aio-no-ee-working (bound)"
    fastest = measured[figures["fastest_floor"].split(" ")[0]]
    assert figures["bound_over_floor"] == pytest.approx(
        measured["grpc-aio-no-ee-working"]["median_us"] / fastest["median_us"], abs=0.01)
    assert figures["arena_over_floor"] > 0 and figures["arena_over_pipe_json"] > 0
    # By thread: every part that works on a decision is seen, and the parts add up to each
    # side's whole, counted another way (the process's clock; the bot's cgroup).
    by_thread = figures["arena_cpu_by_thread_us"]
    for role in (threadcpu.ASKING, threadcpu.HANDLER, threadcpu.POLLER, threadcpu.BOT_MAIN):
        assert by_thread[role] > 0, role
    arena_side = sum(us for role, us in by_thread.items() if not role.startswith("bot"))
    bot_side = sum(us for role, us in by_thread.items() if role.startswith("bot"))
    assert arena_side == pytest.approx(measured["arena"]["arena_cpu_us"], rel=0.1)
    assert bot_side == pytest.approx(measured["arena"]["bot_cpu_us"], rel=0.1)
    # The arena and its bot kept apart, as `arena play` keeps them, where there are two CPUs.
    every = sorted(os.sched_getaffinity(0))
    if len(every) >= 2:
        assert figures["cpus"] == {"arena": every[:1], "bot": every[1:]}


def test_a_bench_killed_with_sigkill_takes_its_floors_with_it():
    # Its floors are its children, and die with it whatever state they are in: here each
    # server is stopped (as one that never came up, or hangs), so no end of its input can end
    # it, nor its client, which waits for it.
    bench = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import os, signal, time
        from arena.bench import grpc_floor
        pairs = [grpc_floor.FloorPair(mode) for mode in ("sync", "aio-no-ee")]
        for pair in pairs:
            pair.round_trips(1)   # both ends up and serving
            os.kill(pair.server.pid, signal.SIGSTOP)
        print(" ".join(str(p.pid) for pair in pairs for p in (pair.server, pair.client)),
              flush=True)
        time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        floors = [int(pid) for pid in bench.stdout.readline().split()]
        assert len(floors) == 4
        folders = [folder for folder in Path(tempfile.gettempdir()).glob("arena-floor-*")
                   if (folder / scratch.OWNER_FILE).is_file()
                   and (folder / scratch.OWNER_FILE).read_text().startswith(f"{bench.pid} ")]
        assert len(folders) == 2   # their sockets' folders, owned by the bench
    finally:
        bench.kill()
        bench.wait()
    deadline = time.monotonic() + 10
    while any(proctree.running(pid) for pid in floors) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in floors if proctree.running(pid)]
    scratch.remove_orphans()   # what the next arena to make such a folder does first
    assert not [folder for folder in folders if folder.exists()]


@pytest.mark.parametrize("mode", grpc_floor.WORKING)
def test_the_working_modes_compute_a_decision_s_work_on_both_ends_of_each_round_trip(mode):
    pair = grpc_floor.FloorPair(mode)
    try:
        seconds = pair.round_trips(50)
    finally:
        pair.close()
    assert len(seconds) == 50
    assert min(seconds) * 1e6 >= sum(grpc_floor.WORK_US.values())


FORKING_BOT = '''
import os
import time
from arena.sdk import Bot


class Forking(Bot):
    """Forks a worker at its first act (as multiprocessing's fork start does), which lives
    on beside it; answers every act itself."""
    name = "forking"
    worker = None

    def act(self, observation, legal_moves):
        if self.worker is None:
            self.worker = os.fork()
            if self.worker == 0:   # the worker never touches the connection it shares
                time.sleep(60)
                os._exit(0)
        return legal_moves[0]


Forking().run()
'''


@needs_sandbox
def test_a_bot_whose_act_forks_keeps_its_stream_and_plays_on(tmp_path):
    folder = tmp_path / "forking"
    folder.mkdir()
    (folder / "bot.py").write_text(FORKING_BOT)
    (folder / "bot.toml").write_text('name = "forking"\ncommand = ["python3", "bot.py"]\n'
                                     'games = ["mandala"]\n')
    with BotHost(log_dir=tmp_path / "logs") as host, \
            host.seat(BotSpec.load(folder)) as forking:
        roomy = TimeControl(move_time=5.0, startup=20.0)
        record = play_match("mandala", 2, {}, 1,
                            [forking, StrategySeat("random", "mandala")], roomy)
    assert record["result"]["end"] == "normal", record["result"]
    assert [seat for seat, _ in record["moves"]].count(0) > 5
