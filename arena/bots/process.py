"""One bot process as the arena sees it: started in the sandbox with its own gRPC server on its
own Unix socket, its stream, one act at a time against the clock, its log's arena lines, and
how its death or hang-up is judged. `arena.bots.host` pools these processes and drives them
as seats.

Each process's server serves that process alone: at most `MAX_CONNECTIONS` connections and
`MAX_CALLS` calls at once (the handshake, then the Play stream), so a bot that floods its
socket with connections or half-open calls holds a handful of the arena's descriptors and
threads, and never reaches another bot's server. The one busy thread per bot is gRPC's
handler of the bot's Play stream: it sends what the seat puts in the bot's outbox and, after
an act, reads the one reply into the bot's reply queue, where `act` waits for it with the
deadline. Replies arrive as raw bytes and are parsed here, so a reply that is no MoveReply
is a protocol error rather than a silently ended stream.
"""
from __future__ import annotations

import collections
import itertools
import logging
import os
import queue
import secrets
import subprocess
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from arena import GRPC_ENVIRONMENT, hostload, sandbox
from arena.sandbox import logdrain
from arena.actlogs import LOG_PREFIX_END, header_line
from arena.bots.manifest import BotSpec
from arena.bot_errors import (BotCrashed, BotError, BotOutOfMemory, BotProtocolError,
                              BotReportedError, BotTimeout)
from arena.clock import MoveClock
from arena.errors import HostError, HostOverloaded, visible
from arena.v1 import arena_pb2

if TYPE_CHECKING:
    from arena.bots.host import BotHost

log = logging.getLogger(__name__)

PROTOCOL_VERSION = arena_pb2.PROTOCOL_VERSION_1
MAX_MOVE_CHARS = 1000               # far above any move in notation
MAX_BOT_MESSAGE_BYTES = 64 * 1024   # what a bot may send in one message; more breaks its stream
DEFAULT_LOG_CAP = 1024 * 1024       # bytes of stderr kept per bot process
SESSION_METADATA = "arena-session"
EXIT_GRACE = 1.0   # seconds a bot whose stream ended gets to exit, to tell a crash from a hang-up
# (0.2 s misread crashes as hang-ups on a loaded machine: a sandboxed tree takes a while to end)
STARTUP_WARN_SHARE = 1 / 3   # a start-up longer than this share of its budget is warned of
RETIRE_CPU_SHARE = 0.5  # a pooled process past this share of its CPU-time limit is replaced
CLOSE_GRACE = 1.0  # seconds the bots of a closing host get to read their last messages and exit
MAX_CONNECTIONS = 8     # connections one bot may hold to its server; more are closed at once
MAX_CALLS = 2           # calls at once on a bot's server (handshake, Play); more are refused
IDLE_CONNECTION_MS = 5000   # a connection without a call is closed after this
HELD_GAP_CPU = sandbox.HELD_QUOTA_US / 1e6
"""CPU seconds a held bot may use in one gap between its turns, plus HELD_GAP_SHARE of the
gap's length, before it is frozen instead from then on (`BotProcess.rest`): one period's
quota, which no honest bot comes near in a gap between two moves."""
HELD_GAP_SHARE = 0.005
"""... and this share of a core over a long gap (between matches: seconds). An idle Python
bot's timers (gRPC's, asyncio's) use ~0.1% of a core; a bot that spins while held takes its
whole quota, 1%, and more (the kernel enforces it at its tick). Without it, the sample bots
were frozen after their first gap of a second or two in a league (1-2 ms of timers)."""
HELD_LONG_GAP = HELD_GAP_CPU / HELD_GAP_SHARE
"""Seconds (0.2) from which a gap is long: its allowance is mostly its share of a core, which a
spinning bot takes twice over and an honest one a fifth of, so one such gap over it is proof."""
CAUGHT_FREEZE_WAIT = 0.05
"""Seconds at most that the arena waits, after the turn of a bot caught computing while held,
for every process of it to be frozen before another bot's turn starts (`BotProcess.rest`):
thirty spinning children took up to 7.85 ms of the next bot's first moments when the arena
did not wait (`arena bench fairness`, 2026-12-05). Bounded: a process the freezer cannot stop
at once (an uninterruptible wait) does not run either, and a bot must not slow the match."""
HELD_GAP_STRIKES = (3, 4)
"""A short gap (between two moves of a match) proves nothing alone: an honest Python bot's
runtime (its loop, gRPC's threads, the allocator) takes 1-4 ms in one gap now and then, as much
as a held spinner gets in each (measured 2026-12-04: 5% of the sample bot's gaps over 1 ms, a
spinner's 0.9-7 ms in every 30 ms gap, over 1 ms in most). So a bot is frozen when 3 of its
last 4 short gaps were over their allowance: a spinner at its third."""


# -- one bot process ------------------------------------------------------------------------
_ENDED = object()   # put in a bot's reply queue when its stream is over


class BotProcess:
    """One running bot: its sandboxed process, its stream's queues, its log."""

    def __init__(self, host: "BotHost", spec: BotSpec, log_path: Path, lane: int | None = None):
        self.host = host
        self.spec = spec
        self.lane = lane
        self.log_path = log_path
        # Starts every line this process prints in the log (processes of one bot share it).
        self.tag = f"{os.getpid()}.{next(host._process_numbers)}"
        self.token = secrets.token_hex(16)
        self.session = secrets.token_hex(16)
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()   # ArenaMessage, None = close
        self.replies: queue.SimpleQueue = queue.SimpleQueue()  # reply bytes or _ENDED
        self.handler_thread: int | None = None   # the native id of its stream's handler
        self.poller_thread: int | None = None    # ... and of its server's poller, if found
        self.attached = threading.Event()                      # the Play stream was opened
        self.stream_over = threading.Event()                   # ... and has ended since
        self.process: sandbox.SandboxedProcess | None = None
        self.broken = False                                    # no more use for this process
        self.act_ids = itertools.count(1)
        self.handshaken = False
        self.frozen = False                                    # by `rest`, until its next act
        self.waiting: list[arena_pb2.ArenaMessage] = []   # sent while it rests (`send`)
        self.rested_cpu: float | None = None   # its CPU time as it was last held
        self.rested_at = 0.0                   # and when (time.monotonic())
        self.held = True    # held between its turns; False once it used a gap's quota (`rest`)
        self.over_in_short_gaps: collections.deque[bool] = collections.deque(
            maxlen=HELD_GAP_STRIKES[1])   # its last short gaps: over their allowance?
        self.run_queue_mark = 0.0   # its threads' run-queue wait at the last mark
        self.socket_path = host.socket_dir / f"bot-{next(host._socket_ids)}.sock"
        self.server: grpc.Server | None = None

    def start(self, budget: float) -> None:
        """Starts the process and waits for its handshake and stream, at most `budget` s."""
        env = {"ARENA_SOCKET": str(self.socket_path), "ARENA_TOKEN": self.token,
               **GRPC_ENVIRONMENT}   # the SDK's fastest settings
        try:
            self.server = _serve(self)
        except (OSError, RuntimeError) as error:   # no socket or threads left for it
            raise HostError(f"the host could not serve bot {self.spec.name}: {error} (not "
                            "the bot's fault: the match is not played)") from None
        machine_before = hostload.machine_cpu_seconds()
        arena_before = hostload.arena_cpu_seconds()
        try:
            self.process = self.host.spawn(
                list(self.spec.command), self.spec.folder, env=env,
                sockets=[self.socket_path], limits=self.host.limits,
                log_path=self.log_path, log_cap_bytes=self.host.log_cap_bytes,
                log_prefix=f"{self.tag}{LOG_PREFIX_END}", unsafe=self.host.unsafe_no_sandbox,
                cpus=hostload.bot_cpus(self.host.limits.cpus))
        except sandbox.SandboxUnavailable:
            self.kill()
            raise   # the user's setup, not the bot's fault: no forfeit, one line
        except (OSError, sandbox.SandboxError) as error:
            # The sandbox, its cgroups or its pipes could not be made: the host's fault (a
            # bot's own command failing ends its process, a crash, later).
            self.kill()
            raise HostError(f"the host could not start bot {self.spec.name}: {error} (not "
                            "the bot's fault: the match is not played; fix the host and "
                            "play it again)") from None
        deadline = time.monotonic() + budget
        while not self.attached.wait(timeout=min(0.02, max(0.0, deadline - time.monotonic()))):
            status = self.process.poll()
            if status is not None:
                self.kill()
                self.check_host()
                raise self.death_error("before its handshake")
            if time.monotonic() >= deadline:
                self._startup_timeout(budget, machine_before, arena_before)
        took = time.monotonic() - (deadline - budget)
        if self.host.warn_slow_start and took > budget * STARTUP_WARN_SHARE:
            # Start-up time varies with the machine's load: a bot near its limit here
            # forfeits on a busier machine, so its author hears of it before that happens.
            log.warning(f"bot {self.spec.name} took {took:.2f} s to start, more than a third "
                        f"of its start-up allowance of {budget:g} s: on a busier machine it "
                        "may forfeit (load less before run(), or give --startup-time)")
        self.mark_run_queue()   # a start-up on a busy machine is not a move
        self.rest()
        self.rested_cpu = None   # its start-up's rest is no gap: not judged (`_judge_gap`)

    def _startup_timeout(self, budget: float, machine_before: float,
                         arena_before: float) -> None:
        """Ends a bot that did not start within `budget`, raising BotTimeout, or
        HostOverloaded when other processes kept it off the CPU it was due meanwhile: judged
        as a move's timeout is (`arena.hostload`), its threads' wait counted since spawn."""
        load = hostload.measure(budget, self.process.cpu_seconds(),
                                self.process.run_queue_wait(), machine_before,
                                self.host.limits.cpus,
                                arena_cpu=hostload.arena_cpu_seconds() - arena_before)
        self.kill()
        if load.starved:
            raise HostOverloaded(f"bot {self.spec.name} did not start within {budget:g} s "
                                 f"while other processes held the machine's CPU "
                                 f"({load.describe()}): not the bot's fault",
                                 {"start_up": True, **load.to_record()})
        raise BotTimeout(self.spec.name, f"no handshake within the start-up budget of "
                                         f"{budget:g} s ({load.describe()}; its stderr: "
                                         f"{self.log_path})")

    def check_host(self) -> None:
        """Raises HostError when a bot that ended before its handshake did so for the host's
        reasons: its sandbox never ran its command, or its folder is gone (moved or deleted
        while the arena ran: the bot's command found nothing to run)."""
        if self.host.spawn is not sandbox.spawn:
            return   # a test's fake process: no folder, no sandbox
        if not Path(self.spec.folder).is_dir():
            raise HostError(f"the host could not start bot {self.spec.name}: its folder "
                            f"{self.spec.folder} is gone (not the bot's fault: the match is "
                            "not played; restore the folder and play it again)")
        if self.process.never_ran():
            raise HostError(f"the host could not start bot {self.spec.name}: its sandbox ended "
                            f"with status {self.process.returncode} before running its command "
                            f"(see {self.log_path}; not the bot's fault: the match is not "
                            "played)")

    def rest(self) -> None:
        """Stops every process of the bot until its next act (CPU fairness: a bot computes
        only on its own clock, never while another bot thinks), at once, without waiting for
        a thread to stop (but for a bot caught computing while held).

        Held at the kernel's least CPU quota (`sandbox.SandboxedProcess.hold`): cheap, and its
        threads sleep on undisturbed, but a thread that spins meanwhile gets its quota plus
        what the scheduler lets it overrun until its tick (~2-7 ms a gap, measured). So a bot
        that used more than HELD_GAP_CPU, plus HELD_GAP_SHARE of a core, in one long gap or
        in most of its last short ones (`_judge_gap`), is frozen instead between all its
        later turns, the arena waiting (CAUGHT_FREEZE_WAIT at most) until it is. Either way,
        what it takes between its reply and its next move is counted against it
        (`arena.match.FROZEN_CPU_BURST`). What is sent to it meanwhile (MatchOver, NewMatch)
        waits in the arena until its next act, so it reads them on its own time, in order
        with its act's log line (`arena.actlogs`)."""
        if self.host.freeze_between_turns and self.alive():
            if self.held:
                self.rested_cpu, self.rested_at = self.process.cpu_seconds(), time.monotonic()
                self.process.hold()
            else:   # caught: stopped for sure before the next bot's clock starts
                self.process.freeze(wait=True, timeout=CAUGHT_FREEZE_WAIT)
            self.frozen = True

    def _judge_gap(self) -> None:
        """Freezes the bot between its later turns if it computed while held: in one long gap
        (HELD_LONG_GAP), or in most of its last short ones (HELD_GAP_STRIKES). Its start-up is
        not judged: a process that has just handshaken still settles (its gRPC runtime's
        threads took 3-7 ms after it, measured), and a spinner gains at most a quota there."""
        if self.held and self.rested_cpu is not None:
            length = time.monotonic() - self.rested_at
            over = (self.process.cpu_seconds() - self.rested_cpu
                    >= HELD_GAP_CPU + HELD_GAP_SHARE * length)
            if length < HELD_LONG_GAP:
                self.over_in_short_gaps.append(over)
                over = sum(self.over_in_short_gaps) >= HELD_GAP_STRIKES[0]
            if over:
                self.held = False
                log.info(f"bot {self.spec.name} computed while held (process {self.tag}): "
                         "frozen between its turns from now on")
        self.rested_cpu = None

    def cpu_seconds(self) -> float | None:
        """CPU time all the bot's processes used so far, or None once it is gone."""
        return self.process.cpu_seconds() if self.alive() else None

    def mark_run_queue(self) -> None:
        """Waits for a CPU count from now on (see `run_queue_wait`)."""
        self.run_queue_mark = self.process.run_queue_wait()

    def arena_wait(self) -> float | None:
        """Seconds the arena's threads that carry its moves waited for a CPU over their lives:
        the calling thread (the match's), its stream's handler and its server's poller (None
        before its stream, and when the arena runs where its bots do: only an arena kept
        apart weighs it, `hostload.arena_core_seconds`)."""
        if self.handler_thread is None or hostload.arena_cpus() is None:
            return None
        threads = (threading.get_native_id(), self.handler_thread, self.poller_thread)
        return hostload.threads_run_queue_wait(tuple(t for t in threads if t is not None))

    def run_queue_wait(self) -> float | None:
        """Seconds its threads (those alive now) waited for a CPU since the last
        `mark_run_queue` (its handshake, or the start of a move), or None once it is gone."""
        if not self.alive():
            return None
        return max(0.0, self.process.run_queue_wait() - self.run_queue_mark)

    def log_header(self, text: str, before_output: bool = False) -> None:
        """Writes `text` into the log as an arena line naming the process (`arena.actlogs`):
        through its output pipe once it runs, in order with what it printed (`before_output`:
        only if it prints after it), before that into the file, unless the log is full."""
        line = header_line(text, self.tag)
        if self.process is not None:
            self.process.log_line(line[:-1], before_output)
            return
        try:
            fd = os.open(self.log_path, logdrain.LOG_FLAGS, 0o644)
        except OSError as error:   # a link in its place (ELOOP), a folder, no room
            raise HostError(f"the host cannot write the log of bot {self.spec.name} at "
                            f"{self.log_path}: {error.strerror} (not the bot's fault: the "
                            "match is not played; a link there is refused, not followed)"
                            ) from None
        try:
            with logdrain.locked(fd) as size:   # its other processes' drains may be writing
                if size + len(line) <= self.host.log_cap_bytes:
                    os.write(fd, line)   # one write of one line: whole between others' lines
        finally:
            os.close(fd)

    def alive(self) -> bool:
        return (not self.broken and self.process is not None and self.attached.is_set()
                and not self.stream_over.is_set() and self.process.poll() is None)

    def send(self, message: arena_pb2.ArenaMessage) -> None:
        if self.stream_over.is_set() and not self.broken and self.process is not None:
            # Ended by the bot (a thawed bot may hang up between `act`'s check and here):
            # a crash only if its process died of it, as for a stream that ends later.
            raise self.stream_end_error()
        if not self.alive():
            raise self.death_error()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("to %s: %s", self.spec.name, text_format.MessageToString(
                message, as_one_line=True))
        if self.frozen:   # NewMatch, MatchOver: read at its next act, on its own time
            self.waiting.append(message)
        else:
            self.outbox.put(message)

    def _wake(self) -> None:
        """Ends its rest: what was sent meanwhile (`send`) goes out, then it is thawed (the
        act's log line is written by then: what it prints on them is that act's)."""
        for message in self.waiting:
            self.outbox.put(message)
        self.waiting.clear()
        self.process.thaw()
        self.frozen = False

    def act(self, message: arena_pb2.ArenaMessage, clock: MoveClock) -> str:
        """Sends an act request and waits for its reply until the clock's deadline."""
        act_id = message.act.act_id
        if self.frozen:   # since its last move (`rest`), unless it moved just before
            self._judge_gap()
            self._wake()
        self.send(message)    # a stream the bot has ended, before or after the thaw: raises
        try:
            reply = self.replies.get(timeout=None if clock.deadline == float("inf")
                                     else clock.deadline)
        except queue.Empty:
            margin = clock.deadline - clock.allowed
            timeout = BotTimeout(self.spec.name, f"no move within {clock.allowed:.3f} s "
                                                 f"(+{margin:.3f} s margin)")
            # Before the kill: the timeout's verdict weighs them (arena.hostload).
            timeout.at = time.monotonic()
            timeout.machine_cpu_seconds = hostload.machine_cpu_seconds()
            timeout.arena_cpu_seconds = hostload.arena_cpu_seconds()
            timeout.arena_core_seconds = hostload.arena_core_seconds()
            timeout.arena_wait = self.arena_wait()
            timeout.cpu_seconds = self.cpu_seconds()
            timeout.run_queue_wait = self.run_queue_wait()
            self.kill()
            raise timeout from None
        if reply is _ENDED:
            raise self.stream_end_error()
        try:
            reply = arena_pb2.MoveReply.FromString(reply)
        except DecodeError:
            self.kill()
            raise BotProtocolError(self.spec.name, f"sent {len(reply)} bytes that are not a "
                                                   f"MoveReply") from None
        if log.isEnabledFor(logging.DEBUG):
            log.debug("from %s: %s", self.spec.name, text_format.MessageToString(
                reply, as_one_line=True))
        if reply.act_id != act_id:
            self.kill()
            raise BotProtocolError(self.spec.name, f"answered act {reply.act_id}, "
                                                   f"but act {act_id} was asked")
        if reply.error:
            raise BotReportedError(self.spec.name,
                                   f"its code failed: {visible(reply.error[:200])}")
        if len(reply.move) > MAX_MOVE_CHARS:
            raise BotProtocolError(self.spec.name, f"a move of {len(reply.move)} characters")
        return reply.move

    def stream_end_error(self) -> BotError:
        """Why the stream ended while a move was awaited: a crash if the process died of it,
        else a protocol error (it closed the stream, or sent a message over the size limit,
        which gRPC answers by ending the stream)."""
        try:
            status = self.process.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            status = None
        self.kill()
        if status not in (None, 0):
            return self.death_error()
        return BotProtocolError(
            self.spec.name, "ended its stream without a move (a closed stream, or a message "
                            f"over the {MAX_BOT_MESSAGE_BYTES // 1024} KiB limit)")

    def death_error(self, when: str = "") -> BotError:
        """The error of a bot whose process ended or whose stream broke: a `memory` forfeit
        if the kernel killed it for its memory, else a crash saying how it ended."""
        note = self.death_note()
        if when:
            note = note.replace(" (its stderr", f" {when} (its stderr", 1)
        if self.process is not None and self.process.memory_killed():
            return BotOutOfMemory(self.spec.name, note)
        return BotCrashed(self.spec.name, note)

    def death_note(self) -> str:
        if self.process is None or self.process.poll() is None:
            return f"its stream broke (its stderr: {self.log_path})"
        return f"{self.process.death()} (its stderr: {self.log_path})"

    def stream_ended(self) -> None:
        """gRPC's callback when the Play stream terminates, for whatever reason."""
        self.stream_over.set()
        self.replies.put(_ENDED)

    def hang_up(self) -> None:
        """Ends the stream once what is queued on it is sent; a bot then exits by itself."""
        if self.process is not None and self.process.poll() is None:
            self._wake()
        self.outbox.put(None)

    def wait_exit(self, timeout: float) -> None:
        """Waits at most `timeout` seconds for a process that has its stream to exit."""
        if self.process is None or not self.attached.is_set():
            return
        try:
            self.process.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        """Kills the whole process tree, lets its stream handler go, stops its server."""
        self.broken = True
        if self.process is not None:
            self.process.kill()
        self.outbox.put(None)
        if self.server is not None:
            self.server.stop(grace=None)   # cancels what calls remain; no waiting for them
            self.socket_path.unlink(missing_ok=True)
        self.host._forget(self)


# -- the seat ----------------------------------------------------------------------------------
def _serve(process: BotProcess) -> grpc.Server:
    """A started gRPC server for `process` alone, on its socket (see the module docstring)."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=MAX_CALLS, thread_name_prefix="arena-bot"),
        options=[("grpc.max_receive_message_length", MAX_BOT_MESSAGE_BYTES),
                 ("grpc.max_concurrent_streams", MAX_CALLS),
                 ("grpc.max_allowed_incoming_connections", MAX_CONNECTIONS),
                 ("grpc.max_connection_idle_ms", IDLE_CONNECTION_MS)],
        maximum_concurrent_rpcs=MAX_CALLS)
    _add_servicer(_Servicer(process), server)
    server.add_insecure_port(f"unix:{process.socket_path}")
    before = set(threading.enumerate())
    server.start()
    # Its poller (gRPC's thread that reads the socket, `_serve`) carries every reply too.
    pollers = [thread.native_id for thread in threading.enumerate()
               if thread not in before and thread.name.endswith("(_serve)")]
    process.poller_thread = pollers[0] if len(pollers) == 1 else None
    return server


def _add_servicer(servicer: "_Servicer", server: grpc.Server) -> None:
    """Like the generated add_ArenaServicer_to_server, but Play takes the bot's replies as raw
    bytes: the arena parses them itself, so a reply that is no MoveReply becomes a clear
    protocol error at once (gRPC's own parser would only end the stream)."""
    handlers = {
        "Handshake": grpc.unary_unary_rpc_method_handler(
            servicer.Handshake, request_deserializer=arena_pb2.HandshakeRequest.FromString,
            response_serializer=arena_pb2.HandshakeReply.SerializeToString),
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play, request_deserializer=None,
            response_serializer=arena_pb2.ArenaMessage.SerializeToString),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("arena.v1.Arena",
                                                                          handlers),))


class _Servicer:
    """Serves one bot process: its handshake (once, with its token), then its Play stream."""

    def __init__(self, process: BotProcess):
        self.process = process
        self._lock = threading.Lock()

    def Handshake(self, request, context):
        process = self.process
        if request.protocol_version != PROTOCOL_VERSION:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"protocol version {request.protocol_version} is not supported: "
                          f"this arena speaks version {PROTOCOL_VERSION}")
        if not request.bot_name:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bot_name is empty")
        with self._lock:   # one-time: the token is used up here
            accepted = not process.handshaken and secrets.compare_digest(
                request.token.encode(), process.token.encode())
            process.handshaken |= accepted
        if not accepted:
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "wrong or already used token: connect with the ARENA_TOKEN the "
                          "arena started this bot with")
        return arena_pb2.HandshakeReply(session=process.session,
                                        protocol_version=PROTOCOL_VERSION)

    def Play(self, request_iterator, context):
        process = self.process
        session = dict(context.invocation_metadata()).get(SESSION_METADATA, "")
        with self._lock:   # check and claim at once: a session gets one stream, ever
            known = process.handshaken and secrets.compare_digest(
                session.encode(), process.session.encode())
            taken = known and process.attached.is_set()
            if known and not taken:
                if not context.add_callback(process.stream_ended):
                    process.stream_ended()   # the call is over already
                process.attached.set()
        if not known:
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          f"no handshake for this stream: send the session from the "
                          f"handshake as metadata {SESSION_METADATA!r}")
        if taken:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          "this session already has a stream")
        process.handler_thread = threading.get_native_id()   # it carries every move
        while (message := process.outbox.get()) is not None:
            yield message
            if message.HasField("act"):
                try:
                    reply = next(request_iterator)
                except (StopIteration, grpc.RpcError):
                    process.stream_ended()
                    return
                process.replies.put(reply)   # bytes, parsed by BotProcess.act
