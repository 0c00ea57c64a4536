"""The seccomp filter every bot runs under, generated with libseccomp (through ctypes).

Allowed: everything an honest runtime does. Denied with EPERM: system calls that reach kernel
state shared beyond the bot's sandbox or that only widen the kernel's attack surface - the
keyrings, new namespaces (clone and unshare with a namespace flag, setns), io_uring, bpf,
perf_event_open, ptrace and reading or writing another process's memory, mounting,
userfaultfd, kexec, kernel modules, swap, reboot, accounting, quotas and the like. clone3
fails with ENOSYS instead: its flags sit in memory the filter cannot read, and on ENOSYS the C
library falls back to clone, whose flags it can. System calls of other architectures (32-bit
x86 through int 0x80, x32) kill the process: libseccomp's default for a foreign architecture.

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

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_SCMP_CMP_MASKED_EQ = 7


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
        with tempfile.TemporaryFile() as out:
            code = lib.seccomp_export_bpf(ctx, out.fileno())
            if code < 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-code)}")
            out.seek(0)
            return out.read()
    finally:
        lib.seccomp_release(ctx)


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
