"""Ends the bots an arena process leaves behind, whatever ended it: its reaper and the sweep.

A bot is frozen between its moves, and a frozen process does not act on SIGKILL until it is
thawed, so when an arena process dies without ending its bots (`kill -9`, the OOM killer, a
Ray actor killed) nothing would ever thaw them: they and their cgroups would stay until the
machine reboots. Two things prevent it:

- `watch(folders)`: the first time an arena process makes a bot cgroup it starts a reaper,
  a small process of its own session (and no child of the arena: it forks away from its
  launcher) that waits for the arena process to end (a pidfd), then kills the processes of
  every bot cgroup that process made (`<pid>-<n>-<start>`), thaws them so the kill lands, and
  removes the cgroups; and kills any process still starting a sandbox for it (`stragglers`). It
  outlives the arena by the moment this takes.
- `end_bot_cgroups(...)`, which the next arena command runs too (`cgroups.sweep_orphans`) for
  any bot cgroup whose owner is gone, should the reaper have been killed with the arena.

The same kind of reaper ends the Ray instance an arena process started for itself, whose
files are in a folder of the arena's (`watch_folder`): Ray ends most of its processes with
the arena, but its agents outlive it by up to a minute.

A reaper ends only what writes where it watches, never a process that merely looks: Ray's
processes write their logs in its folder, another arena process sweeping that folder as a
dead arena's reads it; a sandbox joining a bot cgroup holds its `cgroup.procs` for writing,
a sweep or a test counting a bot's processes reads it.

This file runs as a script (`python -I -S reaper.py OWNER FOLDER...`, or `--holders OWNER
FOLDER`), so it imports nothing but the standard library.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

_END_TIMEOUT = 5.0
_STRAGGLER_SCANS = 100
HOLDERS = "--holders"   # the first argument of a reaper of a folder's holders (`watch_folder`)


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as file:
            file.write(text)
    except OSError:
        pass   # not this kind of cgroup, or it is already gone


def _thaw(group: str) -> None:
    """Ends a freeze and a held CPU quota (`cgroups.BotCgroups.hold`): killed processes die
    only once they run."""
    if os.path.exists(os.path.join(group, "cpu.cfs_quota_us")):
        _write(os.path.join(group, "cpu.cfs_quota_us"), "-1")
    elif os.path.exists(os.path.join(group, "cpu.max")):
        _write(os.path.join(group, "cpu.max"), "max")
    if os.path.exists(os.path.join(group, "freezer.state")):
        _write(os.path.join(group, "freezer.state"), "THAWED")
    elif os.path.exists(os.path.join(group, "cgroup.freeze")):
        _write(os.path.join(group, "cgroup.freeze"), "0")


def _members(groups: list[str]) -> set[int]:
    return {int(word) for group in groups
            for word in _read(os.path.join(group, "cgroup.procs")).split()}


def end_bot_cgroups(groups: list[str], timeout: float = _END_TIMEOUT) -> tuple[int, int]:
    """Kills every process in `groups` (one bot's cgroups, one per hierarchy), thaws them so
    the kill lands, and removes the folders; returns (processes killed, cgroups removed)."""
    groups = [group for group in groups if os.path.isdir(group)]
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while (pids := _members(groups)) and time.monotonic() < deadline:
        killed |= kill(pids)   # the kill first, then the thaw: a thawed bot never runs a moment
        for group in groups:
            _thaw(group)
        time.sleep(0.01)
    removed = 0
    for group in groups:
        _remove_subgroups(group)
        while True:
            try:
                os.rmdir(group)
                removed += 1
                break
            except FileNotFoundError:
                break
            except OSError:   # its last process is still leaving
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
    return len(killed), removed


def _writing(name_of) -> dict:
    """Process -> `name_of(path)` for the first path it holds open for writing that names
    something (not None), for every process that holds one (this one aside). A process
    that holds the same file only to read it (or works in its folder) is not counted."""
    found: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            descriptors = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for descriptor in descriptors:
            link = f"/proc/{entry}/fd/{descriptor}"
            try:
                name = name_of(os.readlink(link))
            except OSError:
                continue
            if name is not None and _writes(link):
                found[int(entry)] = name
                break
    return found


def _writes(link: str) -> bool:
    """True when descriptor `link` (/proc/PID/fd/N) is open for writing (its fdinfo flags)."""
    for line in _read(link.replace("/fd/", "/fdinfo/")).splitlines():
        if line.startswith("flags:"):
            return int(line.split()[1], 8) & 3 in (os.O_WRONLY, os.O_RDWR)
    return False


def stragglers(folders: list[str], gone) -> dict[int, int]:
    """Process -> its owner, for each process holding a descriptor of `cgroup.procs` open for
    writing in a bot cgroup of `folders` whose owner is `gone(owner, its start time)`
    (`bot_cgroup_owner`). A sandbox gets its bot's cgroups as such descriptors, and its
    in-sandbox init writes itself into them: until then bwrap and its child are in no bot
    cgroup, so killing the cgroups' members misses them. A process reading the file (a
    sweep, a test counting a bot's processes) is no straggler.
    A bwrap child stuck in its start-up when its parent died slept on forever (seen once,
    2026-12-04), and it still held them (a removed cgroup's path reads the same)."""
    roots = {folder.rstrip("/") for folder in folders}

    def gone_owner(target: str) -> int | None:
        """The owner of the bot cgroup whose `cgroup.procs` is `target`, if gone."""
        group, _, name = target.rpartition("/")
        root, _, bot = group.rpartition("/")
        owner = bot_cgroup_owner(bot)
        if name == "cgroup.procs" and root in roots and owner is not None and gone(*owner):
            return owner[0]
        return None
    return _writing(gone_owner)


def _end_all(scan) -> dict:
    """Kills what `scan()` finds (process -> what it holds) until a scan finds none, at most
    `_STRAGGLER_SCANS` times; returns the part of what it found whose processes it reached.
    One scan is not enough: what a killed process made as it died shows in the next one."""
    reached: dict = {}
    for _ in range(_STRAGGLER_SCANS):
        found = scan()
        if not found:
            break
        reached.update((pid, found[pid]) for pid in kill(found))
        time.sleep(0.01)
    return reached


def end_holders(folder: str) -> set[int]:
    """Kills every process that holds a file in `folder` open for writing until a scan finds
    none (`_end_all`), then removes the folder: the processes of the Ray instance an arena
    process started, which write their logs there (`watch_folder`). Ray's agents outlive
    its raylet by up to a minute (they tell its GCS, gone too, first); the league's actors
    die with the raylet. A process reading the folder is left be: another arena process
    sweeping it as a dead arena's (`scratch.remove_orphans` reads its owner file, then
    removes it) was killed so once, mid-league (seen 2026-12-06). Returns those it reached."""
    prefix = folder.rstrip("/") + "/"
    reached = _end_all(lambda: _writing(
        lambda target: target if target.startswith(prefix) else None))
    shutil.rmtree(folder, ignore_errors=True)
    return set(reached)


def end_stragglers(folders: list[str], gone) -> dict[int, int]:
    """Kills `stragglers` until a scan finds none (`_end_all`): process -> owner of those it
    reached. A bwrap killed while it starts may have made the sandbox's pid 1 just before,
    and that one's parent-death signal, asked for once its parent is dead, never comes (seen
    2026-12-05: it slept through the rest of the test suite, its cgroups long removed)."""
    return _end_all(lambda: stragglers(folders, gone))


def kill(pids) -> set[int]:
    """SIGKILLs `pids`; those it reached."""
    reached = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            reached.add(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return reached


def _remove_subgroups(group: str) -> None:
    """Removes the empty sub-cgroups the arena made in a bot's cgroup (`cgroups.KEPT_FROZEN`):
    a cgroup with children cannot be removed. The bot cannot make any (no cgroupfs in its
    sandbox), and one holding a process stays, as the bot's cgroup then does."""
    try:
        children = [entry.path for entry in os.scandir(group) if entry.is_dir()]
    except OSError:
        return
    for child in children:
        try:
            os.rmdir(child)
        except OSError:
            pass


def owned_by(folders: list[str], owner: int, start: str | None = None) -> dict[str, list[str]]:
    """Bot cgroup name -> its folders, for the bot cgroups arena process `owner` made (with
    `start`, its start time: not those of a later process given its pid)."""
    found: dict[str, list[str]] = {}
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            made_by = bot_cgroup_owner(name)
            if made_by is not None and _made_by(*made_by, owner, start):
                found.setdefault(name, []).append(os.path.join(folder, name))
    return found


def _made_by(pid: int, started: str | None, owner: int, start: str | None) -> bool:
    """True when a bot cgroup named for process `pid` started at `started` is arena process
    `owner`'s, started at `start` (None: whenever; an earlier version's name has none)."""
    return pid == owner and (start is None or started is None or started == start)


# -- bot cgroup names ---------------------------------------------------------------------------

def bot_cgroup_name(owner: int, number: int) -> str:
    """The name of live arena process `owner`'s bot cgroup number `number`: `PID-N-START`,
    whose start time (clock ticks after boot, /proc/PID/stat) tells the arena from a later
    process given the same pid."""
    return f"{owner}-{number}-{_start_time(owner)}"


def bot_cgroup_owner(name: str) -> tuple[int, str | None] | None:
    """(arena pid, its start time) of a bot cgroup's name `PID-N-START`, or of an earlier
    version's `PID-N` (start time None); None for any other name."""
    parts = name.split("-")
    if len(parts) in (2, 3) and all(part.isdigit() for part in parts):
        return int(parts[0]), (parts[2] if len(parts) == 3 else None)
    return None


def owner_gone(owner: int, start: str | None) -> bool:
    """True once arena process `owner` has ended: no live process has its pid, or the one
    that has it now started at another time than `start`. Pids are used again (some machines
    have 32,768), and a bot running when its arena and reaper died might cycle through them
    until some process of its own holds its arena's pid, to keep its cgroups looking owned."""
    now = live_start_time(owner)
    return now is None or (start is not None and now != start)


def live_start_time(pid: int) -> str | None:
    """The start time of live process `pid` (clock ticks after boot); None when no process
    has that pid or it is dead and unreaped (a zombie)."""
    fields = _stat_fields(pid)
    return None if len(fields) <= 19 or fields[0] in ("Z", "X", "x") else fields[19]


def reapers() -> dict[int, int]:
    """Arena pid -> the pid of its reaper, for the reapers running now. A reaper is known by
    its command line, which any process may copy: a bot's is refused by its pid namespace
    (every sandbox has its own), or a bot outliving its arena could pass for its reaper at
    work and keep sweeps off itself."""
    script = os.path.abspath(__file__).encode()
    try:
        own_namespace = os.readlink("/proc/self/ns/pid")
    except OSError:   # no namespace links here: the command line alone, as before
        own_namespace = None
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                argv = file.read().split(b"\0")
            if not (len(argv) > 4 and argv[3] == script and argv[4].isdigit()
                    and (own_namespace is None
                         or os.readlink(f"/proc/{entry}/ns/pid") == own_namespace)):
                continue
        except OSError:
            continue
        found[int(argv[4])] = int(entry)
    return found


# -- the arena's side ---------------------------------------------------------------------------

_started_for: int | None = None   # the pid whose reaper runs (a forked child needs its own)
_lock = threading.Lock()


def watch(folders: list[str]) -> None:
    """Starts this process's reaper once (again in a forked child): when this process ends,
    however it ends, the reaper ends the bots of every bot cgroup it made in `folders`."""
    global _started_for
    with _lock:
        if _started_for == os.getpid() or not folders:
            return
        _launch([str(os.getpid()), *folders])
        _started_for = os.getpid()


def _launch(arguments: list[str]) -> None:
    # -I -S: an isolated interpreter that starts in milliseconds; a session of its own, so
    # the terminal's Ctrl-C and a kill of the arena's process group leave it to its job.
    launcher = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__),
                                 *arguments],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, close_fds=True,
                                start_new_session=True)
    try:
        launcher.wait(timeout=10)   # it forks the reaper and exits at once
    except subprocess.TimeoutExpired:
        pass


def watch_folder(folder: str) -> None:
    """Starts a reaper (one more) that, when this process ends, however it ends, kills every
    process writing a file in `folder` and removes it (`end_holders`)."""
    _launch([HOLDERS, str(os.getpid()), folder])


# -- the reaper's side --------------------------------------------------------------------------

def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and
    parentheses: they follow the last ')'); none when the process is gone."""
    text = _read(f"/proc/{pid}/stat")
    return text[text.rfind(")") + 2:].split()


def _start_time(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else None


def _watch_owner(owner: int):
    """Something to wait on until process `owner` (the launcher's parent) has ended: its
    pidfd, or (without pidfds) its start time, which names it even once its pid is reused.
    None when it has ended already."""
    try:
        pidfd = os.pidfd_open(owner)
    except (OSError, AttributeError):
        pidfd = None
    if os.getppid() != owner:   # it ended before the pidfd was open
        return None
    return pidfd if pidfd is not None else ("start", _start_time(owner))


def _wait_for_end(owner: int, watch) -> None:
    if isinstance(watch, int):
        select.select([watch], [], [])
        return
    while watch is not None and _start_time(owner) == watch[1]:
        time.sleep(0.2)


def main(argv: list[str]) -> None:
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)   # outlives the arena, and only by its job
    holders = argv[0] == HOLDERS   # HOLDERS OWNER FOLDER, else OWNER CGROUP_FOLDER...
    arguments = argv[1:] if holders else argv
    owner, folders = int(arguments[0]), arguments[1:]
    start = _start_time(owner)   # its own while it is still the launcher's parent (below)
    watch = _watch_owner(owner)
    if watch is None:   # gone already: its start time is unknown
        start = None
    # Not a child of the arena process: whatever ends the arena and its children together
    # (Ray ends every child of an actor's process, a reaper in its own session included; a
    # service manager its unit's) leaves the reaper be.
    if os.fork() != 0:
        os._exit(0)
    _wait_for_end(owner, watch)
    if holders:
        end_holders(folders[0])
        return
    # Its own cgroups only: not those a later process given its pid may make meanwhile.
    end_stragglers(folders, lambda pid, started: _made_by(pid, started, owner, start))
    for groups in owned_by(folders, owner, start).values():
        end_bot_cgroups(groups)


if __name__ == "__main__":
    main(sys.argv[1:])
