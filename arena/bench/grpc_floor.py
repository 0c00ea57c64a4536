"""The floor of a decision over gRPC: a bare bidirectional stream between two processes on a
Unix socket, the arena's pattern without the arena (no protobuf, no queues, no sandbox).

The server asks (ASK_BYTES), the client answers (ANSWER_BYTES), `count` times; the server
times each round trip as the arena times a move. Three ways, each with both ends alike:

- `sync`: gRPC's synchronous API (a thread pool server, a blocking client);
- `aio`: `grpc.aio` on both ends;
- `aio-no-ee`: `grpc.aio` with gRPC's event engine off (`arena.GRPC_ENVIRONMENT` in both
  processes' environment, as the arena and its bots run).

`measure(mode, count, warm_up)` runs one pair and returns its round trips and the CPU each
process used per round trip. Run as `python -m arena.bench.grpc_floor serve|connect ...`
for the two ends (what `measure` starts).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena import GRPC_ENVIRONMENT

MODES = ("sync", "aio", "aio-no-ee")
ASK_BYTES = 600      # about an act request of mandala
ANSWER_BYTES = 20    # about a move reply
METHOD = "/floor.Floor/Play"
TIMEOUT = 120.0      # seconds a pair may take before it is a failure


@dataclass(frozen=True)
class FloorRun:
    mode: str
    seconds: list[float]          # each timed round trip, at the server
    server_cpu: float             # CPU seconds per round trip, server process (all threads)
    client_cpu: float             # the same, client process


def environment(mode: str) -> dict[str, str]:
    """The environment both ends of `mode` run with: gRPC's defaults but for `aio-no-ee`
    (an empty value, not none, as importing `arena` sets one where there is none)."""
    env = {**os.environ, **GRPC_ENVIRONMENT}
    if mode != "aio-no-ee":
        env["GRPC_EXPERIMENTS"] = ""
    return env


def measure(mode: str, count: int, warm_up: int) -> FloorRun:
    """Runs a server and a client process of `mode` for `warm_up + count` round trips."""
    if mode not in MODES:
        raise ValueError(f"unknown floor mode {mode!r}: one of {', '.join(MODES)}")
    if warm_up < 1 or count < 1:
        raise ValueError("a floor needs at least one warm-up round trip and one timed")
    with tempfile.TemporaryDirectory(prefix="arena-floor-") as folder:
        socket = str(Path(folder) / "floor.sock")
        command = [sys.executable, "-m", "arena.bench.grpc_floor"]
        env = environment(mode)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                          env.get("PYTHONPATH")]))
        server = subprocess.Popen(command + ["serve", mode, socket, str(count), str(warm_up)],
                                  env=env, stdout=subprocess.PIPE)
        client = subprocess.Popen(command + ["connect", mode, socket, str(warm_up)],
                                  env=env, stdout=subprocess.PIPE)
        try:
            served, _ = server.communicate(timeout=TIMEOUT)
            connected, _ = client.communicate(timeout=TIMEOUT)
        finally:
            for process in (server, client):
                if process.poll() is None:
                    process.kill()
                    process.wait()
        if server.returncode or client.returncode:
            raise RuntimeError(f"the {mode} floor failed: server exit {server.returncode}, "
                               f"client exit {client.returncode}")
        served, connected = json.loads(served), json.loads(connected)
    return FloorRun(mode, served["seconds"], served["cpu"], connected["cpu"])


# -- the two ends -------------------------------------------------------------------------------
def _serve(mode: str, socket: str, count: int, warm_up: int) -> dict:
    import grpc
    seconds: list[float] = []
    cpu = [0.0]
    ask = b"a" * ASK_BYTES
    total = warm_up + count

    def timed(index: int, started: float) -> None:
        if index == warm_up - 1:   # CPU is counted from the end of the warm-up
            cpu[0] = time.process_time()
        if index >= warm_up:
            seconds.append(time.monotonic() - started)

    if mode == "sync":
        from concurrent import futures

        def play(answers, context):
            for index in range(total):
                started = time.monotonic()
                yield ask
                next(answers)
                timed(index, started)
            cpu[0] = time.process_time() - cpu[0]

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            "floor.Floor", {"Play": grpc.stream_stream_rpc_method_handler(play)}),))
        server.add_insecure_port(f"unix:{socket}")
        server.start()
        while len(seconds) < count:
            time.sleep(0.05)
        server.stop(grace=1.0).wait()
    else:
        import asyncio

        async def play(answers, context):
            for index in range(total):
                started = time.monotonic()
                await context.write(ask)
                await context.read()
                timed(index, started)
            cpu[0] = time.process_time() - cpu[0]

        async def main() -> None:
            server = grpc.aio.server()
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
                "floor.Floor", {"Play": grpc.stream_stream_rpc_method_handler(play)}),))
            server.add_insecure_port(f"unix:{socket}")
            await server.start()
            while len(seconds) < count:
                await asyncio.sleep(0.05)
            await server.stop(grace=1.0)

        asyncio.run(main())
    return {"seconds": seconds, "cpu": cpu[0] / count}


def _connect(mode: str, socket: str, warm_up: int) -> dict:
    import grpc
    answer = b"m" * ANSWER_BYTES
    marks: list[float] = []   # CPU after the warm-up, and at the end
    asks = 0
    if mode == "sync":
        import queue
        answers: queue.SimpleQueue = queue.SimpleQueue()
        with grpc.insecure_channel(f"unix:{socket}") as channel:
            play = channel.stream_stream(METHOD)
            for _ in play(iter(answers.get, None), wait_for_ready=True):
                asks += 1
                if asks == warm_up:
                    marks.append(time.process_time())
                answers.put(answer)
            answers.put(None)
    else:
        import asyncio

        async def main() -> int:
            asked = 0
            async with grpc.aio.insecure_channel(f"unix:{socket}") as channel:
                call = channel.stream_stream(METHOD)(wait_for_ready=True)
                while (await call.read()) is not grpc.aio.EOF:
                    asked += 1
                    if asked == warm_up:
                        marks.append(time.process_time())
                    await call.write(answer)
            return asked

        asks = asyncio.run(main())
    marks.append(time.process_time())
    timed = asks - warm_up
    return {"cpu": (marks[-1] - marks[0]) / timed if timed > 0 and len(marks) == 2 else 0.0}


if __name__ == "__main__":
    role, mode, socket, *numbers = sys.argv[1:]
    if role == "serve":
        result = _serve(mode, socket, int(numbers[0]), int(numbers[1]))
    else:
        result = _connect(mode, socket, int(numbers[0]))
    print(json.dumps(result))
