"""Run one bot command in a bubblewrap sandbox with resource limits; end its whole tree on demand.

Knows nothing of games or gRPC. `spawn(argv, bot_dir, ...)` starts the command under `bwrap`:

- own network namespace (no network; the host's loopback listeners are unreachable), own pid,
  IPC and UTS namespaces, its own session (`--new-session`), killed with the arena
  (`--die-with-parent`, and through a pipe only the arena holds, which also covers bwrap's
  start-up);
- visible, read-only: the system (/usr, the merged-/usr links, a few /etc files), the Python
  installation the arena runs on, the bot's folder (at `/bot`, the working directory), the
  `arena` and `engine` package directories (under `/opt/arena`, on PYTHONPATH) so bots can
  import `arena.sdk`, `arena.v1` and the rules the SDK's strategies use, and the `sockets`
  (Unix sockets such as the arena's, each alone, at its host path: connecting needs no write
  access to the mount); visible, writable: a private size-capped tmpfs at `/tmp` (also
  HOME) and any `bind_rw` folders, at their host paths. Nothing else of the host: no other
  bot, no results, no home, no repository root.
- resource limits (`Limits`) set with `resource.setrlimit` by a small wrapper that runs
  inside the sandbox just before the bot's command. When the arena runs as root it also
  drops the bot to a fresh unprivileged uid: the kernel does not enforce RLIMIT_NPROC for
  root, and a uid of its own makes the limit count only this bot's processes.

`SandboxedProcess.kill()` ends every process of the bot, daemonised grandchildren included,
and checks by pid that none survives. The bot's stdout and stderr go through one pipe that a
thread drains into `log_path`, keeping at most `log_cap_bytes` plus one truncation note and
discarding the rest, so a chatty bot never blocks on a full pipe.

`unsafe=True` (the CLI's `--unsafe-no-sandbox`) runs the command without bwrap: same rlimits,
own session and process group, but it sees the whole host.
"""
from __future__ import annotations

import errno
import fcntl
import functools
import importlib.util
import itertools
import json
import os
import re
import shutil
import signal
import site
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from arena.errors import ArenaError

MiB = 1 << 20
GiB = 1 << 30

BOT_DIR = "/bot"
"""Where the bot's own folder appears inside the sandbox (its working directory)."""
LIB_DIR = "/opt/arena"
"""Put on the bot's PYTHONPATH; holds the packages of `_SHARED_PACKAGES`."""
BOT_GID = 0x3FFFFFFF
"""Group of every sandboxed bot run as root; its sockets and `bind_rw` folders open to it."""
_UID_BASE = 0x40000000
"""Bots get uids above this: far from any real account, and one per running bot."""

_ARENA_PACKAGE = Path(__file__).resolve().parent
_SHARED_PACKAGES = ("arena", "engine")
"""What bots may import of the arena's code: the SDK and protocol (in arena), and the rules
(engine: pure game logic) that the SDK's strategies use. Package folders only: never the
repository root with its results and bots."""
_ETC_FILES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime")
_MERGED_USR = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_KILL_TIMEOUT = 5.0
_LOG_CHUNK = 64 * 1024
_TRUNCATION_NOTE = "\n[arena: log truncated at {cap} bytes; later output discarded]\n"


class SandboxUnavailable(ArenaError):
    """bubblewrap is missing or cannot create namespaces on this machine."""

    def __init__(self, detail: str = "bubblewrap (bwrap) is not on PATH"):
        super().__init__(
            f"cannot sandbox bots: {detail}; install the Debian package `bubblewrap` "
            "(apt-get install bubblewrap) or pass --unsafe-no-sandbox to run bots unsandboxed")


class SandboxError(ArenaError):
    """A bot could not be started or ended as asked."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one bot process tree. Sizes in bytes, time in CPU seconds."""

    memory_bytes: int = 1 * GiB
    """Address space of each process (RLIMIT_AS): allocating more fails."""
    cpu_seconds: int = 300
    """CPU time of each process over its whole life (RLIMIT_CPU): SIGXCPU, then SIGKILL."""
    processes: int = 64
    """Processes and threads of the bot together (RLIMIT_NPROC; threads count)."""
    file_size_bytes: int = 16 * MiB
    """Largest file the bot may write (RLIMIT_FSIZE)."""
    open_files: int = 256
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    tmp_bytes: int = 64 * MiB
    """Size of the private /tmp, and of /dev/shm (each a tmpfs, so memory of the host)."""

    def rlimits(self) -> list[tuple[str, int, int]]:
        """(resource name, soft, hard) as the in-sandbox wrapper sets them."""
        return [
            ("RLIMIT_AS", self.memory_bytes, self.memory_bytes),
            # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
            ("RLIMIT_CPU", self.cpu_seconds, self.cpu_seconds + 1),
            ("RLIMIT_NPROC", self.processes, self.processes),
            ("RLIMIT_FSIZE", self.file_size_bytes, self.file_size_bytes),
            ("RLIMIT_NOFILE", self.open_files, self.open_files),
            ("RLIMIT_CORE", 0, 0),  # no core files of crashing bots
        ]


def available() -> bool:
    """True when `bwrap` is on PATH and can build a sandbox here."""
    return _unavailable_reason() is None


def require() -> None:
    """Raises SandboxUnavailable, saying why, unless `available()`: for refusing early."""
    reason = _unavailable_reason()
    if reason is not None:
        raise SandboxUnavailable(reason)


def _unavailable_reason() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not on PATH"
    return _probe(bwrap)


@functools.lru_cache(maxsize=None)
def _probe(bwrap: str) -> str | None:
    """Why bwrap cannot build our kind of sandbox, or None; tried once per bwrap binary."""
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid",
            "--die-with-parent", "--new-session", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{bwrap} does not run ({error})"
    if done.returncode != 0:
        first = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[0]
        return f"{bwrap} cannot create namespaces here ({first})"
    return None


def spawn(argv: Sequence[str], bot_dir: str | os.PathLike, *, env: Mapping[str, str],
          sockets: Sequence[str | os.PathLike] = (), bind_rw: Sequence[str | os.PathLike] = (),
          limits: Limits = Limits(), log_path: str | os.PathLike,
          log_cap_bytes: int = 1 * MiB, log_prefix: str = "",
          unsafe: bool = False) -> "SandboxedProcess":
    """Starts `argv` in the bot's folder, sandboxed; its output goes to `log_path` (appended,
    whole lines, each starting with `log_prefix`).

    `argv[0]` is looked up on the sandbox PATH (the arena's Python first, so `python` is the
    arena's interpreter); other paths in argv should be relative to the bot's folder. `env` is
    the bot's whole environment: nothing of the arena's leaks in; PATH, HOME, TMPDIR and
    PYTHONPATH get sandbox defaults.

    `sockets` are Unix sockets the bot may connect to; each appears alone, read-only, at its
    host path, so its folder can stay private (0700) and the bot can neither replace it nor
    write next to it. Start the server before spawning: the socket must exist. `bind_rw`
    folders appear writable at their host paths (a bot can fill them: prefer `sockets`).

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
    uid = None
    # The arena holds the write end of this pipe for as long as the bot may live, and nobody
    # else does: the wrapper in the sandbox sees its end close when the arena is gone.
    arena_pipe = os.pipe()
    if unsafe:
        command = _wrapper(str(_ARENA_PACKAGE.parent), limits, None, arena_pipe[0]) + list(argv)
        cwd: Path | None = bot_dir
        lib = str(_ARENA_PACKAGE.parent)
    else:
        require()
        if os.geteuid() == 0:
            uid = _allocate_uid()
            _grant(bot_dir, write=False, recursive=True)
            for path in socket_paths + rw_dirs:
                _grant(path, write=True, recursive=False)
        command = (_bwrap_argv(bot_dir, socket_paths, rw_dirs, limits)
                   + _wrapper(LIB_DIR, limits, uid, arena_pipe[0]) + list(argv))
        cwd = None
        lib = LIB_DIR
    return SandboxedProcess(command, _bot_env(env, lib, unsafe), cwd, uid,
                            Path(log_path), log_cap_bytes, arena_pipe, log_prefix)


def _bwrap_argv(bot_dir: Path, sockets: Sequence[Path], rw_dirs: Sequence[Path],
                limits: Limits) -> list[str]:
    """The bwrap options: namespaces, then the mounts in order (parents before children)."""
    # --die-with-parent takes hold only some way into bwrap's start-up; an arena killed
    # before that is noticed by the wrapper through the arena's pipe (see `spawn`).
    argv = [shutil.which("bwrap") or "bwrap",
             "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--hostname", "arena-bot",
             "--die-with-parent", "--new-session",
             "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/usr", "/usr"]
    for name in _MERGED_USR:
        host = Path("/") / name
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            argv += ["--ro-bind", str(host), str(host)]
    for name in _ETC_FILES:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for path in _python_dirs():
        argv += _mkdirs(path) + ["--ro-bind", str(path), str(path)]
    for name, folder in _shared_packages():
        inside = f"{LIB_DIR}/{name}"
        argv += _mkdirs(Path(inside)) + ["--ro-bind", str(folder), inside]
    for scratch in ("/tmp", "/dev/shm"):  # /dev/shm: POSIX semaphores, multiprocessing
        argv += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", scratch]
    argv += ["--ro-bind", str(bot_dir), BOT_DIR, "--chdir", BOT_DIR]
    for path in sockets:
        argv += _mkdirs(path) + ["--ro-bind", str(path), str(path)]
    for path in rw_dirs:
        argv += _mkdirs(path) + ["--bind", str(path), str(path)]
    return argv + ["--"]


def _shared_packages() -> list[tuple[str, Path]]:
    """(name, folder) of each package in _SHARED_PACKAGES that is installed, found without
    importing it."""
    found = []
    for name in _SHARED_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found.append((name, Path(list(spec.submodule_search_locations)[0]).resolve()))
    return found


def _mkdirs(path: Path) -> list[str]:
    """Creates a mount point's parents as 0755: bwrap would copy the host's modes, and a
    0700 parent such as /root (home of a pyenv Python) would lock the bot out."""
    argv: list[str] = []
    for parent in reversed(path.parents):
        if parent != Path("/"):
            argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def _python_dirs() -> list[Path]:
    """The Python installation the arena runs on: its prefix, a venv's, and site folders
    outside them (a user site); less what /usr already holds."""
    candidates = {Path(sys.base_prefix), Path(sys.prefix),
                  Path(sys.executable).resolve().parent.parent, *_outside_site_dirs()}
    dirs = sorted(path.resolve() for path in candidates)
    kept: list[Path] = []
    for path in dirs:
        inside_usr = path == Path("/usr") or Path("/usr") in path.parents
        if not inside_usr and not any(parent in kept for parent in path.parents):
            kept.append(path)
    return kept


def _outside_site_dirs() -> list[Path]:
    """Site folders on the arena's sys.path but outside its prefixes, such as the user site
    (under a home the bot does not have): the bot gets them on its PYTHONPATH."""
    prefixes = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    found = []
    for folder in site.getsitepackages() + [site.getusersitepackages()]:
        path = Path(folder).resolve()
        if (folder in sys.path and path.is_dir()
                and not any(prefix == path or prefix in path.parents for prefix in prefixes)):
            found.append(path)
    return found


def _wrapper(lib: str, limits: Limits, uid: int | None, arena_fd: int) -> list[str]:
    """The command that sets the limits, drops root and runs the bot (see `_run_bot`).

    It runs this very module in an isolated interpreter (-I -S: no site-packages, no
    PYTHONPATH), so the child side lives next to the parent side and needs no other file.
    `arena_fd` is the read end of the arena's pipe (see `spawn`), inherited at that number.
    """
    spec = {"rlimits": limits.rlimits(), "uid": uid, "gid": BOT_GID, "arena_fd": arena_fd}
    code = (f"import sys; sys.path.insert(0, {lib!r}); "
            "from arena.sandbox import _run_bot; _run_bot()")
    return [sys.executable, "-I", "-S", "-c", code, json.dumps(spec), "--"]


def _run_bot() -> None:
    """The wrapper's side, `python -c ... SPEC -- ARGV...`: a tiny init for the bot.

    Sets the limits, drops to the bot's uid, becomes a child subreaper (so every orphan of
    the bot, daemons included, stays its descendant and within reach of `kill()`), runs ARGV,
    and when ARGV ends kills whatever it left behind, then exits with ARGV's status. When the
    arena's pipe closes, the arena is gone (even if it died before bwrap could arrange to die
    with it): it kills ARGV, and so the rest, at once.
    """
    import ctypes
    import resource
    import threading

    spec = json.loads(sys.argv[1])
    argv = sys.argv[3:]
    for name, soft, hard in spec["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if spec["uid"] is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])  # drops every capability too
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    arena_fd = spec["arena_fd"]
    os.set_inheritable(arena_fd, False)   # the bot does not get it
    bot = os.fork()
    if bot == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            print(f"arena sandbox: cannot run {argv[0]!r}: {error.strerror}", file=sys.stderr)
        os._exit(127)
    threading.Thread(target=_end_with_arena, args=(arena_fd,), daemon=True).start()
    status = 0
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            break
        if pid == bot:
            status = wait_status
            bot = -1
        if bot == -1:
            for child in _children_of_self():
                os.kill(child, signal.SIGKILL)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def _end_with_arena(arena_fd: int) -> None:
    """In the wrapper: waits for the arena's pipe to close, then kills the wrapper's children
    (the bot); its own main loop then kills what they leave and exits."""
    while os.read(arena_fd, 4096):   # the arena never writes: this returns at its end
        pass
    for child in _children_of_self():
        os.kill(child, signal.SIGKILL)


def _children_of_self() -> list[int]:
    children = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as file:
            children += [int(pid) for pid in file.read().split()]
    return children


def _bot_env(env: Mapping[str, str], lib: str, unsafe: bool) -> dict[str, str]:
    python_bin = str(Path(sys.executable).parent)
    bot_env = {"PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
               "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1"}
    if unsafe:
        bot_env.pop("HOME")
        bot_env.pop("TMPDIR")
    bot_env.update(env)
    sites = [] if unsafe else [str(path) for path in _outside_site_dirs()]
    bot_env["PYTHONPATH"] = os.pathsep.join(
        part for part in (lib, *sites, env.get("PYTHONPATH", "")) if part)
    return bot_env


_uid_counter = itertools.count()


def _allocate_uid() -> int:
    """A uid no live process has: from this arena process's pid and a counter."""
    used = {uid for _, _, uid, _ in _processes()}
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


# -- processes -------------------------------------------------------------------------------

def _processes():
    """(pid, ppid, uid, starttime) of every live process (zombies excluded)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        fields = _stat_fields(pid)
        if fields is None:
            continue
        state, ppid, start = fields
        try:
            uid = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            continue
        yield pid, ppid, uid, start


def running(pid: int) -> bool:
    """True while `pid` is a live process; a zombie (dead, awaiting its reaper) is not."""
    return _stat_fields(pid) is not None


def _stat_fields(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of a live, non-zombie process; None when gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read().decode(errors="replace")
    except OSError:
        return None
    # The command name may hold spaces and parentheses: the fields follow the last ')'.
    fields = text[text.rindex(")") + 2:].split()
    state = fields[0]
    if state in ("Z", "X", "x"):
        return None
    return state, int(fields[1]), int(fields[19])


class SandboxedProcess:
    """A running bot: its process tree, its limits, its log. See the module docstring."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path | None,
                 uid: int | None, log_path: Path, log_cap_bytes: int,
                 arena_pipe: tuple[int, int], log_prefix: str = ""):
        self.uid = uid
        """The bot's own uid when the arena runs as root, else None."""
        self.log_path = log_path
        self._arena_end = arena_pipe[1]   # closed once the bot is gone (see `spawn`)
        read_end, write_end = os.pipe()
        try:
            # A bigger pipe means fewer wake-ups of the draining thread.
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, MiB)
        except OSError:
            pass
        try:
            self._popen = subprocess.Popen(
                command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=write_end,
                stderr=write_end, start_new_session=True, close_fds=True,
                pass_fds=(arena_pipe[0],))
        except OSError as error:
            os.close(read_end)
            os.close(self._arena_end)
            raise SandboxError(f"cannot start bot command {command[0]!r}: {error.strerror}")
        finally:
            os.close(write_end)
            os.close(arena_pipe[0])
        self.pid = self._popen.pid
        self._start = _stat_fields(self.pid)
        self._seen: dict[int, int] = {}  # pid -> starttime of every process seen as the bot's
        self._lock = threading.Lock()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._drain = threading.Thread(
            target=_drain, args=(read_end, log_path, log_cap_bytes, log_prefix.encode()),
            name=f"sandbox-log-{self.pid}", daemon=True)
        self._drain.start()

    @property
    def returncode(self) -> int | None:
        """Exit status of the sandbox (bwrap passes on the bot's; 128+N if signal N killed it),
        or None while it runs."""
        return self._popen.returncode

    def poll(self) -> int | None:
        return self._popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        """Waits for the bot to end; subprocess.TimeoutExpired after `timeout` seconds."""
        return self._popen.wait(timeout)

    def pids(self) -> set[int]:
        """Host pids of the bot's live processes: descendants of the sandbox, and in root mode
        every process of the bot's uid (which catches processes that left the tree)."""
        with self._lock:
            return {pid for pid, _ in self._members()}

    def _members(self) -> set[tuple[int, int]]:
        table = list(_processes())
        members: set[tuple[int, int]] = set()
        if self.uid is not None:
            members |= {(pid, start) for pid, _, uid, start in table if uid == self.uid}
        if self._popen.returncode is None and self._start is not None:
            # Only while our child is unreaped may its pid name it (no reuse yet).
            children: dict[int, list[tuple[int, int]]] = {}
            for pid, ppid, _, start in table:
                children.setdefault(ppid, []).append((pid, start))
            live = {pid: start for pid, _, _, start in table}
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
        start time); SandboxError if some process outlives a few seconds. Idempotent.

        The sandbox's own process goes last: while it lives, orphans of the processes being
        killed are re-parented inside the tree (to the wrapper, a subreaper, or the pid
        namespace's init) instead of escaping to the host's init.
        """
        with self._lock:
            deadline = time.monotonic() + _KILL_TIMEOUT
            while True:
                self._members()  # records newcomers in self._seen
                alive = {pid for pid, start in self._seen.items()
                         if (_stat_fields(pid) or (None, None, None))[2] == start}
                if not alive:
                    break
                for pid in (alive - {self.pid}) or alive:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                if time.monotonic() > deadline:
                    raise SandboxError(f"bot processes {sorted(alive)} survive SIGKILL")
                time.sleep(0.002)
            self._popen.wait()
            if self._arena_end >= 0:
                os.close(self._arena_end)
                self._arena_end = -1
        self._drain.join(timeout=_KILL_TIMEOUT)


def _drain(read_end: int, log_path: Path, cap: int, prefix: bytes = b"") -> None:
    """Copies the bot's output into the log while the log holds less than `cap` bytes, adds
    one truncation note, then discards the rest until the pipe closes.

    The log gets whole lines only, each starting with `prefix`, one write per batch of lines
    (an unfinished line waits for its end, or is cut at _LOG_CHUNK bytes), control bytes shown
    as text. So lines the arena writes into the log (match headers, which never start with a
    prefix) stand on lines of their own, and nothing a bot prints can pass for one of them,
    not even on a terminal.

    Other processes of the same bot (the same bot in two seats, other league workers) may
    append to the same log at the same time, so its size is read again before every chunk:
    together they overshoot the cap by at most a chunk each, not by a cap each.
    """
    note = _TRUNCATION_NOTE.format(cap=cap).encode()
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(log).st_size
        already_noted = size > cap  # an earlier run of this bot filled the log
        pending = b""
        while size < cap:
            chunk = os.read(read_end, min(cap - size, _LOG_CHUNK))
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if pending and (not chunk or len(pending) >= _LOG_CHUNK):   # end, or too long
                lines.append(pending)
                pending = b""
            if lines:   # cut at the cap: prefixes must not let many short lines overshoot it
                batch = b"".join(prefix + _CONTROL.sub(_shown_byte, line) + b"\n"
                                 for line in lines)
                os.write(log, batch[:max(0, cap - size)])
                size = os.fstat(log).st_size
            if not chunk:
                return
        if not already_noted and size < cap + len(note):   # nobody else noted it
            os.write(log, note)
        _discard_all(read_end)
    finally:
        os.close(log)
        os.close(read_end)


_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
"""Control bytes but tab and newline: a carriage return or a terminal escape in a bot's line
could hide its prefix on a screen, so they are written as visible `\\xNN` text."""


def _shown_byte(match: re.Match) -> bytes:
    return b"\\x%02x" % match[0][0]


def _discard_all(read_end: int) -> None:
    """Throws away the pipe's input until it closes."""
    with open(os.devnull, "wb") as sink:
        try:
            # splice moves pipe pages to /dev/null without copying them through Python.
            while os.splice(read_end, sink.fileno(), MiB):
                pass
        except OSError as error:
            if error.errno not in (errno.EINVAL, errno.ENOSYS):
                raise
            while os.read(read_end, MiB):
                pass
