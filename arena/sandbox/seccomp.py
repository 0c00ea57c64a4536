"""The seccomp filter every bot runs under, generated with libseccomp (through ctypes).

Allowed: everything an honest runtime does. Denied with EPERM: system calls that reach kernel
state shared beyond the bot's sandbox or that only widen the kernel's attack surface - the
keyrings, new namespaces (clone and unshare with a namespace flag, setns), io_uring, bpf,
perf_event_open, ptrace and reading or writing another process's memory, mounting,
userfaultfd, kexec, kernel modules, swap, reboot, accounting, quotas and the like. clone3
fails with ENOSYS instead: its flags sit in memory the filter cannot read, and on ENOSYS the C
library falls back to clone, whose flags it can. System calls of other architectures (32-bit
x86 through int 0x80, x32) kill the process: libseccomp's default for a foreign architecture.

Also denied: the calls that let two processes of bots talk through state the host shares
between sandboxes, and kernel work a freeze cannot interrupt (`CHANNELS`, `CHANNEL_ARGS`):
probing and evicting the page cache, file locks, file-access notifications, socket families
the network namespace does not confine, populating or pinning memory, and moving off the CPUs
the arena gave the bot (sched_setaffinity). Each fails with the
error the kernel itself gives where the feature is missing (ENOLCK for locks, EAFNOSUPPORT for
a socket family, EINVAL for unknown advice, EOPNOTSUPP for RWF_NOWAIT, ENOSYS for cachestat),
so a runtime that tries one takes its usual fallback; EPERM where there is none.

libseccomp is used through ctypes on libseccomp.so.2 (the Debian package libseccomp2, which
apt itself depends on): the filter is small and built once per arena, and the Python binding
on PyPI (pyseccomp) is a thin ctypes wrapper of the same library with fewer users.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile

DENIED = (
    # kernel keyrings: notes left there outlive the bot and are visible to other uids
    "add_key", "request_key", "keyctl",
    # namespaces and other processes
    "setns", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # kernel attack surface with no use for a bot
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
    "userfaultfd", "lookup_dcookie", "fanotify_init",
    # mounts and file systems
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "chroot", "quotactl", "quotactl_fd",
    "name_to_handle_at", "open_by_handle_at",
    # the machine itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "reboot", "acct", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "syslog", "vhangup", "iopl", "ioperm",
)
"""Denied with EPERM."""
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080,
}
"""clone and unshare fail with EPERM when their flags hold any of these."""

CHANNELS = (
    # the page cache: mincore and cachestat tell which pages of a file every sandbox sees are
    # cached, readahead and process_madvise (MADV_PAGEOUT) load and evict them
    ("mincore", errno.EPERM), ("cachestat", errno.ENOSYS), ("readahead", errno.EINVAL),
    ("process_madvise", errno.EPERM),
    # a lock or an inotify watch on a file every sandbox sees is seen by all of them
    ("flock", errno.ENOLCK), ("inotify_init", errno.EPERM), ("inotify_init1", errno.EPERM),
    # pinning memory: long kernel work that a freeze waits for, and no honest runtime's need
    ("mlock", errno.EPERM), ("mlock2", errno.EPERM), ("mlockall", errno.EPERM),
    # leaving the core a league worker keeps its match and bots on (arena.hostload.pin), for
    # another worker's; the bot's CPU time is its quota's either way (reading it stays allowed)
    ("sched_setaffinity", errno.EPERM),
)
"""(system call, errno): denied whatever its arguments."""

_ALL = 0xFFFFFFFF
"""Mask of an int argument: the kernel reads the low 32 bits of the register, so a hostile
caller's high bits must not let it slip past a comparison."""
F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 5, 6, 7, 36, 37, 38
F_SETLEASE, F_NOTIFY = 1024, 1026
POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE = 4, 5
MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_COLLAPSE = 20, 21, 22, 23, 25
MAP_POPULATE = 0x8000
RWF_NOWAIT = 0x8
CHANNEL_ARGS = (
    # record and open-file-description locks, leases and directory notifications; F_GETFL,
    # F_SETFL, F_GETFD, F_SETFD and F_DUPFD (which every runtime uses) stay allowed
    *(("fcntl", errno.ENOLCK, 1, _ALL, command)
      for command in (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW)),
    ("fcntl", errno.EPERM, 1, _ALL, F_SETLEASE), ("fcntl", errno.EPERM, 1, _ALL, F_NOTIFY),
    # evicting a file's pages from the page cache (WILLNEED, which only loads them, as any
    # read does, stays allowed)
    ("fadvise64", errno.EINVAL, 3, _ALL, POSIX_FADV_DONTNEED),
    ("fadvise64", errno.EINVAL, 3, _ALL, POSIX_FADV_NOREUSE),
    # a read or write that fails when the pages are not cached tells whether they are
    ("preadv2", errno.EOPNOTSUPP, 5, RWF_NOWAIT, RWF_NOWAIT),
    ("pwritev2", errno.EOPNOTSUPP, 5, RWF_NOWAIT, RWF_NOWAIT),
    # evicting pages, and populating or collapsing memory in one long call a freeze waits for
    *(("madvise", errno.EINVAL, 2, _ALL, advice)
      for advice in (MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
                     MADV_COLLAPSE)),
    ("mmap", errno.EPERM, 3, MAP_POPULATE, MAP_POPULATE),
)
"""(system call, errno, argument, mask, value): denied when `argument & mask == value`."""

SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_NETLINK": 16}
"""The socket families a bot may open: Unix sockets (its way to the arena, and between its own
processes), and netlink only as NETLINK_ROUTE (protocol 0: the C library's and libuv's
interface lists), which its own network namespace confines. Every other family fails with
EAFNOSUPPORT, as where the kernel lacks it: AF_VSOCK reaches the hypervisor's host, and the
internet families, though confined to a loopback of its own, hold buffers a cgroup v1 memory
limit does not count (a bot queued 1.2 GiB of TCP and 1.2 GiB of UDP on its loopback,
unread, with 22 MiB charged to it: memory taken from the whole host)."""
_AF_NETLINK = SOCKET_FAMILIES["AF_NETLINK"]

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_SCMP_CMP_NE, _SCMP_CMP_GT, _SCMP_CMP_MASKED_EQ = 1, 6, 7


def _errno_action(code: int) -> int:
    return _SCMP_ACT_ERRNO | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


class SeccompUnavailable(Exception):
    """libseccomp cannot be loaded or cannot build the filter here."""


@functools.lru_cache(maxsize=None)
def _libseccomp() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as error:
        raise SeccompUnavailable(f"libseccomp is not installed ({error}); install the Debian "
                                 "package libseccomp2") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


@functools.lru_cache(maxsize=None)
def filter_program() -> bytes:
    """The filter as the BPF program bwrap's --seccomp takes; built once (SeccompUnavailable
    says why it cannot be)."""
    lib = _libseccomp()
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        for name in DENIED:
            _add(lib, ctx, name, _errno_action(errno.EPERM))
        _add(lib, ctx, "clone3", _errno_action(errno.ENOSYS))
        for name in ("clone", "unshare"):
            for flag_name, flag in NAMESPACE_FLAGS.items():
                if name == "clone" and flag_name == "CLONE_NEWTIME":
                    continue   # clone's low byte is the exit signal; NEWTIME is clone3's
                _add(lib, ctx, name, _errno_action(errno.EPERM),
                     _ArgCmp(0, _SCMP_CMP_MASKED_EQ, flag, flag))
        _add_channel_rules(lib, ctx)
        with tempfile.TemporaryFile() as out:
            code = lib.seccomp_export_bpf(ctx, out.fileno())
            if code < 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-code)}")
            out.seek(0)
            return out.read()
    finally:
        lib.seccomp_release(ctx)


def _add_channel_rules(lib: ctypes.CDLL, ctx: int) -> None:
    """The rules of `CHANNELS`, `CHANNEL_ARGS` and `SOCKET_FAMILIES`."""
    for name, code in CHANNELS:
        _add(lib, ctx, name, _errno_action(code))
    for name, code, arg, mask, value in CHANNEL_ARGS:
        _add(lib, ctx, name, _errno_action(code), _ArgCmp(arg, _SCMP_CMP_MASKED_EQ, mask, value))
    # A filter cannot say "not one of these", so the families between and past the allowed
    # ones are denied one by one, and every value above the highest allowed at once (which
    # also catches a family whose register has high bits set).
    highest = max(SOCKET_FAMILIES.values())
    refused = _errno_action(errno.EAFNOSUPPORT)
    for family in range(highest):
        if family not in SOCKET_FAMILIES.values():
            _add(lib, ctx, "socket", refused, _ArgCmp(0, _SCMP_CMP_MASKED_EQ, _ALL, family))
    _add(lib, ctx, "socket", refused, _ArgCmp(0, _SCMP_CMP_GT, highest, 0))
    _add(lib, ctx, "socket", _errno_action(errno.EPROTONOSUPPORT),
         _ArgCmp(0, _SCMP_CMP_MASKED_EQ, _ALL, _AF_NETLINK), _ArgCmp(2, _SCMP_CMP_NE, 0, 0))


def _add(lib: ctypes.CDLL, ctx: int, name: str, action: int, *conditions: _ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:
        return   # not a system call of this architecture (e.g. iopl on arm64)
    array = (_ArgCmp * len(conditions))(*conditions) if conditions else None
    code = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
    if code < 0:
        raise SeccompUnavailable(f"seccomp_rule_add({name}) failed: {os.strerror(-code)}")


def program_fd() -> int:
    """A fresh descriptor to read the filter from, at its start (bwrap reads it to the end)."""
    read_end, write_end = os.pipe()
    program = filter_program()
    if len(program) > 60000:
        raise SeccompUnavailable("the seccomp filter does not fit a pipe")
    os.write(write_end, program)
    os.close(write_end)
    return read_end
