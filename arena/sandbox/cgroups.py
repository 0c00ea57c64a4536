"""Per-bot cgroups: memory, pids and CPU limits of all a bot's processes together, its CPU
time, and stopping it between its turns (a CPU quota held at the kernel's least, else the
freezer); on cgroup v1 or v2, whichever holds each controller here.

Every bot cgroup is made inside the cgroup the arena itself runs in (read from
/proc/self/cgroup, per hierarchy), under one folder `arena` there, so every limit nests inside
whatever limits the arena already: `<arena's cgroup>/arena/<pid>-<n>-<start>` (its start
time tells it from a later process given its pid: `reaper.bot_cgroup_name`). The arena
never moves itself and never writes to a cgroup it did not create; on cgroup v2 it uses
only the controllers its own cgroup already hands down. The bot cgroups of an arena
process that died without removing them are ended by its reaper, or by the next arena
command (`reaper`, `sweep_orphans`). The bot joins its cgroups itself before its
command starts (the in-sandbox init writes to descriptors opened here), and they are removed
when it has ended.
"""
from __future__ import annotations

import atexit
import errno
import functools
import itertools
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.sandbox import reaper
from arena.sandbox.limits import Limits

CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
"""What the bots' cgroups use: memory and pids limits, a CPU quota, CPU time, freezing."""
V2_BUILTIN = {"cpuacct": "cpu.stat", "freezer": "cgroup.freeze"}
"""What every cgroup v2 folder offers without a controller: CPU time and freezing."""
_ARENA_FOLDER = "arena"
_CPU_PERIOD_US = 100_000
HELD_QUOTA_US = 1_000
"""A held bot's CPU quota a period (_CPU_PERIOD_US): the kernel's least, 1 ms in 100 ms (see
`BotCgroups.hold`). The period stays: a longer one while held left the kernel's period timer
at its old deadline after the thaw, and a bot got its 100 ms quota once in a second."""
_FREEZE_TIMEOUT = 2.0
KEPT_FROZEN = "kept-frozen"
"""The empty sub-cgroup of a bot's cgroup v1 freezer folder, frozen for the bot's life: see
`BotCgroups._keep_freezer_active`."""
_REMOVE_TIMEOUT = 1.0
_log = logging.getLogger("arena.sandbox")


@dataclass
class Placement:
    """Where this arena puts bot cgroups: for each controller, the `arena` folder (under the
    arena's own cgroup) that bot cgroups go in, or why there is none."""

    folders: dict[str, tuple[int, Path]] = field(default_factory=dict)
    """controller -> (cgroup version, `arena` folder)."""
    missing: dict[str, str] = field(default_factory=dict)
    """controller -> why bots get no cgroup of it."""


@functools.lru_cache(maxsize=None)
def placement() -> Placement:
    """Finds (and creates, once) the `arena` folder of each controller; cached. The first
    call also ends what dead arena processes left there (`sweep_orphans`)."""
    found = Placement()
    own, found.missing = _own_folders()
    sweep_orphans()
    for controller, (version, folder) in own.items():
        _place(found, controller, version, folder)
    return found


def _own_folders() -> tuple[dict[str, tuple[int, Path]], dict[str, str]]:
    """controller -> (cgroup version, the arena's own cgroup folder), and controller -> why
    there is none, from /proc/self/cgroup and /proc/self/mountinfo; nothing is created."""
    own: dict[str, tuple[int, Path]] = {}
    missing: dict[str, str] = {}
    hierarchies = _own_cgroups()
    mounts = _cgroup_mounts()
    v2_own = None
    if 0 in hierarchies and "cgroup2" in mounts:
        mount, root = mounts["cgroup2"]
        v2_own = _inside(mount, root, hierarchies[0][1])
    for controller in CONTROLLERS:
        v1 = next(((mount, root) for name, (mount, root) in mounts.items()
                   if controller in name.split(",")), None)
        if v1 is not None:
            path = next((path for controllers, path in hierarchies.values()
                         if controller in controllers), None)
            folder = None if path is None else _inside(*v1, path)
            if path is None:
                missing[controller] = "the arena's cgroup of it is not listed in /proc/self/cgroup"
            elif folder is None or not folder.is_dir():
                missing[controller] = f"the arena's own cgroup {folder} is not visible"
            else:
                own[controller] = (1, folder)
        elif v2_own is not None:
            enabled = _read_words(v2_own / "cgroup.subtree_control")
            if controller in V2_BUILTIN or controller in enabled:
                own[controller] = (2, v2_own)
            else:
                missing[controller] = (
                    f"cgroup v2 controller {controller!r} is not enabled for the arena's cgroup "
                    f"({v2_own}/cgroup.subtree_control)")
        else:
            missing[controller] = "no cgroup hierarchy with it is mounted"
    return own, missing


def _place(found: Placement, controller: str, version: int, own: Path) -> None:
    folder = own / _ARENA_FOLDER
    try:
        folder.mkdir(exist_ok=True)
        if version == 2:
            wanted = [name for name in ("memory", "pids", "cpu")
                      if name in _read_words(folder / "cgroup.controllers")]
            enabled = _read_words(folder / "cgroup.subtree_control")
            if set(wanted) - set(enabled):
                (folder / "cgroup.subtree_control").write_text(
                    " ".join(f"+{name}" for name in wanted))
    except OSError as error:
        found.missing[controller] = f"cannot create {folder}: {error.strerror}"
        return
    # The folder may be there without being ours to write in (made by an arena run as root,
    # seen by one that is not): try making a bot's cgroup in it, as `BotCgroups` will.
    probe = folder / reaper.bot_cgroup_name(os.getpid(), next(_names))
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError as error:
        found.missing[controller] = f"cannot create a bot's cgroup in {folder}: {error.strerror}"
        return
    found.folders[controller] = (version, folder)


# -- what dead arena processes left -------------------------------------------------------------

@dataclass(frozen=True)
class Sweep:
    """What `sweep_orphans` ended: bot cgroups of arena processes that are gone."""

    owners: tuple[int, ...] = ()
    cgroups: int = 0
    processes: int = 0

    def __str__(self) -> str:
        return (f"ended {self.processes} bot process(es) and removed {self.cgroups} bot "
                f"cgroup(s) left by arena process(es) {', '.join(map(str, self.owners))}, "
                "which are gone")


def arena_folders() -> list[Path]:
    """The `arena` folders bot cgroups of this arena go in, those that exist (none made)."""
    folders = {folder / _ARENA_FOLDER for _, folder in _own_folders()[0].values()}
    return sorted(folder for folder in folders if folder.is_dir())


def orphans() -> dict[str, list[str]]:
    """Bot cgroup name -> its folders, for every bot cgroup whose arena process is gone and
    whose reaper is not at work on it. Only names this module makes (`reaper.bot_cgroup_name`)
    are looked at."""
    found: dict[str, list[str]] = {}
    reapers_now = functools.cache(reaper.reapers)   # a scan of /proc: once, if at all
    for folder in arena_folders():
        for child in folder.iterdir():
            owner = reaper.bot_cgroup_owner(child.name)
            if child.is_dir() and owner is not None and _abandoned(*owner, reapers_now):
                found.setdefault(child.name, []).append(str(child))
    return found


def _abandoned(owner: int, start: str | None, reapers_now) -> bool:
    """True when what arena process `owner` (started at `start`) left is nobody's: it is gone
    (`reaper.owner_gone`) and no reaper of its is at work. A reaper is known by its arena's
    pid, so it counts only while no other process holds that pid: a reaper of a later process
    given the same pid waits for that one, and the gone arena's own finished long before its
    pid came round."""
    now = reaper.live_start_time(owner)
    if now is None:   # no process has its pid
        return owner not in reapers_now()
    return start is not None and now != start   # its pid is another process's now


def sweep_orphans() -> Sweep:
    """Ends the bots and removes the cgroups that arena processes killed before they (and
    their reaper) could left behind; logs one line saying so. Every arena command runs it."""
    owners: set[int] = set()
    cgroups = processes = 0
    for name, groups in orphans().items():
        killed, removed = reaper.end_bot_cgroups(groups)
        owners.add(reaper.bot_cgroup_owner(name)[0])
        cgroups += removed
        processes += killed
    # A sandbox still starting for a gone arena is in none of its cgroups, and may outlive
    # them (made after its reaper's scans): looked for whether or not its cgroups are left.
    # One whose reaper is at work is the reaper's: ending it here too would race the reaper
    # and report as left behind what is being ended as designed.
    reapers_now = functools.cache(reaper.reapers)   # a scan of /proc: once, if at all
    stragglers = reaper.end_stragglers(
        [str(folder) for folder in arena_folders()],
        lambda owner, start: _abandoned(owner, start, reapers_now))
    owners.update(stragglers.values())
    processes += len(stragglers)
    sweep = Sweep(tuple(sorted(owners)), cgroups, processes)
    if owners:
        # Bots that outlived their arena are news; empty cgroups left behind are tidying.
        _log.log(logging.WARNING if processes else logging.INFO, "%s", sweep)
        swept.append(sweep)
    return sweep


swept: list[Sweep] = []
"""What this process's sweeps ended (`arena doctor` reports it)."""


def live_bot_cgroups() -> dict[int, int]:
    """Arena pid -> how many bot cgroups it holds now, for arena processes still running."""
    names = {child.name for folder in arena_folders() for child in folder.iterdir()
             if child.is_dir()}
    counts: dict[int, int] = {}
    for name in names:
        owner = reaper.bot_cgroup_owner(name)
        if owner is not None and not reaper.owner_gone(*owner):
            counts[owner[0]] = counts.get(owner[0], 0) + 1
    return counts


def bots_of(owners: set[int]) -> tuple[int, int]:
    """(bot cgroups, processes in them) that these arena processes hold now: how many bots
    they run, and how many processes those bots are."""
    folders = [str(folder) for folder in arena_folders()]
    groups: dict[str, list[str]] = {}
    for owner in owners:
        groups.update(reaper.owned_by(folders, owner))
    pids = set()
    for folders_of_bot in groups.values():
        for folder in folders_of_bot:
            pids.update(int(word) for word in _read_words(Path(folder) / "cgroup.procs"))
    return len(groups), len(pids)


def _own_cgroups() -> dict[int, tuple[list[str], str]]:
    """hierarchy id -> (its controllers, the arena's cgroup path in it), from /proc/self/cgroup."""
    own = {}
    for line in _read_lines(Path("/proc/self/cgroup")):
        ident, controllers, path = line.split(":", 2)
        own[int(ident)] = ([name for name in controllers.split(",") if name], path)
    return own


def _cgroup_mounts() -> dict[str, tuple[Path, str]]:
    """Controllers ("memory", "cpu,cpuacct"; "cgroup2" for the unified hierarchy) ->
    (mount point, root of the hierarchy shown there), from /proc/self/mountinfo."""
    mounts = {}
    for line in _read_lines(Path("/proc/self/mountinfo")):
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, mount_point = fields[3], Path(fields[4].replace("\\040", " "))
        if tail[0] == "cgroup2":
            mounts.setdefault("cgroup2", (mount_point, root))
        elif tail[0] == "cgroup":
            names = [option for option in tail[2].split(",") if option in CONTROLLERS]
            if names:
                mounts.setdefault(",".join(names), (mount_point, root))
    return mounts


def _inside(mount: Path, root: str, path: str) -> Path | None:
    """The folder of cgroup `path` under a mount of the hierarchy's `root`."""
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None
    relative = path[len(root):] if root != "/" else path
    return mount / relative.lstrip("/")


def _read_words(path: Path) -> list[str]:
    return [word for line in _read_lines(path) for word in line.split()]


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


# -- one bot's cgroups ------------------------------------------------------------------------

_names = itertools.count()
_leftovers: list[Path] = []   # bot cgroups whose removal waits for their last process to go
_leftovers_lock = threading.Lock()


class BotCgroups:
    """The cgroups of one bot: made with its limits before it starts, removed after it ends."""

    def __init__(self, limits: Limits):
        _remove_leftovers()
        where = placement()
        name = reaper.bot_cgroup_name(os.getpid(), next(_names))
        self.folders: dict[str, tuple[int, Path]] = {}
        self._made: list[Path] = []
        self._fds: dict[str, int] = {}
        self._kept_frozen: Path | None = None
        self._held = False      # by `hold`: its CPU quota at HELD_QUOTA_US
        self._frozen = False    # by `freeze`
        self._quota = b""       # its own CPU quota (us a period), restored by `thaw`
        reaper.watch(sorted({str(parent) for _, parent in where.folders.values()}))
        try:
            for controller, (version, parent) in where.folders.items():
                folder = parent / name
                if folder not in self._made:
                    folder.mkdir()
                    self._made.append(folder)
                self.folders[controller] = (version, folder)
            self._set_limits(limits)
            self._keep_freezer_active()
            self._open_controls()
        except OSError:
            self.remove()
            raise

    @property
    def memory(self) -> bool:
        """True when a memory cgroup bounds all the bot's processes together."""
        return "memory" in self.folders

    def _set_limits(self, limits: Limits) -> None:
        if "memory" in self.folders:
            version, folder = self.folders["memory"]
            if version == 1:
                (folder / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                swap = folder / "memory.memsw.limit_in_bytes"   # memory plus swap: no swapping out
                if swap.exists():
                    swap.write_text(str(limits.memory_bytes))
            else:
                (folder / "memory.max").write_text(str(limits.memory_bytes))
                for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                    if (folder / name).exists():
                        (folder / name).write_text(value)
        if "pids" in self.folders:
            (self.folders["pids"][1] / "pids.max").write_text(str(limits.processes))
        if "cpu" in self.folders:
            version, folder = self.folders["cpu"]
            quota = max(1000, int(limits.cpus * _CPU_PERIOD_US))
            self._quota = str(quota).encode()
            if version == 1:
                (folder / "cpu.cfs_period_us").write_text(str(_CPU_PERIOD_US))
                (folder / "cpu.cfs_quota_us").write_text(str(quota))
            else:
                (folder / "cpu.max").write_text(f"{quota} {_CPU_PERIOD_US}")

    def _keep_freezer_active(self) -> None:
        """Keeps an empty sub-cgroup of the bot's v1 freezer folder frozen while the bot lives.

        The kernel's cgroup v1 freezer switches a static key (`freezer_active`) on when the
        first cgroup of the machine starts freezing and off when the last one thaws; each switch
        patches kernel code on every CPU, ~140 µs. With no other bot frozen (a bot against a
        built-in strategy, a bot alone) every freeze and every thaw paid that. A frozen empty
        cgroup holds the key on, and freezing or thawing the bot costs ~5-30 µs. Its processes
        never join it (`join_fds` names only the bot's own folders)."""
        version, folder = self.folders.get("freezer", (0, None))
        if version != 1:
            return   # the cgroup v2 freezer has no such key
        kept = folder / KEPT_FROZEN
        kept.mkdir()
        self._kept_frozen = kept
        (kept / "freezer.state").write_text("FROZEN")

    def _open_controls(self) -> None:
        """Keeps the files read and written during a match open: holding, freezing, reading
        the CPU time and the threads cost a system call or two each, not a path lookup."""
        for version, folder in self.folders.values():   # any one lists every thread
            self._fds["threads"] = os.open(folder / ("tasks" if version == 1 else
                                                     "cgroup.threads"), os.O_RDONLY | os.O_CLOEXEC)
            break
        if "freezer" in self.folders:
            version, folder = self.folders["freezer"]
            if version == 1:
                self._fds["freeze"] = os.open(folder / "freezer.state", os.O_RDWR | os.O_CLOEXEC)
            else:
                self._fds["freeze"] = os.open(folder / "cgroup.freeze", os.O_RDWR | os.O_CLOEXEC)
                self._fds["events"] = os.open(folder / "cgroup.events", os.O_RDONLY | os.O_CLOEXEC)
        if "cpuacct" in self.folders:
            version, folder = self.folders["cpuacct"]
            name = "cpuacct.usage" if version == 1 else "cpu.stat"
            self._fds["cpu"] = os.open(folder / name, os.O_RDONLY | os.O_CLOEXEC)
        if "cpu" in self.folders:
            version, folder = self.folders["cpu"]
            name = "cpu.cfs_quota_us" if version == 1 else "cpu.max"
            self._fds["quota" if version == 1 else "max"] = os.open(folder / name,
                                                                     os.O_WRONLY | os.O_CLOEXEC)

    def join_fds(self) -> list[int]:
        """Fresh descriptors of each cgroup's membership file, for the bot's init to write
        "0" (itself) to; the caller passes them on and closes its copies."""
        return [os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
                for folder in self._made]

    def pids(self) -> set[int]:
        """Host pids of the processes in the bot's cgroups."""
        found: set[int] = set()
        for folder in self._made:
            try:
                found |= {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return found

    def threads(self) -> set[int] | None:
        """Host ids of every thread of the bot's processes, or None without a cgroup."""
        fd = self._fds.get("threads")
        if fd is None:
            return None
        try:
            return {int(tid) for tid in _pread(fd, 1 << 16).split()}
        except OSError:
            return None

    # -- during a match ------------------------------------------------------------------
    @property
    def can_hold(self) -> bool:
        return "quota" in self._fds or "max" in self._fds

    def hold(self) -> None:
        """Holds the bot between its turns: its CPU quota drops to the kernel's least, 1 ms in
        100 ms, until `thaw`. Its threads sleep on undisturbed and any that wakes runs within
        that: each quota write hands the cgroup a fresh quota, and the kernel enforces it at
        its tick, so a thread that spins gets a few milliseconds (`BotProcess.rest` freezes a
        bot that does), all counted in `cpu_seconds`.

        The freezer stops a bot fully, but it wakes every thread of the bot to stop it and
        again to thaw it: ~100 µs of CPU a move for the arena and as much for a Python bot of
        ten threads, on top of the writes (`arena bench freeze`). One small write costs ~10 µs."""
        self._write_quota(str(HELD_QUOTA_US).encode())
        self._held = True

    def _write_quota(self, quota: bytes) -> None:
        """Sets the bot's CPU quota a period (_CPU_PERIOD_US, which never changes)."""
        if "max" in self._fds:
            os.write(self._fds["max"], quota + f" {_CPU_PERIOD_US}".encode())
        else:
            os.write(self._fds["quota"], quota)

    @property
    def can_freeze(self) -> bool:
        return "freeze" in self._fds

    def freeze(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stops every process of the bot; with `wait`, returns once all are stopped, or after
        `timeout` seconds (_FREEZE_TIMEOUT by default); else at once (the kernel stops each as
        soon as it next enters or leaves the kernel)."""
        version = self.folders["freezer"][0]
        fd = self._fds["freeze"]
        os.write(fd, b"FROZEN" if version == 1 else b"1")
        self._frozen = True
        if not wait:
            return
        deadline = time.monotonic() + (_FREEZE_TIMEOUT if timeout is None else timeout)
        while not self._all_frozen():
            if time.monotonic() > deadline:
                return   # a process in an uninterruptible wait: it does not run either
            time.sleep(0.0001)

    def _all_frozen(self) -> bool:
        if self.folders["freezer"][0] == 1:
            return _pread(self._fds["freeze"]).startswith(b"FROZEN")
        return b"frozen 1" in _pread(self._fds["events"])

    def thaw(self, surely: bool = False) -> None:
        """Lets the bot's processes run again: ends a `hold` and a `freeze`, or with `surely`
        both whatever this object last did (for a kill: killed processes die only once they
        run, and another thread may be holding the bot meanwhile)."""
        if self.can_hold and (self._held or surely):
            self._write_quota(self._quota)
            self._held = False
        if self.can_freeze and (self._frozen or surely):
            version = self.folders["freezer"][0]
            os.write(self._fds["freeze"], b"THAWED" if version == 1 else b"0")
            self._frozen = False

    @property
    def counts_cpu(self) -> bool:
        return "cpu" in self._fds

    def cpu_seconds(self) -> float:
        """CPU time of every process of the bot so far, those that ended included."""
        text = _pread(self._fds["cpu"])
        if self.folders["cpuacct"][0] == 1:
            return int(text) / 1e9
        for line in text.decode().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return 0.0

    def memory_killed(self) -> bool:
        """True when the kernel killed a process of the bot for going over its memory limit."""
        if "memory" not in self.folders:
            return False
        version, folder = self.folders["memory"]
        name = "memory.oom_control" if version == 1 else "memory.events"
        try:
            counters = dict(line.split() for line in (folder / name).read_text().splitlines())
        except (OSError, ValueError):
            return False
        if "oom_kill" in counters:
            return int(counters["oom_kill"]) > 0
        return version == 1 and int((folder / "memory.failcnt").read_text() or 0) > 0

    # -- at the end ------------------------------------------------------------------------
    def remove(self) -> None:
        """Removes the bot's cgroups (call once its processes are gone); a cgroup whose last
        process is still leaving is retried later."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if self._kept_frozen is not None:   # empty: removed at once, frozen or not
            _rmdir(self._kept_frozen)
            self._kept_frozen = None
        made, self._made = self._made, []
        deadline = time.monotonic() + _REMOVE_TIMEOUT
        for folder in made:
            while not _rmdir(folder) and time.monotonic() < deadline:
                time.sleep(0.005)
            if folder.exists():
                with _leftovers_lock:
                    _leftovers.append(folder)


def _pread(fd: int, size: int = 4096) -> bytes:
    return os.pread(fd, size, 0)


def _rmdir(folder: Path) -> bool:
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError as error:
        if error.errno in (errno.EBUSY, errno.ENOTEMPTY):
            return False
        raise
    return True


@atexit.register
def _remove_leftovers() -> None:
    with _leftovers_lock:
        _leftovers[:] = [folder for folder in _leftovers if not _rmdir(folder)]
