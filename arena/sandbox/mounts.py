"""The sandbox's mount plan: the bubblewrap command line that builds a bot's view of the host.

Visible, read-only: the system (/usr, the merged-/usr links), a private `/etc` holding just
what runtimes read (see `etc_folder`) with a passwd and group naming the bot's uid, the Python
installation the arena runs on, the bot's folder (at `/bot`, the working directory), the
`arena` and `engine` packages the arena itself imported (under `/opt/arena`, on PYTHONPATH) so
bots can import `arena.sdk`, `arena.v1` and the rules the SDK's strategies use, and the
`sockets` (Unix sockets such as the arena's, each alone, at its host path: connecting needs no
write access to the mount). Visible, writable: a private size-capped tmpfs at `/tmp` (also
HOME) and at `/dev/shm`, and any `bind_rw` folders, at their host paths. Nothing else of the
host: no other bot, no results, no home, no repository root.

Hidden, though bubblewrap's own /proc and /dev would show them (`HIDDEN_FOLDERS`,
`HIDDEN_FILES`): /proc/sys (the boot id, `kernel/pty/nr` and every other counter the host
shares between sandboxes), /proc/cmdline, the host's other counters in /proc, and /dev/pts,
whose pseudo-terminals come from one pool shared by every sandbox. The hook an editable
install of the arena leaves in the site folder (`own_install_hooks`) reads empty too.
"""
from __future__ import annotations

import atexit
import functools
import glob
import importlib
import os
import shutil
import site
import stat
import sys
from pathlib import Path
from typing import Sequence

from arena.sandbox.limits import Limits
from arena.sandbox import scratch

BOT_DIR = "/bot"
"""Where the bot's own folder appears inside the sandbox (its working directory)."""
LIB_DIR = "/opt/arena"
"""Put on the bot's PYTHONPATH; holds the packages of `SHARED_PACKAGES`."""
SHARED_PACKAGES = ("arena", "engine")
"""What bots may import of the arena's code: the SDK and protocol (in arena), and the rules
(engine: pure game logic) that the SDK's strategies use. Package folders only: never the
repository root with its results and bots."""
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
               "nsswitch.conf", "os-release", "ssl/openssl.cnf",
               "ca-certificates.conf", "java-*", "timezone", "mime.types")
"""What of the host's /etc runtimes read: the dynamic loader's cache, the time zone, TLS
configuration (Node.js reads openssl.cnf at start), the JVM's configuration. Copied into the
arena's own folder; only what every user may read."""
ETC_BOUND = ("alternatives", "ssl/certs")
"""Folders of /etc that runtimes read, made of public links: the alternatives (`java`, `node`
may be one) and the TLS certificates. Bound read-only as they are, when every user may read
them, rather than copied: creating their ~700 links took 0.2 s of CPU in every arena process
(each league worker) on an ext4 /tmp."""
PRIVATE_FOLDERS = ("/tmp", "/dev/shm")
"""Where each sandbox mounts a size-capped tmpfs of its own (/dev/shm: POSIX semaphores,
multiprocessing), covering whatever the host holds there."""
HIDDEN_FOLDERS = ("/proc/sys", "/proc/pressure", "/dev/pts")
HIDDEN_FILES = ("/proc/cmdline", "/proc/diskstats", "/proc/vmstat", "/proc/zoneinfo",
                "/proc/buddyinfo", "/proc/pagetypeinfo", "/proc/interrupts", "/proc/softirqs",
                "/proc/locks", "/proc/key-users")
"""Host state that /proc and /dev show and no bot needs, covered by an empty read-only tmpfs
(folders) or an empty file, where the host has it. /proc/sys holds the boot id (which names
the host) and counters of the whole host (`kernel/pty/nr`: one bot opens ptys, another reads
the count); so do the others (disk reads, page-cache and free-page counts, interrupts, the
host's file locks, stall times), each a way for one bot to signal another by loading the
host. What runtimes read stays (/proc/meminfo, /proc/stat, /proc/cpuinfo, /proc/self). /dev/pts:
bwrap's --dev makes a private devpts instance, but every instance but the host's draws on one
pool of `kernel/pty/max - reserve` (3,072) ptys and bwrap cannot set a smaller `max`, so one
bot opening them all made every other sandbox's openpty() fail; with it covered, /dev/ptmx
leads nowhere and openpty() fails with ENOENT. No runtime needs a terminal to play."""
_MERGED_USR = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_EMPTY = "empty"
"""An empty file beside the sandbox's /etc, bound over the `HIDDEN_FILES`."""


def bwrap_argv(bot_dir: Path, sockets: Sequence[Path], rw_dirs: Sequence[Path],
               limits: Limits, *, passwd_fd: int, group_fd: int, seccomp_fd: int | None,
               disable_userns: bool) -> list[str]:
    """The bwrap options: namespaces, then the mounts in order (parents before children).

    `passwd_fd` and `group_fd` hold the bot's /etc/passwd and /etc/group; `seccomp_fd` the
    seccomp program; `disable_userns` adds a user namespace in which no further one can be
    made (only when the bot's uid needs no mapping: see `spawn`)."""
    # --die-with-parent takes hold only some way into bwrap's start-up; an arena killed
    # before that is noticed by the wrapper through the arena's pipe (see `spawn`).
    argv = [shutil.which("bwrap") or "bwrap",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "arena-bot",
            "--die-with-parent", "--new-session"]
    if disable_userns:
        argv += ["--unshare-user", "--disable-userns"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--dev", "/dev", "--proc", "/proc", *_hidden(), "--ro-bind", "/usr", "/usr"]
    for name in _MERGED_USR:
        host = Path("/") / name
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            argv += ["--ro-bind", str(host), str(host)]
    argv += ["--ro-bind", str(etc_folder()), "/etc",
             "--perms", "0644", "--ro-bind-data", str(passwd_fd), "/etc/passwd",
             "--perms", "0644", "--ro-bind-data", str(group_fd), "/etc/group"]
    for name in _public_etc_folders():
        argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    shown_python = python_dirs()
    for path in shown_python:
        argv += _mkdirs(path) + ["--ro-bind", str(path), str(path)]
    for path in own_install_hooks(shown_python):
        argv += _covered(path)
    for name, folder in shared_packages():
        inside = f"{LIB_DIR}/{name}"
        argv += _mkdirs(Path(inside)) + ["--ro-bind", str(folder), inside]
    for tmpfs in PRIVATE_FOLDERS:
        argv += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", tmpfs]
    argv += ["--ro-bind", str(bot_dir), BOT_DIR, "--chdir", BOT_DIR]
    for path in sockets:
        argv += _mkdirs(path) + ["--ro-bind", str(path), str(path)]
    for path in rw_dirs:
        argv += _mkdirs(path) + ["--bind", str(path), str(path)]
    return argv + ["--"]


def _hidden() -> list[str]:
    """Covers each of `HIDDEN_FOLDERS` with an empty read-only tmpfs and each of
    `HIDDEN_FILES` with an empty file (a bind of /dev/null cannot be read there: bwrap's
    binds are nodev)."""
    argv: list[str] = []
    for path in HIDDEN_FOLDERS:
        # bwrap's --dev always makes /dev/pts; a /proc entry is there where the host's kernel
        # has it, and bwrap cannot make a mount point in /proc
        if path == "/dev/pts" or os.path.isdir(path):
            argv += ["--perms", "0555", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
    for path in HIDDEN_FILES:
        if os.path.isfile(path):
            argv += _covered(path)
    return argv


def _covered(path: str | Path) -> list[str]:
    """The bind of the sandbox's empty file over the file at `path`: it reads empty there."""
    return ["--ro-bind", str(etc_folder().parent / _EMPTY), str(path)]


def users(uid: int, gid: int) -> tuple[bytes, bytes]:
    """The bot's /etc/passwd and /etc/group: root, the bot, nobody."""
    passwd = (f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
              f"bot:x:{uid}:{gid}:arena bot:/tmp:/usr/sbin/nologin\n"
              f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    group = f"root:x:0:\nbot:x:{gid}:\nnogroup:x:65534:\n"
    return passwd.encode(), group.encode()


@functools.lru_cache(maxsize=None)
def etc_folder() -> Path:
    """The sandbox's /etc: a private folder of this arena process (removed at its exit) with
    copies of the host's `ETC_ENTRIES` that every user may read, a hosts file naming only
    localhost, and empty passwd and group files over which each bot's own are mounted;
    beside it, the empty file that covers the `HIDDEN_FILES`."""
    top = scratch.folder_of_this_process("arena-etc-")   # and those of dead arenas go
    atexit.register(shutil.rmtree, top, True)
    (top / _EMPTY).write_bytes(b"")
    os.chmod(top / _EMPTY, 0o444)
    etc = top / "etc"
    etc.mkdir(mode=0o755)
    os.chmod(etc, 0o755)
    for pattern in ETC_ENTRIES:
        for source in sorted(glob.glob(f"/etc/{pattern}")):
            _copy_public(Path(source), etc / Path(source).relative_to("/etc"))
    for name in _public_etc_folders():   # mount points for the binds of `bwrap_argv`
        (etc / name).mkdir(mode=0o755, parents=True, exist_ok=True)
    (etc / "hosts").write_text("127.0.0.1 localhost arena-bot\n::1 localhost\n")
    for name in ("passwd", "group"):
        (etc / name).write_text("")
    for path in [etc, *etc.rglob("*")]:
        if not path.is_symlink():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return etc


@functools.lru_cache(maxsize=None)
def _public_etc_folders() -> tuple[str, ...]:
    """The `ETC_BOUND` folders this host has that every user may list and enter."""
    public = stat.S_IROTH | stat.S_IXOTH
    found = []
    for name in ETC_BOUND:
        try:
            info = os.stat(f"/etc/{name}")
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & public == public:
            found.append(name)
    return tuple(found)


def _copy_public(source: Path, target: Path) -> None:
    """Copies `source` (a file, a folder, or a link, kept as a link) if others may read it."""
    info = source.lstat()
    if not stat.S_ISLNK(info.st_mode) and not info.st_mode & stat.S_IROTH:
        return
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISDIR(info.st_mode):
        target.mkdir(mode=0o755, exist_ok=True)
        for child in sorted(source.iterdir()):
            _copy_public(child, target / child.name)
    elif stat.S_ISREG(info.st_mode):
        shutil.copyfile(source, target)


def shared_packages() -> list[tuple[str, Path]]:
    """(name, folder) of each package in SHARED_PACKAGES as the arena itself imported it:
    never whatever a folder named `arena` in the current directory holds."""
    found = []
    for name in SHARED_PACKAGES:
        module = sys.modules.get(name) or importlib.import_module(name)
        found.append((name, Path(module.__file__).resolve().parent))
    return found


def _mkdirs(path: Path) -> list[str]:
    """Creates a mount point's parents as 0755: bwrap would copy the host's modes, and a
    0700 parent such as /root (home of a pyenv Python) would lock the bot out."""
    argv: list[str] = []
    for parent in reversed(path.parents):
        if parent != Path("/"):
            argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def python_dirs() -> list[Path]:
    """The Python installation the arena runs on: its prefix, a venv's, and site folders
    outside them (a user site); less what /usr already holds."""
    candidates = {Path(sys.base_prefix), Path(sys.prefix),
                  Path(sys.executable).resolve().parent.parent, *outside_site_dirs()}
    dirs = sorted(path.resolve() for path in candidates)
    kept: list[Path] = []
    for path in dirs:
        inside_usr = path == Path("/usr") or Path("/usr") in path.parents
        if not inside_usr and not any(parent in kept for parent in path.parents):
            kept.append(path)
    return kept


def python_under_private_folder() -> tuple[Path, str] | None:
    """(folder, private folder) where the Python installation the arena runs on lies under a
    folder each sandbox covers with its own (`PRIVATE_FOLDERS`): no bot could run that Python
    (a venv under /tmp). None when it lies elsewhere."""
    for path in (Path(sys.executable).parent, *python_dirs()):   # its bots' PATH, its prefixes
        for private in map(Path, PRIVATE_FOLDERS):
            if path == private or private in path.parents:
                return path, str(private)
    return None


def own_install_hooks(shown_python: Sequence[Path]) -> list[Path]:
    """The import hook of the arena's own editable install (`pip install -e .`) in the site
    folders the sandbox shows (under /usr or `shown_python`, the `python_dirs`): a .pth that
    every Python start runs, importing a finder that maps `arena`, `engine` and `sample_bots`
    to the host's checkout. Inside, those come from LIB_DIR (the checkout is not there), so
    the hook would only cost each Python bot the finder's imports and tell it where the host
    keeps the repository: the sandbox covers both files with an empty one."""
    shown = [Path("/usr"), *shown_python]   # a hook elsewhere is not in the sandbox at all
    hooks = []
    for folder in {*site.getsitepackages(), site.getusersitepackages()}:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        hooks += [Path(folder, name) for name in names
                  if name.startswith("__editable__.arena-") and name.endswith(".pth")
                  or name.startswith("__editable___arena_") and name.endswith("_finder.py")]
    return sorted(path for path in hooks
                  if path.is_file() and any(top in path.parents for top in shown))


def outside_site_dirs() -> list[Path]:
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
