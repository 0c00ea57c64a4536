"""How busy the machine was during a move: did a bot that timed out have the CPU it was due?

A bot may use one core (its CPU quota) during its own move. When it runs out of time, the
arena compares the CPU time every process on the machine used during the move with the bot's
own: whatever the others used was taken from the machine's cores. If the others left the bot
less than `STARVED_SHARE` of its core on average while its threads were waiting for a CPU
(their run-queue wait, /proc/TID/schedstat), the host kept it off the CPU and the timeout is
voided (`arena.errors.HostOverloaded`); else the bot simply thought too long (or slept) and
loses on time. A bot cannot fake this: its own processes count as the bot's, never as the
others', and its own threads' waits alone cannot make a timeout the host's. Nor does the
arena's own process count as the others (`arena_cpu_seconds`): a bot can make it work (by
calling its server again and again: at 6 threads, a quarter of a core) but never starves
it of anything but that, and it does almost nothing else while a bot thinks.

"The machine" is the CPUs the arena may run on: all of them, or the one a league worker is
pinned to with its bots (`pin`), whose others' use is what a bot there competes with. An
arena that keeps its bots apart from its own core (`keep_apart`) also weighs that core: the
others there delay its reading of a reply (MoveLoad.arena_starved).
Reading its CPU time costs one small read (the root cpuacct cgroup's counters, or
/proc/stat), so every move takes it.
"""
from __future__ import annotations

import functools
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import Callable

STARVED_SHARE = 0.75
"""A timeout is the host's when the others left the bot less than this share of its core(s)."""
WAIT_SHARE = 0.5
"""... and its threads waited at least this share of what a bot runnable all along would have
waited (see MoveLoad.starved)."""


@functools.lru_cache(maxsize=None)
def _cpuacct_root() -> str | None:
    """The folder of the cpuacct hierarchy's root, which counts every process of the machine
    in nanoseconds, or None where there is none (then /proc/stat counts, in ticks)."""
    with open("/proc/self/mountinfo") as mountinfo:
        lines = mountinfo.read().splitlines()
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if (len(tail) >= 3 and tail[0] == "cgroup" and "cpuacct" in tail[2].split(",")
                and fields[3] == "/" and os.path.exists(os.path.join(fields[4], "cpuacct.usage"))):
            return fields[4]
    return None


_TICK = os.sysconf("SC_CLK_TCK")
_cpus: frozenset[int] | None = None   # this process's CPUs, once read (`pin` sets them)
_apart: frozenset[int] | None = None  # where its bots start, once `keep_apart` is called
_read_counter: Callable[[], float] | None = None
_arena_counter: tuple[frozenset[int], Callable[[], float]] | None = None
_schedstat: dict[int, int] = {}   # thread id -> its open /proc/self/task/TID/schedstat
_SCHEDSTAT_FILES = 64   # at most, so that threads that ended unread hold none for long
_schedstat_lock = threading.Lock()


def cpus() -> frozenset[int]:
    """The CPUs this arena (and so its bots) may run on: its affinity, read once."""
    global _cpus
    if _cpus is None:
        try:
            _cpus = frozenset(os.sched_getaffinity(0))
        except AttributeError:   # pragma: no cover - not Linux
            _cpus = frozenset(range(os.cpu_count() or 1))
    return _cpus


def cores() -> int:
    """How many CPUs this arena (and so its bots) may run on."""
    return len(cpus())


def pin(cpu: int) -> None:
    """Keeps every thread of this process, and so every process it starts from now on (its
    bots), on `cpu` alone, and counts the machine's CPU time on that CPU alone from now on
    (see `machine_cpu_seconds`). A league worker whose match runs on one core wakes no
    other core at each of its decisions (`arena.league.workers`)."""
    global _cpus, _read_counter, _apart
    _pin_threads({cpu})
    _cpus, _read_counter, _apart = frozenset({cpu}), None, None


def keep_apart() -> bool:
    """Keeps every thread of this process on the first of its CPUs and has its bots started
    on the others (`bot_cpus`), when it may use two or more; False when it may not. For a
    process that runs one match at a time on a machine of its own (`arena play`, a lone
    league worker): a decision hands over between the arena's threads (the match's, gRPC's)
    and the bot's, and each hand-over to a thread asleep on an idle core wakes that core,
    which a virtual machine pays dearly for. Kept apart, the arena's hand-overs stay on its
    core and the bot has a core of its own (measured 2026-12-05, `arena bench protocol`:
    230-240 µs a decision instead of 350-390, each side spending a third less CPU). The
    machine's CPU time is still counted on all the CPUs (`machine_cpu_seconds`)."""
    global _apart
    every = sorted(cpus())   # read before this process is pinned
    if len(every) < 2 or _apart is not None:
        return False
    _pin_threads({every[0]})
    _apart = frozenset(every[1:])
    return True


def end_apart() -> None:
    """Undoes `keep_apart`: every thread of this process may run on all its CPUs again (for a
    process that goes on after its match: a test that plays one in-process)."""
    global _apart
    if _apart is not None:
        _apart = None
        _pin_threads(cpus())


def bot_cpus(cores: float) -> frozenset[int] | None:
    """The CPUs to start a bot allowed `cores` cores on: the ones its arena keeps apart from
    its own (`keep_apart`) when they are enough, else all the arena's; None when the arena is
    not kept apart (the bot runs where the arena does)."""
    if _apart is None:
        return None
    return _apart if len(_apart) >= cores else cpus()


def _pin_threads(allowed: frozenset[int] | set[int]) -> None:
    for thread in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(thread), allowed)
        except ProcessLookupError:   # a thread that ended meanwhile
            pass


def arena_cpus() -> frozenset[int] | None:
    """The CPUs the arena's own threads keep to, apart from its bots' (`keep_apart`); None
    when it runs where its bots do."""
    return None if _apart is None else cpus() - _apart


def arena_core_seconds() -> float | None:
    """CPU time every process used so far on the arena's own CPUs while it keeps its bots
    apart (`arena_cpus`); None when it does not. Others' load there delays the arena's
    reading of a reply, not the bot (see MoveLoad.arena_starved). A counter."""
    global _arena_counter
    own = arena_cpus()
    if own is None:
        return None
    if _arena_counter is None or _arena_counter[0] != own:
        _arena_counter = own, _counter(own)
    return _arena_counter[1]()


def threads_run_queue_wait(threads: tuple[int, ...]) -> float | None:
    """Seconds these threads of this process waited for a CPU over their lives (field 2 of
    their schedstat, files kept open); None when one of them is gone or it cannot be told.
    A counter: compare two readings of the same threads."""
    with _schedstat_lock:
        return _threads_wait(threads)


def _threads_wait(threads: tuple[int, ...]) -> float | None:
    total = 0
    for tid in threads:
        fd = _schedstat.get(tid)
        try:
            if fd is None:
                if len(_schedstat) >= _SCHEDSTAT_FILES:   # the live ones open again
                    for old in _schedstat.values():
                        os.close(old)
                    _schedstat.clear()
                fd = _schedstat[tid] = os.open(f"/proc/self/task/{tid}/schedstat",
                                               os.O_RDONLY | os.O_CLOEXEC)
            total += int(os.pread(fd, 128, 0).split()[1])
        except (OSError, IndexError, ValueError):   # ended (its id may come again): forget it
            if tid in _schedstat:
                os.close(_schedstat.pop(tid))
            return None
    return total / 1e9


def arena_cpu_seconds() -> float:
    """CPU time this arena process (all its threads) used so far: not the others' (a bot that
    keeps the arena busy, calling its server in a loop, must not pass that off as the host's
    load). A counter: compare two readings."""
    return time.process_time()


def machine_cpu_seconds() -> float:
    """CPU time every process of the machine used so far on this arena's CPUs (`cpus`): all
    of them, unless it was pinned to some. A counter: compare two readings."""
    global _read_counter
    if _read_counter is None:
        _read_counter = _counter(cpus())
    return _read_counter()


def _counter(chosen: frozenset[int]) -> Callable[[], float]:
    """A reader of the CPU time used on the CPUs `chosen`: one small read of a descriptor
    kept open (the root cpuacct's counter, else /proc/stat), summed over `chosen` when they
    are not all the machine's CPUs."""
    root = _cpuacct_root()
    every = chosen >= frozenset(range(os.cpu_count() or 1))
    if root is not None:
        name = "cpuacct.usage" if every else "cpuacct.usage_percpu"
        fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_CLOEXEC)
        if every:
            return lambda: int(os.pread(fd, 64, 0)) / 1e9
        return lambda: sum(int(value) for index, value in enumerate(
            os.pread(fd, 4096, 0).split()) if index in chosen) / 1e9
    fd = os.open("/proc/stat", os.O_RDONLY | os.O_CLOEXEC)
    # "cpu  user nice system idle iowait irq softirq steal ...": all but idle and iowait,
    # of the first line (every CPU) or of the lines "cpuN" of the chosen ones
    names = [b"cpu"] if every else [f"cpu{cpu}".encode() for cpu in sorted(chosen)]

    def read() -> float:
        lines = os.pread(fd, 1 << 16, 0).split(b"\n")
        busy = 0
        for line in lines:
            fields = line.split()
            if fields and fields[0] in names:
                busy += sum(int(value) for index, value in enumerate(fields[1:9])
                            if index not in (3, 4))
        return busy / _TICK
    return read


@dataclass(frozen=True)
class MoveLoad:
    """What the machine did during one move of a bot that ran out of time."""

    wall: float          # seconds from the act to the verdict
    bot_cpu: float       # CPU seconds of all the bot's processes in that time
    others_cpu: float    # CPU seconds of every other process of the machine in that time
    cores: int           # cores the bots may run on
    bot_cores: float     # the bot's CPU quota, in cores
    waited: float | None  # seconds its threads waited for a CPU (see `starved`; None: unknown)
    arena_cpu: float = 0.0  # CPU seconds of the arena's own process: in neither of the above
    arena_others: float | None = None
    """CPU seconds other processes used on the arena's own CPUs, kept apart from its bots'
    (`arena_cpus`; None when it runs where its bots do)."""
    arena_waited: float | None = None
    """Seconds the arena's threads that carry the move (the match's, the bot's stream
    handler and server poller) waited for a CPU meanwhile (None: unknown)."""
    overrun: float = 0.0  # seconds past the time the bot was allowed

    @property
    def share_left(self) -> float:
        """The share of the bot's core(s) the other processes left it, on average."""
        if self.wall <= 0:
            return 1.0
        free = self.cores - self.others_cpu / self.wall
        return max(0.0, min(self.bot_cores, free)) / self.bot_cores

    @property
    def starved(self) -> bool:
        """The host's doing: the bot was kept off its CPU (`bot_starved`), or the arena off
        its own while it was to read the reply (`arena_starved`)."""
        return self.bot_starved or self.arena_starved

    @property
    def arena_starved(self) -> bool:
        """An arena kept apart from its bots times their moves on a core of its own: other
        processes that hold that core delay its reading of a reply, which the bot's core and
        wait do not show (high-priority spinners there made a 1 ms move take 60-400 ms).
        Its timeout is the host's when the others left the arena less than STARVED_SHARE of
        its core and the arena's threads of the move waited for a CPU at least as long as the
        bot overran its time: the reply may well have come in time. A bot cannot fake this:
        it cannot run on that core, and the arena's own work there (a bot calling its server
        in a loop) is not the others'."""
        if self.arena_others is None or self.arena_waited is None or self.wall <= 0:
            return False
        return (1 - self.arena_others / self.wall < STARVED_SHARE
                and self.arena_waited >= self.overrun)

    @property
    def bot_starved(self) -> bool:
        """The others left it less than its due, and it was waiting for a CPU meanwhile: a
        bot that sleeps or blocks does not wait on the run queue. A bot runnable all along
        waits about the share the others took, (1 - share_left) of the move; it counts as
        starved when it waited at least half of that (WAIT_SHARE). A bot that slept waits
        only as it wakes: under 8 spinners a core the `late` test bot, sleeping past its
        time, waited 0.19 s of 0.55 s, over the former fixed quarter of the move, and was
        wrongly voided once in a clean CI run. Its threads' wait is taken over the move
        alone when the machine was busy before it (`Watch`), else since the bot's
        handshake: more than the move's, so it can clear the host, never wrongly blame it."""
        if self.share_left >= STARVED_SHARE:
            return False
        expected = (1 - self.share_left) * self.wall
        return self.waited is None or self.waited >= WAIT_SHARE * expected

    def to_record(self) -> dict:
        return {**{key: round(value, 6) if isinstance(value, float) else value
                   for key, value in asdict(self).items()},
                "share_left": round(self.share_left, 3), "voided": self.starved}

    def describe(self) -> str:
        waited = "" if self.waited is None else f", its threads' CPU wait {self.waited:.3f} s"
        if self.arena_others is not None and self.wall > 0:
            waited += (f"; other processes used {self.arena_others / self.wall:.2f} of the "
                       f"arena's own core")
            if self.arena_waited is not None:
                waited += f", its threads of the move waited {self.arena_waited:.3f} s"
        arena = (f" (and the arena, not counted, {self.arena_cpu:.3f} s)"
                 if self.arena_cpu >= 0.001 else "")
        return (f"on CPU {self.bot_cpu:.3f} s of {self.wall:.3f} s; other processes used "
                f"{self.others_cpu / self.wall if self.wall > 0 else 0:.2f} of {self.cores} "
                f"cores{arena}, leaving it {self.share_left:.0%} of its core{waited}")


class Watch:
    """The machine's CPU use between one move and the next, to tell when a move may be
    starved: then its bot's run-queue wait is read at its start, which costs tens of
    microseconds a move, paid only while the machine is nearly full."""

    WINDOW = 0.02
    """Seconds of history a verdict needs: the counters of other cores lag by a tick."""

    def __init__(self):
        self.at = time.monotonic()
        self.used = machine_cpu_seconds()
        self.busy_above = cores() - (1 - STARVED_SHARE) * 2
        self.verdict = True   # no history yet: take the first moves' waits alone

    def busy(self, used: float) -> bool:
        """True when the machine used more than all its cores but half of one over the last
        WINDOW or more; `used` is machine_cpu_seconds() now."""
        now = time.monotonic()
        if now - self.at >= self.WINDOW:
            self.verdict = (used - self.used) / (now - self.at) > self.busy_above
            self.at, self.used = now, used
        return self.verdict


def measure(wall: float, bot_cpu: float | None, waited: float | None, machine_before: float,
            bot_cores: float = 1.0, machine_after: float | None = None,
            arena_cpu: float = 0.0, arena_core: float | None = None,
            arena_waited: float | None = None, overrun: float = 0.0) -> MoveLoad:
    """The load of a move that started when the machine had used `machine_before` CPU
    seconds and ended at `machine_after` (default: now); `bot_cpu` None (not measurable)
    counts the bot as having used none; `arena_cpu`, the arena process's own CPU meanwhile
    (`arena_cpu_seconds`), is not the others'. An arena kept apart from its bots also gives
    `arena_core`, the CPU used on its own CPUs meanwhile (`arena_core_seconds`), the wait of
    its threads of the move (`arena_waited`) and how far the bot overran its time."""
    bot = max(0.0, bot_cpu or 0.0)
    arena = max(0.0, arena_cpu)
    if machine_after is None:
        machine_after = machine_cpu_seconds()
    others = max(0.0, machine_after - machine_before - bot - arena)
    # The arena's threads are all on its own CPUs, so what else ran there is the others'.
    arena_others = None if arena_core is None else max(0.0, arena_core - arena)
    return MoveLoad(wall, bot, others, cores(), bot_cores, waited, arena, arena_others,
                    arena_waited, max(0.0, overrun))
