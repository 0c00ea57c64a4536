"""What the sandbox can enforce on this machine: `require()` before running bots, and
`protections()`, the table `arena doctor` prints and leagues store.

Each protection is probed for real (bubblewrap is run, the seccomp filter is built and
loaded, the cgroup folders are created), not guessed from versions or files.
"""
from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass

from arena.sandbox import cgroups, mounts, seccomp
from arena.sandbox.errors import SandboxUnavailable

OPEN_FILES_WANTED = 4096
"""The arena's open-files soft limit below which a connection flood could starve it."""


@dataclass(frozen=True)
class Protection:
    name: str
    enforced: bool
    detail: str
    needed: bool
    """A league refuses to be trusted without it (`arena doctor` exits 1)."""

    @property
    def status(self) -> str:
        return "enforced" if self.enforced else "missing"


def available() -> bool:
    """True when `bwrap` is on PATH and can build a sandbox here."""
    return _unavailable_reason() is None


def require() -> None:
    """Raises SandboxUnavailable, saying why, unless `available()` and a sandboxed bot can
    run the arena's Python: for refusing early."""
    reason = _unavailable_reason()
    if reason is not None:
        raise SandboxUnavailable(reason)
    hidden = _python_hidden()
    if hidden is not None:   # else every bot would fail to start, each as if the host failed
        raise SandboxUnavailable(*hidden)


def _python_hidden() -> tuple[str, str] | None:
    """(why, what to do) when no sandboxed bot could run the arena's Python (a venv under
    /tmp, which every sandbox covers with its own); None when they can."""
    hidden = mounts.python_under_private_folder()
    if hidden is None:
        return None
    folder, private = hidden
    return (f"the arena runs on a Python in {folder}, under {private}, which every sandbox "
            f"covers with a {private} of its own, so no bot could run it",
            f"run Arena on a Python (or a venv) outside {' and '.join(mounts.PRIVATE_FOLDERS)}")


def _unavailable_reason() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not on PATH"
    return _bwrap_fails(bwrap, ("--unshare-net", "--unshare-pid"))


DATA_FD = "<data fd>"
"""Stands in `_bwrap_fails`' options for the descriptor of its `data` pipe."""


@functools.lru_cache(maxsize=None)
def _bwrap_fails(bwrap: str, options: tuple[str, ...], command: tuple[str, ...] = ("true",),
                 data: bytes | None = None) -> str | None:
    """Why `bwrap OPTIONS --ro-bind / / ... COMMAND` fails, or None; tried once.
    `data`, if given, is readable on a pipe whose descriptor number replaces `DATA_FD` in
    the options (for `--seccomp DATA_FD`). The pipe keeps the number the kernel gave it: the
    arena's other descriptors (an open database) are never touched."""
    pass_fds: tuple[int, ...] = ()
    read_end = -1
    if data is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, data)
        os.close(write_end)
        pass_fds = (read_end,)
        options = tuple(str(read_end) if option == DATA_FD else option for option in options)
    argv = [bwrap, "--ro-bind", "/", "/", *options, "--die-with-parent", "--new-session",
            "--", *command]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, pass_fds=pass_fds)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{bwrap} does not run ({error})"
    finally:
        if read_end >= 0:
            os.close(read_end)
    if done.returncode != 0:
        first = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        return f"{bwrap} {' '.join(options)} fails here ({first})"
    return None


def bwrap_disables_userns() -> bool:
    """True when bwrap can give the bot a user namespace in which no other can be made."""
    bwrap = shutil.which("bwrap")
    return bwrap is not None and _bwrap_fails(
        bwrap, ("--unshare-user", "--disable-userns")) is None


_USERNS_TRY = ("import ctypes\n"
               "libc = ctypes.CDLL(None, use_errno=True)\n"
               "if libc.unshare(0x10000000) == 0:\n"   # CLONE_NEWUSER
               "    raise SystemExit('made a user namespace')\n"
               "raise SystemExit(0 if ctypes.get_errno() in (1, 28) else\n"
               "                 f'unshare failed with errno {ctypes.get_errno()}, not EPERM '\n"
               "                 'or ENOSPC')\n")
"""Run in a sandbox like a bot's: exits 0 when no user namespace can be made, refused with
EPERM (the seccomp filter) or ENOSPC (bwrap's --disable-userns: none may be made inside)."""


_CGROUP_FALLBACKS = {
    "memory": "; each process gets an address-space limit (RLIMIT_AS) instead",
    "pids": "; only RLIMIT_NPROC limits the bot's processes",
}
"""What stands in for a missing cgroup controller that a league needs."""


def protections() -> list[Protection]:
    """One line per protection: namespaces, the arena's Python within bots' reach, uid drop,
    each cgroup controller, seccomp, user namespaces blocked, the arena's open-files limit."""
    bwrap = shutil.which("bwrap")
    unavailable = _unavailable_reason()
    rows = [Protection("namespaces", unavailable is None,
                       unavailable or "own mount, pid, network, IPC and UTS namespaces "
                                      "(bubblewrap)", needed=True)]
    hidden = _python_hidden()
    rows.append(Protection(
        "arena's Python", hidden is None,
        f"{hidden[0]}: {hidden[1]}" if hidden else
        "bots run the arena's Python, mounted read-only: "
        + ", ".join(map(str, mounts.python_dirs())), needed=True))
    root = os.geteuid() == 0
    rows.append(Protection(
        "uid drop", root,
        "each bot runs as a fresh uid of its own, without capabilities" if root else
        f"the arena does not run as root: bots run as its uid {os.getuid()} (in a user "
        "namespace), so RLIMIT_NPROC counts all that uid's processes", needed=False))
    where = cgroups.placement()
    for controller, job, needed in (
            ("memory", "all the bot's processes, tmpfs and memfds together", True),
            ("pids", "processes and threads of the bot together", True),
            ("cpu", "a CPU quota per bot", False),
            ("cpuacct", "CPU time of all the bot's processes (else summed from /proc)", False),
            ("freezer", "freezing a bot between its moves (else SIGSTOP to each process)",
             False)):
        if controller in where.folders:
            version, folder = where.folders[controller]
            rows.append(Protection(f"cgroup {controller}", True,
                                   f"{job}: cgroup v{version} under {folder}", needed))
        else:
            rows.append(Protection(f"cgroup {controller}", False,
                                   where.missing.get(controller, "?")
                                   + _CGROUP_FALLBACKS.get(controller, ""), needed))
    try:
        program = seccomp.filter_program()
        detail = (f"{len(seccomp.DENIED)} system calls and namespace flags of clone/unshare "
                  f"denied with EPERM, clone3 with ENOSYS; channels between bots closed: "
                  f"{len(seccomp.CHANNELS)} calls, {len(seccomp.CHANNEL_ARGS)} argument "
                  f"rules, socket families but {', '.join(seccomp.SOCKET_FAMILIES)}")
        problem = bwrap and unavailable is None and _bwrap_fails(
            bwrap, ("--seccomp", DATA_FD), ("true",), program)
        rows.append(Protection("seccomp", not problem, problem or detail, needed=True))
    except seccomp.SeccompUnavailable as error:
        program = None
        rows.append(Protection("seccomp", False, str(error), needed=True))
    rows.append(_userns_row(bwrap, unavailable, program, root))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    rows.append(Protection(
        "open-files limit", soft >= OPEN_FILES_WANTED or soft == resource.RLIM_INFINITY,
        f"the arena's soft limit is {soft} (hard {hard}); the CLI raises it to the hard limit"
        + ("" if soft >= OPEN_FILES_WANTED else
           f"; below {OPEN_FILES_WANTED} a connection flood can starve the arena: raise the "
           "hard limit (ulimit -Hn)"), needed=True))
    return rows


def leftovers() -> str:
    """Bots that arena processes left behind: what this process's sweeps ended (every arena
    command sweeps at its start), and the bot cgroups of arena processes running now."""
    cgroups.sweep_orphans()
    ended = "; ".join(map(str, cgroups.swept)) or "no bot or bot cgroup of a dead arena was left"
    live = cgroups.live_bot_cgroups()
    running = (f"; {sum(live.values())} bot cgroup(s) of {len(live)} running arena process(es)"
               f" ({', '.join(map(str, sorted(live)))})" if live else "")
    return ended + running


def _userns_row(bwrap: str | None, unavailable: str | None, program: bytes | None,
                root: bool) -> Protection:
    """Tries to make a user namespace inside a sandbox like a bot's."""
    if bwrap is None or unavailable is not None:
        return Protection("user namespaces blocked", False, unavailable or "no bwrap", True)
    ways = []
    options: tuple[str, ...] = ()
    if not root and bwrap_disables_userns():
        options += ("--unshare-user", "--disable-userns")
        ways.append("bwrap --disable-userns")
    if program is not None:
        options += ("--seccomp", DATA_FD)
        ways.append("seccomp denies CLONE_NEWUSER")
    if root:
        ways.append("(bwrap's --disable-userns needs a user namespace, which would map the "
                    "bot's uid to root outside; the arena runs as root, so seccomp does it)")
    problem = _bwrap_fails(bwrap, options, (sys.executable, "-I", "-S", "-c", _USERNS_TRY),
                           program)
    if not ways or problem:
        return Protection("user namespaces blocked", False,
                          problem or "neither seccomp nor bwrap --disable-userns is available",
                          needed=True)
    return Protection("user namespaces blocked", True, "; ".join(ways), needed=True)


def missing_needed(rows: list[Protection]) -> list[Protection]:
    return [row for row in rows if row.needed and not row.enforced]
