"""A fake bot transport for protocol tests (like python-chess's MockTransport): the bot is a
script run on a thread of the test process, speaking real gRPC over the host's real Unix
socket, so the arena's side of the protocol is tested without bubblewrap or processes.

`BotHost(spawn=FakeSpawn({"name": script}))` runs, for each bot spec named `name`, `script`:
a function from each act request (arena_pb2.ArenaMessage) to the reply bytes, or HANG_UP
(close the stream) or CRASH (drop the connection and "exit" with status 1). The sandbox
itself is tested with real processes (test_sandbox.py, test_misbehaving_bots.py).
"""
from __future__ import annotations

import queue
import subprocess
import threading
from pathlib import Path
from typing import Callable

import grpc

from arena.bots import BotSpec
from arena.v1 import arena_pb2

HANG_UP = object()
CRASH = object()
Script = Callable[[arena_pb2.ArenaMessage], "bytes | object"]


def first_legal(message: arena_pb2.ArenaMessage) -> bytes:
    """The reply of a well-behaved bot: the first legal move."""
    return reply(message, message.act.legal_moves[0])


def reply(message: arena_pb2.ArenaMessage, move: str, act_id: int | None = None) -> bytes:
    return arena_pb2.MoveReply(act_id=message.act.act_id if act_id is None else act_id,
                               move=move).SerializeToString()


def fake_spec(name: str, games=("mandala",)) -> BotSpec:
    """A spec for a scripted bot (no folder on disk is read)."""
    return BotSpec(Path("/nonexistent/fake-bots") / name, name, ("fake",), tuple(games),
                   f"fake-{name}")


class FakeSpawn:
    """Stands in for sandbox.spawn: starts the script of the spec's folder name."""

    def __init__(self, scripts: dict[str, Script], protocol_version: int = 1):
        self.scripts = scripts
        self.protocol_version = protocol_version
        self.started: list[FakeBotProcess] = []

    def __call__(self, argv, folder, *, env, **_sandbox_settings) -> "FakeBotProcess":
        process = FakeBotProcess(self.scripts[Path(folder).name], env, self.protocol_version)
        self.started.append(process)
        return process


class FakeBotProcess:
    """What sandbox.spawn returns (poll, wait, kill, death, memory_killed), for a bot that
    is a thread."""

    def __init__(self, script: Script, env: dict, protocol_version: int):
        self.script = script
        self.exit_status = 0
        self.channel = grpc.insecure_channel(f"unix:{env['ARENA_SOCKET']}")
        self.thread = threading.Thread(target=self._serve,
                                       args=(env["ARENA_TOKEN"], protocol_version), daemon=True)
        self.thread.start()

    def _serve(self, token: str, protocol_version: int) -> None:
        try:
            session = self.channel.unary_unary(
                "/arena.v1.Arena/Handshake",
                request_serializer=arena_pb2.HandshakeRequest.SerializeToString,
                response_deserializer=arena_pb2.HandshakeReply.FromString)(
                arena_pb2.HandshakeRequest(token=token, protocol_version=protocol_version,
                                           bot_name="fake"), timeout=10).session
            outgoing: queue.SimpleQueue = queue.SimpleQueue()
            play = self.channel.stream_stream(
                "/arena.v1.Arena/Play", request_serializer=None,
                response_deserializer=arena_pb2.ArenaMessage.FromString)
            call = play(iter(outgoing.get, None), metadata=(("arena-session", session),))
            for message in call:
                if not message.HasField("act"):
                    continue
                answer = self.script(message)
                if answer is HANG_UP:
                    outgoing.put(None)
                elif answer is CRASH:
                    self.exit_status = 1
                    call.cancel()
                    return
                else:
                    outgoing.put(answer)
        except (grpc.RpcError, ValueError):   # refused, cancelled or the channel closed
            if self.exit_status == 0:
                self.exit_status = 1

    def poll(self) -> int | None:
        return None if self.thread.is_alive() else self.exit_status

    def wait(self, timeout: float | None = None) -> int:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise subprocess.TimeoutExpired("fake bot", timeout)
        return self.exit_status

    def death(self) -> str:
        """How it ended, worded as the sandbox words a real bot's end."""
        if self.exit_status < 0:
            return f"killed by signal {-self.exit_status}"
        return f"exited with status {self.exit_status}"

    def memory_killed(self) -> bool:
        return False   # a thread has no memory limit of its own

    # A thread in the test's own process cannot be frozen, and its CPU time is not its own:
    # fairness is tested with real sandboxed bots (tests/test_fair_play.py).
    def hold(self) -> None:
        pass

    def freeze(self, wait: bool = True) -> None:
        pass

    def thaw(self, surely: bool = False) -> None:
        pass

    def cpu_seconds(self) -> float | None:
        return None

    def run_queue_wait(self) -> float:
        return 0.0   # a thread of the test's process: it never waits as a bot would

    def never_ran(self) -> bool:
        return False

    def log_line(self, line: bytes, before_output: bool = False) -> bool:
        return False   # a thread has no output pipe: the arena's lines go nowhere

    def kill(self) -> None:
        if self.thread.is_alive():
            self.exit_status = -9
        self.channel.close()
