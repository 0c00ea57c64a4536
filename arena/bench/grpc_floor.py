"""The floor of a decision over gRPC: a bare bidirectional stream between two processes on a
Unix socket, the arena's pattern without the arena (no protobuf, no queues, no sandbox).

The server asks (ASK_BYTES), the client answers (ANSWER_BYTES); the server times each round
trip as the arena times a move. Three ways, each with both ends alike:

- `sync`: gRPC's synchronous API (a thread pool server, a blocking client);
- `aio`: `grpc.aio` on both ends;
- `aio-no-ee`: `grpc.aio` with gRPC's event engine off (`arena.GRPC_ENVIRONMENT` in both
  processes' environment, as the arena and its bots run).

And two patterns of a server whose asks come from another thread, as a match runner's do
(`PATTERNS`, client and settings as `aio-no-ee`): what handing each ask over to gRPC's own
thread costs, and which way of serving costs less.

- `sync-handoff`: the arena's own way (arena.bots.process): a synchronous server whose
  stream handler takes each ask from a queue the asking thread fills, and puts the answer
  in another;
- `aio-handoff`: a `grpc.aio` server on an event loop in a thread of its own (the "one
  asyncio server per worker" design), the asking thread scheduling each round trip on the
  loop (`call_soon_threadsafe`) and waiting for the answer on a queue;
- `sync-handoff-working`: `sync-handoff` whose two ends also compute what the arena and the
  SDK compute per decision (`WORK_US`, spinning): what the arena's design costs with its
  work and no more. Against `sync-handoff` it shows what that work costs on this machine,
  which may be several times its own length: a core that idles between wake-ups pays for
  being woken (a virtual machine's exit to its host, where the guest does not poll).
- `unary-ask`: the protocol turned around, the bot serving: the asking thread makes one
  unary call per ask on a synchronous channel (gRPC polls for it in that very thread: no
  hand-over) to a `grpc.aio` server that answers. The way a decision would cost least
  from a thread that asks, were bots servers rather than clients.

And one bound (`BOUNDS`): `aio-no-ee-working`, the fastest floor's own design (the asking
code in the server's stream handler, on gRPC's event loop: no hand-over at all) whose two
ends compute what a decision's Python work takes (`WORK_US`, as `sync-handoff-working`). No
way of serving the arena could build does better with that work: it shows how far the
work alone keeps a decision from the floor on this machine.

`FloorPair(mode)` starts the two processes; `round_trips(n)` has the server make `n` more
round trips and returns their times, so a benchmark can interleave a floor with other paths
in small turns (whatever else the machine does then weighs on all alike); `cpu()` gives the
CPU each process has used so far (its threads' scheduler time, arena.bench.threadcpu). Run as
`python -m arena.bench.grpc_floor serve|connect MODE SOCKET [MICROS]` for the two ends (what
`FloorPair` starts): the server reads a count a line on stdin and answers each with one JSON
line of round-trip seconds; an empty line or the end of stdin ends the stream; the client
spins MICROS before each answer.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from arena import GRPC_ENVIRONMENT
from arena.bench import threadcpu
from arena.sandbox import scratch

MODES = ("sync", "aio", "aio-no-ee")
PATTERNS = ("sync-handoff", "aio-handoff", "sync-handoff-working", "unary-ask")
BOUNDS = ("aio-no-ee-working",)
WORKING = ("sync-handoff-working", "aio-no-ee-working")   # the modes that spin WORK_US
WORK_US = {"ask": 26, "after": 12, "answer": 17}
"""What the WORKING modes compute around each round trip, in µs of spinning: about the
Python work of a decision of the random sample bot, measured warm in-process (2026-12-04).
The arena before the ask (the act message 10, its log line 4, the gap's judgement and the
thaw 5, the checks of `send` 7) and after the answer (the reply's parse and checks 3, the
CPU read and the hold 9); the bot before its answer (parse 2, the observation as a dict 12,
the move and its reply 3)."""
ASK_BYTES = 600      # about an act request of mandala
ANSWER_BYTES = 20    # about a move reply
METHOD = "/floor.Floor/Play"
ASK_METHOD = "/floor.Floor/Ask"   # unary-ask's: an empty ask ends the answering server
TIMEOUT = 120.0      # seconds a pair may take before it is a failure
PARENT_VARIABLE = "ARENA_FLOOR_PARENT"   # the bench's pid, for its floors to die with it


def environment(mode: str) -> dict[str, str]:
    """The environment both ends of `mode` run with: gRPC's defaults but for `aio-no-ee`
    (an empty value, not none, as importing `arena` sets one where there is none)."""
    env = {**os.environ, **GRPC_ENVIRONMENT}
    if mode not in ("aio-no-ee", *PATTERNS, *BOUNDS):
        env["GRPC_EXPERIMENTS"] = ""
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                      os.environ.get("PYTHONPATH")]))
    return env


class FloorPair:
    """A server and a client process of `mode`, connected, waiting for `round_trips`."""

    def __init__(self, mode: str):
        if mode not in MODES + PATTERNS + BOUNDS:
            raise ValueError(f"unknown floor mode {mode!r}: one of "
                             f"{', '.join(MODES + PATTERNS + BOUNDS)}")
        self.mode = mode
        # Owned by this process: a bench killed (kill -9) leaves it to the next arena's sweep.
        self._folder = scratch.folder_of_this_process("arena-floor-")
        socket = str(self._folder / "floor.sock")
        command = [sys.executable, "-m", "arena.bench.grpc_floor"]
        env = {**environment(mode), PARENT_VARIABLE: str(os.getpid())}
        self.server = subprocess.Popen(command + ["serve", mode, socket], env=env, text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        # A handoff pattern's or bound's client is the fastest floor's; unary-ask's answers
        # on its own.
        client_mode = ("aio-no-ee" if mode in PATTERNS + BOUNDS and mode != "unary-ask"
                       else mode)
        work = [str(WORK_US["answer"])] if mode in WORKING else []
        try:
            self.client = subprocess.Popen(command + ["connect", client_mode, socket, *work],
                                           env=env)
        except BaseException:
            self.server.kill()
            self.server.wait()
            shutil.rmtree(self._folder, ignore_errors=True)
            raise

    def round_trips(self, count: int) -> list[float]:
        """Seconds of each of `count` more round trips, timed by the server."""
        self.server.stdin.write(f"{count}\n")
        self.server.stdin.flush()
        line = self.server.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.mode} floor's server ended (status "
                               f"{self.server.wait(TIMEOUT)})")
        return json.loads(line)

    def cpu(self) -> tuple[float, float]:
        """CPU seconds the server and the client have used so far, all their threads."""
        return threadcpu.process_cpu(self.server.pid), threadcpu.process_cpu(self.client.pid)

    def close(self) -> None:
        try:
            self.server.stdin.close()   # the server ends the stream, the client then ends
            for process in (self.server, self.client):
                process.wait(TIMEOUT)
        finally:
            for process in (self.server, self.client):
                if process.poll() is None:
                    process.kill()
                    process.wait()
            shutil.rmtree(self._folder, ignore_errors=True)


# -- the two ends -------------------------------------------------------------------------------
def _counts():
    """The counts asked for on stdin, until an empty line or its end."""
    while (line := sys.stdin.readline().strip()):
        yield int(line)


def _report(seconds: list[float]) -> None:
    print(json.dumps(seconds), flush=True)


def _serve(mode: str, socket: str) -> None:
    if mode == "unary-ask":
        _ask_unary(socket)
        return
    if mode in PATTERNS:
        _serve_handing_over(mode, socket)
        return
    import grpc
    ask = b"a" * ASK_BYTES
    handlers = {}
    done = threading.Event()

    if mode == "sync":
        from concurrent import futures

        def play(answers, context):
            for count in _counts():
                seconds = []
                for _ in range(count):
                    started = time.monotonic()
                    yield ask
                    next(answers)
                    seconds.append(time.monotonic() - started)
                _report(seconds)
            done.set()

        handlers["Play"] = grpc.stream_stream_rpc_method_handler(play)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            "floor.Floor", handlers),))
        server.add_insecure_port(f"unix:{socket}")
        server.start()
        done.wait()
        server.stop(grace=1.0).wait()
        return
    import asyncio
    before, after = _work_around_asks(mode)

    async def play(answers, context):
        loop = asyncio.get_running_loop()
        pending = _counts()
        while (count := await loop.run_in_executor(None, next, pending, None)) is not None:
            seconds = []
            for _ in range(count):
                started = time.monotonic()
                _spin(before)
                await context.write(ask)
                await context.read()
                _spin(after)
                seconds.append(time.monotonic() - started)
            _report(seconds)
        done.set()

    async def main() -> None:
        server = await _aio_server(socket, {"Play": grpc.stream_stream_rpc_method_handler(play)})
        while not done.is_set():
            await asyncio.sleep(0.05)
        await server.stop(grace=1.0)

    asyncio.run(main())


def _serve_handing_over(mode: str, socket: str) -> None:
    """A server of a handoff pattern (PATTERNS): this thread times each round trip, which a
    thread of gRPC's (sync) or an event loop's thread (aio) carries out."""
    import queue

    import grpc
    ask = b"a" * ASK_BYTES
    answers: queue.SimpleQueue = queue.SimpleQueue()
    attached = threading.Event()
    generic = lambda play: (grpc.method_handlers_generic_handler(   # noqa: E731
        "floor.Floor", {"Play": grpc.stream_stream_rpc_method_handler(play)}),)
    if mode in ("sync-handoff", "sync-handoff-working"):
        from concurrent import futures
        asks: queue.SimpleQueue = queue.SimpleQueue()

        def play(requests, context):
            attached.set()
            while (message := asks.get()) is not None:
                yield message
                answers.put(next(requests))

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers(generic(play))
        server.add_insecure_port(f"unix:{socket}")
        server.start()
        round_trip = lambda: asks.put(ask)   # noqa: E731
        stop = lambda: (asks.put(None), server.stop(grace=1.0).wait())   # noqa: E731
    else:
        import asyncio
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        calls, done = [], asyncio.Event()

        async def play(requests, context):
            calls.append(context)
            attached.set()
            await done.wait()

        async def one() -> None:
            await calls[0].write(ask)
            answers.put(await calls[0].read())

        server = asyncio.run_coroutine_threadsafe(_aio_server(socket, {
            "Play": grpc.stream_stream_rpc_method_handler(play)}), loop).result()
        round_trip = lambda: loop.call_soon_threadsafe(loop.create_task, one())  # noqa: E731

        def stop() -> None:
            loop.call_soon_threadsafe(done.set)
            asyncio.run_coroutine_threadsafe(server.stop(grace=1.0), loop).result()
    if not attached.wait(TIMEOUT):
        raise RuntimeError("the floor's client never connected")
    before, after = _work_around_asks(mode)
    for count in _counts():
        seconds = []
        for _ in range(count):
            started = time.monotonic()
            _spin(before)
            round_trip()
            answers.get()
            _spin(after)
            seconds.append(time.monotonic() - started)
        _report(seconds)
    stop()


def _work_around_asks(mode: str) -> tuple[float, float]:
    """µs the asking end of `mode` spins before each ask and after its answer."""
    return (WORK_US["ask"], WORK_US["after"]) if mode in WORKING else (0, 0)


def _ask_unary(socket: str) -> None:
    """unary-ask's asking end (the `serve` role: it times): a unary call per ask."""
    import grpc
    ask = b"a" * ASK_BYTES
    with grpc.insecure_channel(f"unix:{socket}") as channel:
        call = channel.unary_unary(ASK_METHOD)
        call(ask, wait_for_ready=True, timeout=TIMEOUT)   # connected
        for count in _counts():
            seconds = []
            for _ in range(count):
                started = time.monotonic()
                call(ask)
                seconds.append(time.monotonic() - started)
            _report(seconds)
        call(b"", timeout=TIMEOUT)


def _answer_unary(socket: str) -> None:
    """unary-ask's answering end (the `connect` role): a grpc.aio server."""
    import asyncio

    import grpc
    answer = b"m" * ANSWER_BYTES

    async def main() -> None:
        done = asyncio.Event()

        async def ask(request, context):
            if not request:
                done.set()
            return answer

        server = await _aio_server(socket, {"Ask": grpc.unary_unary_rpc_method_handler(ask)})
        await done.wait()
        await server.stop(grace=1.0)

    asyncio.run(main())


async def _aio_server(socket: str, handlers: dict):
    """A started grpc.aio server of the floor's `handlers` (method name -> handler)."""
    import grpc
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("floor.Floor",
                                                                          handlers),))
    server.add_insecure_port(f"unix:{socket}")
    await server.start()
    return server


def _spin(micros: float) -> None:
    """Keeps this thread on its CPU for `micros` µs (0: not at all)."""
    if micros:
        end = time.perf_counter() + micros / 1e6
        while time.perf_counter() < end:
            pass


def _connect(mode: str, socket: str, work: str = "0") -> None:
    """The client: answers each ask, after `work` µs of spinning."""
    if mode == "unary-ask":
        _answer_unary(socket)
        return
    import grpc
    micros = float(work)
    answer = b"m" * ANSWER_BYTES
    if mode == "sync":
        import queue
        answers: queue.SimpleQueue = queue.SimpleQueue()
        with grpc.insecure_channel(f"unix:{socket}") as channel:
            play = channel.stream_stream(METHOD)
            for _ in play(iter(answers.get, None), wait_for_ready=True):
                answers.put(answer)
            answers.put(None)
        return
    import asyncio

    async def main() -> None:
        async with grpc.aio.insecure_channel(f"unix:{socket}") as channel:
            call = channel.stream_stream(METHOD)(wait_for_ready=True)
            while (await call.read()) is not grpc.aio.EOF:
                _spin(micros)
                await call.write(answer)

    asyncio.run(main())


if __name__ == "__main__":
    # A bench killed (kill -9) takes its floors with it: a client whose server never came
    # would otherwise wait for it forever. Its parent gone before that took hold: end now.
    from arena.lifeline import die_with_parent
    if not die_with_parent(PARENT_VARIABLE):
        sys.exit(1)
    role, mode, socket, *work = sys.argv[1:]
    if role == "serve":
        _serve(mode, socket)
    else:
        _connect(mode, socket, *work)
