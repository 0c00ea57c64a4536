"""Start one bot command sandboxed, with its limits; freeze, measure and end its whole tree.

`spawn(argv, bot_dir, ...)` builds the bubblewrap command line (`mounts`), makes the bot's
cgroups (`cgroups`), hands bwrap the seccomp filter (`seccomp`), and starts the in-sandbox
init (`init`), which joins the cgroups, sets the rlimits, drops root and runs the bot.
`SandboxedProcess` is the running bot: `hold()`/`freeze()`/`thaw()`, `cpu_seconds()`,
`memory_killed()`, `kill()` (every process, daemonised grandchildren included, checked by
pid), and its output drained into its log (`logdrain`).
"""
from __future__ import annotations

import fcntl
import itertools
import json
import logging
import marshal
import os
import secrets
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

from arena import lifeline
from arena.sandbox import cgroups, doctor, logdrain, mounts, proctree, seccomp
from arena.sandbox.errors import SandboxError
from arena.sandbox.limits import MiB, Limits

BOT_GID = 0x3FFFFFFF
"""Group of every sandboxed bot run as root; its sockets and `bind_rw` folders open to it."""
_UID_BASE = 0x40000000
"""Bots get uids above this: far from any real account, and one per running bot."""
_INIT_SCRIPT = Path(__file__).resolve().with_name("init.py")
_KILL_TIMEOUT = 5.0
_log = logging.getLogger("arena.sandbox")


def spawn(argv: Sequence[str], bot_dir: str | os.PathLike, *, env: Mapping[str, str],
          sockets: Sequence[str | os.PathLike] = (), bind_rw: Sequence[str | os.PathLike] = (),
          limits: Limits = Limits(), log_path: str | os.PathLike,
          log_cap_bytes: int = 1 * MiB, log_prefix: str = "",
          unsafe: bool = False, cpus: frozenset[int] | None = None) -> "SandboxedProcess":
    """Starts `argv` in the bot's folder, sandboxed; its output goes to `log_path` (appended,
    whole lines, each starting with `log_prefix`: see `logdrain`).

    `argv[0]` is looked up on the sandbox PATH (the arena's Python first, so `python` is the
    arena's interpreter); other paths in argv should be relative to the bot's folder. `env` is
    the bot's whole environment: nothing of the arena's leaks in; PATH, HOME, TMPDIR and
    PYTHONPATH get sandbox defaults.

    `sockets` are Unix sockets the bot may connect to; each appears alone, read-only, at its
    host path, so its folder can stay private (0700) and the bot can neither replace it nor
    write next to it. Start the server before spawning: the socket must exist. `bind_rw`
    folders appear writable at their host paths (a bot can fill them: prefer `sockets`).

    `unsafe=True` (the CLI's `--unsafe-no-sandbox`) runs the command without bwrap: same
    rlimits and cgroups, own session and process group, but it sees the whole host.

    `cpus`: the CPUs the bot runs on (it cannot change them: seccomp), or None for those of
    the spawning thread.

    Spawn from a thread that lives as long as the bot: `--die-with-parent` ends the bot when
    the thread that started it exits.
    """
    if not argv:
        raise SandboxError("no bot command to run: the command line is empty")
    bot_dir = Path(bot_dir).resolve()
    if not bot_dir.is_dir():
        raise SandboxError(f"bot folder {bot_dir} does not exist: check the bot's path")
    socket_paths = [Path(path).absolute() for path in sockets]
    for path in socket_paths:
        if not (path.exists() and stat.S_ISSOCK(path.stat().st_mode)):
            raise SandboxError(f"{path} is not a Unix socket: start the server before the bot")
    rw_dirs = [Path(path).resolve() for path in bind_rw]
    for path in rw_dirs:
        if not path.exists():
            raise SandboxError(f"folder {path} to share with the bot does not exist")
    if not unsafe:
        doctor.require()
    _warn_once_of_missing_cgroups()
    try:
        groups = cgroups.BotCgroups(limits)
    except OSError as error:
        raise SandboxError(f"cannot make the bot's cgroups: {error}") from None
    uid = _allocate_uid() if os.geteuid() == 0 and not unsafe else None
    fds: list[int] = []   # handed to the sandbox; closed here once it has started
    kept: list[int] = []  # the arena's ends, which the SandboxedProcess takes over
    try:
        # The arena holds the write end of this pipe for as long as the bot may live, and
        # nobody else does: the init in the sandbox sees its end close when the arena is gone.
        arena_pipe = os.pipe()
        status_pipe = os.pipe()   # the init reports the bot's end here
        fds += [arena_pipe[0], status_pipe[1]]
        kept += [arena_pipe[1], status_pipe[0]]
        join_fds = groups.join_fds()
        fds += join_fds
        spec = {"rlimits": limits.rlimits(memory_cgroup=groups.memory), "uid": uid,
                "gid": BOT_GID, "arena_fd": arena_pipe[0], "status_fd": status_pipe[1],
                "cgroup_fds": join_fds}
        if unsafe:
            command = _init_command(str(_INIT_SCRIPT), spec) + list(argv)
            cwd: Path | None = bot_dir
            lib = str(mounts.shared_packages()[0][1].parent)
        else:
            if uid is not None:
                _grant(bot_dir, write=False, recursive=True)
                for path in socket_paths + rw_dirs:
                    _grant(path, write=True, recursive=False)
            passwd, group = mounts.users(uid if uid is not None else os.getuid(),
                                         BOT_GID if uid is not None else os.getgid())
            passwd_fd, group_fd = _data_fd(passwd), _data_fd(group)
            fds += [passwd_fd, group_fd]
            seccomp_fd = _seccomp_fd()
            if seccomp_fd is not None:
                fds.append(seccomp_fd)
            disable_userns = uid is None and doctor.bwrap_disables_userns()
            command = (mounts.bwrap_argv(bot_dir, socket_paths, rw_dirs, limits,
                                         passwd_fd=passwd_fd, group_fd=group_fd,
                                         seccomp_fd=seccomp_fd, disable_userns=disable_userns)
                       + _init_command(f"{mounts.LIB_DIR}/arena/sandbox/init.py", spec)
                       + list(argv))
            cwd = None
            lib = mounts.LIB_DIR
        environment = _bot_env(env, lib, unsafe)
    except BaseException:
        for fd in fds + kept:
            os.close(fd)
        groups.remove()
        raise
    try:   # from here the SandboxedProcess closes the descriptors, whatever happens
        return SandboxedProcess(command, environment, cwd, uid, Path(log_path), log_cap_bytes,
                                arena_pipe[1], status_pipe[0], groups, fds, log_prefix, cpus)
    except BaseException:
        groups.remove()
        raise


def _init_command(script: str, spec: dict) -> list[str]:
    """The in-sandbox init (see `init.py`), run as a script by an isolated interpreter
    (-I -S: no site-packages, no PYTHONPATH, no script folder on sys.path): this one, so it
    reads the `marshal` of its spec."""
    return [sys.executable, "-I", "-S", script, marshal.dumps(spec).hex(), "--"]


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _data_fd(data: bytes) -> int:
    """A descriptor to read `data` from (bwrap's --ro-bind-data reads it to the end)."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)   # far below a pipe's buffer
    os.close(write_end)
    return read_end


def _seccomp_fd() -> int | None:
    try:
        return seccomp.program_fd()
    except seccomp.SeccompUnavailable:
        return None   # `arena doctor` names it missing, and says why


_warned = threading.Event()


def _warn_once_of_missing_cgroups() -> None:
    if _warned.is_set():
        return
    _warned.set()
    for controller, reason in cgroups.placement().missing.items():
        _log.warning("arena sandbox: no %s cgroup for bots: %s%s", controller, reason,
                     "; each process gets an address-space limit (RLIMIT_AS) instead"
                     if controller == "memory" else "")


def _bot_env(env: Mapping[str, str], lib: str, unsafe: bool) -> dict[str, str]:
    python_bin = str(Path(sys.executable).parent)
    bot_env = {"PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
               "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1"}
    if unsafe:
        bot_env.pop("HOME")
        bot_env.pop("TMPDIR")
    bot_env.update(env)
    sites = [] if unsafe else [str(path) for path in mounts.outside_site_dirs()]
    bot_env["PYTHONPATH"] = os.pathsep.join(
        part for part in (lib, *sites, env.get("PYTHONPATH", "")) if part)
    return bot_env


_uid_counter = itertools.count()


def _allocate_uid() -> int:
    """A uid no live process has: from this arena process's pid and a counter."""
    used = {uid for _, _, uid, _ in proctree.processes()}
    for _ in range(256):
        uid = _UID_BASE + ((os.getpid() & 0x3FFFFF) << 8) + (next(_uid_counter) & 0xFF)
        if uid not in used:
            return uid
    raise SandboxError("no free sandbox uid: too many bots running from this arena process")


def _grant(path: Path, *, write: bool, recursive: bool) -> None:
    """Lets the bot's group reach `path` (and what is in it) when "others" may not.

    A bot runs as its own uid in group BOT_GID, so a 0700 bot folder (a fresh temporary
    folder) or a 0755 socket (connecting needs write access) would lock it out. Only what
    lacks the access gets group BOT_GID and the group bits; nothing is opened to other users.
    """
    entries = [path]
    if path.is_dir():
        if recursive:
            for root, dirs, files in os.walk(path):
                entries += [Path(root) / name for name in dirs + files]
        else:
            entries += list(path.iterdir())
    for entry in entries:
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode):
            continue
        need = 4 | (2 if write else 0) | (1 if stat.S_ISDIR(info.st_mode) else 0)
        if info.st_mode & need == need:  # "others" bits already suffice
            continue
        os.chown(entry, -1, BOT_GID, follow_symlinks=False)
        os.chmod(entry, stat.S_IMODE(info.st_mode) | (need << 3))


class SandboxedProcess:
    """A running bot: its process tree, its cgroups, its log. See the module docstring."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path | None,
                 uid: int | None, log_path: Path, log_cap_bytes: int, arena_end: int,
                 status_end: int, groups: cgroups.BotCgroups, pass_fds: list[int],
                 log_prefix: str = "", cpus: frozenset[int] | None = None):
        self.uid = uid
        """The bot's own uid when the arena runs as root, else None."""
        self.log_path = log_path
        self.cgroups = groups
        self._arena_end = arena_end   # closed once the bot is gone (see `spawn`)
        self._status_end = status_end
        self._status: dict | None = None
        self._stopped: set[int] = set()   # pids stopped by SIGSTOP (no freezer cgroup)
        self._memory_killed: bool | None = None   # read before its cgroups go
        read_end, write_end = os.pipe()
        try:
            # A bigger pipe means fewer wake-ups of the draining thread.
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, MiB)
        except OSError:
            pass
        # The arena's own way into the bot's output pipe, for its lines in the bot's log
        # (`log_line`): a file description of its own, non-blocking without making the bot's
        # writes so, and kept until the bot is killed.
        self._nonce = secrets.token_hex(16).encode()
        self._line_end = os.open(f"/proc/self/fd/{write_end}",
                                 os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        own_cpus = os.sched_getaffinity(0) if cpus is not None else None
        try:
            if cpus is not None:   # a child starts on its parent thread's CPUs
                os.sched_setaffinity(0, cpus)
            self._popen = subprocess.Popen(
                command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=write_end,
                stderr=write_end, start_new_session=True, close_fds=True,
                pass_fds=tuple(pass_fds))
        except OSError as error:
            os.close(read_end)
            os.close(self._line_end)
            os.close(arena_end)
            os.close(status_end)
            raise SandboxError(
                f"cannot start bot command {command[0]!r}: {error.strerror}") from None
        finally:
            if own_cpus is not None:
                os.sched_setaffinity(0, own_cpus)
            os.close(write_end)
            for fd in pass_fds:
                os.close(fd)
            pass_fds.clear()
        self.pid = self._popen.pid
        self._start = proctree.stat_fields(self.pid)
        self._seen: dict[int, int] = {}  # pid -> starttime of every process seen as the bot's
        self._schedstat: dict[int, int] = {}  # thread id -> its open schedstat file
        self._lock = threading.Lock()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._drain = threading.Thread(
            target=logdrain.drain,
            args=(read_end, log_path, log_cap_bytes, log_prefix.encode(), self._nonce),
            name=f"sandbox-log-{self.pid}", daemon=True)
        self._drain.start()

    def log_line(self, line: bytes, before_output: bool = False) -> bool:
        """Writes one arena line (no newline in it) into the bot's log, in order with the bot's
        output: through its pipe, which the drain reads in order; `before_output`: only if
        the bot prints a line after it (see `logdrain.drain`). False when it could not be:
        the pipe is full (the bot floods it, the drain writes what is ahead first) or the
        bot is gone."""
        kind = logdrain.BEFORE_OUTPUT if before_output else logdrain.ALWAYS
        with self._lock:   # not while `kill` closes it
            if self._line_end < 0:
                return False
            try:
                return os.write(self._line_end, self._nonce + kind + line + b"\n") > 0
            except OSError:   # BlockingIOError: full
                return False

    @property
    def returncode(self) -> int | None:
        """Exit status of the sandbox (bwrap passes on the bot's; 128+N if signal N killed it),
        or None while it runs."""
        return self._popen.returncode

    def poll(self) -> int | None:
        return self._popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        """Waits for the bot to end; subprocess.TimeoutExpired after `timeout` seconds."""
        return self._popen.wait() if timeout is None else lifeline.wait(self._popen, timeout)

    def death(self) -> str:
        """How the bot's command ended, once the sandbox has: "exited with status N", "killed
        by signal N", that the kernel killed it for going over its memory limit, or that its
        init ended before it could tell (the bot killed it: see `init`)."""
        if self.memory_killed():
            return "killed for going over its memory limit"
        status = self._end_report()
        if "signal" in status:
            return f"killed by signal {status['signal']}"
        if "exit" in status:
            return f"exited with status {status['exit']}"
        if status.get("started"):
            return (f"ended its sandbox's init, which then could not report its end (the "
                    f"sandbox exited with status {self._popen.returncode})")
        return f"exited with status {self._popen.returncode}"

    def never_ran(self) -> bool:
        """True when the sandbox ended without starting the bot's command: bubblewrap or the
        init failed before the init's "started" report (the bot did not exist yet) and the
        kernel did not kill it for its memory. An init ended after that was the bot's doing."""
        return (self._popen.poll() is not None and not self._end_report().get("started")
                and not self.memory_killed())

    def _end_report(self) -> dict:
        """What the init reported, its lines merged: "started" once it starts the command,
        then "exit" or "signal" once the command ends ({} if it reported nothing)."""
        if self._status is None and self._popen.returncode is not None:
            self._status = {}
            try:
                lines = os.read(self._status_end, 4096).splitlines()
            except OSError:
                lines = []
            for line in lines:
                try:
                    facts = json.loads(line)
                except ValueError:
                    continue
                if isinstance(facts, dict):
                    self._status.update(facts)
        return self._status or {}

    # -- CPU fairness ----------------------------------------------------------------------
    def hold(self) -> None:
        """Stops the bot between its turns, at once: its CPU quota held at the kernel's least
        (`BotCgroups.hold`: 1 ms in 100 ms, and its threads sleep on undisturbed), else the
        freezer without waiting, else SIGSTOP. `thaw` ends it."""
        if self.cgroups.can_hold:
            self.cgroups.hold()
        else:
            self.freeze(wait=False)

    def freeze(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stops every process of the bot (its freezer cgroup, else SIGSTOP to each). With
        `wait` it returns once all are stopped (or after `timeout` seconds, if given); without,
        at once (each stops within moments, at its next entry to or exit from the kernel;
        cheaper when called around every move)."""
        if self.cgroups.can_freeze:
            self.cgroups.freeze(wait, timeout)
            return
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGSTOP)
                self._stopped.add(pid)
            except (ProcessLookupError, PermissionError):
                pass

    def thaw(self, surely: bool = False) -> None:
        """Lets every process of the bot run again, held or frozen (`surely`: whatever another
        thread may have done meanwhile; see `BotCgroups.thaw`)."""
        if self.cgroups.can_hold or self.cgroups.can_freeze:
            self.cgroups.thaw(surely)
        stopped, self._stopped = self._stopped, set()
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass

    def cpu_seconds(self) -> float:
        """CPU time of all the bot's processes together so far (its cpuacct cgroup; else the
        sum over its live processes, which misses those that ended)."""
        if self.cgroups.counts_cpu:
            return self.cgroups.cpu_seconds()
        return sum(proctree.cpu_ticks(pid) for pid in self.pids()) / os.sysconf("SC_CLK_TCK")

    def run_queue_wait(self) -> float:
        """Seconds the bot's live threads have spent runnable but waiting for a CPU, over
        their lives (field 2 of /proc/TID/schedstat): a frozen or sleeping thread does not
        wait, a thread the machine keeps off the CPU does. The files stay open between
        calls, so a call costs a read per thread (tens of microseconds)."""
        threads = self.threads()
        total = 0
        with self._lock:
            files = self._schedstat
            if files.keys() != threads:
                for tid in files.keys() - threads:   # ended threads
                    os.close(files.pop(tid))
                for tid in threads - files.keys():   # new ones
                    try:
                        files[tid] = os.open(f"/proc/{tid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
                    except OSError:
                        pass   # gone meanwhile
            for fd in files.values():
                try:
                    total += int(os.pread(fd, 128, 0).split()[1])
                except (OSError, IndexError, ValueError):
                    pass   # gone meanwhile, or no schedstats in this kernel
        return total / 1e9

    def threads(self) -> set[int]:
        """Host ids of the bot's live threads: its cgroup's, else those of its processes."""
        threads = self.cgroups.threads()
        if threads is None:
            threads = {int(tid) for pid in self.pids()
                       for tid in _listdir(f"/proc/{pid}/task") if tid.isdigit()}
        return threads

    def memory_killed(self) -> bool:
        """True when the kernel killed a process of the bot for exceeding its memory limit."""
        if self._memory_killed is not None:
            return self._memory_killed
        return self.cgroups.memory_killed()

    # -- processes ------------------------------------------------------------------------
    def pids(self) -> set[int]:
        """Host pids of the bot's live processes: descendants of the sandbox, those in its
        cgroups, and in root mode every process of the bot's uid (which catches processes
        that left the tree)."""
        with self._lock:
            return {pid for pid, _ in self._members()}

    def _members(self) -> set[tuple[int, int]]:
        table = proctree.processes()
        members: set[tuple[int, int]] = set()
        live = {pid: start for pid, _, _, start in table}
        in_cgroups = self.cgroups.pids()
        members |= {(pid, live[pid]) for pid in in_cgroups if pid in live}
        if self.uid is not None:
            members |= {(pid, start) for pid, _, uid, start in table if uid == self.uid}
        if self._popen.returncode is None and self._start is not None:
            # Only while our child is unreaped may its pid name it (no reuse yet).
            children: dict[int, list[tuple[int, int]]] = {}
            for pid, ppid, _, start in table:
                children.setdefault(ppid, []).append((pid, start))
            stack = [self.pid] if live.get(self.pid) == self._start[2] else []
            if stack:
                members.add((self.pid, self._start[2]))
            while stack:
                for child in children.get(stack.pop(), ()):
                    members.add(child)
                    stack.append(child[0])
        for pid, start in members:
            self._seen[pid] = start
        return members

    def kill(self) -> None:
        """SIGKILLs every process of the bot and returns once each is gone (checked by pid and
        start time), then removes its cgroups; SandboxError if some process outlives a few
        seconds. Idempotent.

        The sandbox's own process goes last: while it lives, orphans of the processes being
        killed are re-parented inside the tree (to the init, a subreaper, or the pid
        namespace's init) instead of escaping to the host's init.
        """
        with self._lock:
            deadline = time.monotonic() + _KILL_TIMEOUT
            thawed = False
            while True:
                self._members()  # records newcomers in self._seen
                alive = {pid for pid, start in self._seen.items()
                         if (proctree.stat_fields(pid) or (None, None, None))[2] == start}
                if not alive:
                    break
                for pid in (alive - {self.pid}) or alive:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                if not thawed:   # frozen or held processes die only once they run
                    self.thaw(surely=True)
                    thawed = True
                if time.monotonic() > deadline:
                    raise SandboxError(f"bot processes {sorted(alive)} survive SIGKILL")
                time.sleep(0.002)
            self._popen.wait()
            self._end_report()
            for fd in self._schedstat.values():
                os.close(fd)
            self._schedstat.clear()
            if self._arena_end >= 0:
                os.close(self._arena_end)
                os.close(self._status_end)
                self._arena_end = -1
                self._memory_killed = self.cgroups.memory_killed()
                self.cgroups.remove()
            if self._line_end >= 0:   # the drain sees the pipe's end once every writer is gone
                os.close(self._line_end)
                self._line_end = -1
        self._drain.join(timeout=_KILL_TIMEOUT)
