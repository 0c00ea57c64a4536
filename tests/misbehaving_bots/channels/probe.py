"""Tries each channel between processes of bots, and each call an honest runtime needs, and
prints one line for each on stderr: `channels: NAME: open` or `channels: NAME: closed (WHY)`.

    probe.py                every probe of `PROBES` in this process
    probe.py hold-lock      takes an exclusive flock on a file every sandbox sees, then waits
    probe.py try-lock       whether that lock is held: `held`, `free`, or `closed (WHY)`
    probe.py open-ptys N    opens N pseudo-terminals, then waits
    probe.py pty-count      the host's count of open ptys (/proc/sys/kernel/pty/nr)
    probe.py send-bits BITS [FILE]  one bit per page of FILE (default `PAGES`), which both
                            processes see: evicted (fadvise DONTNEED) for 0, read (so
                            cached) for 1; then waits
    probe.py receive-bits N [FILE]  reads N bits back with mincore (a file the probe may
                            write: for others the kernel reports only the probe's own
                            mappings); RWF_NOWAIT, which the attack of issue 20 used, would
                            itself start reading an uncached page, and on a fast disk often
                            finds it read already

Used by the `channels` bot at its start, and run alone by tests/test_channels.py, with the
sandbox's protections and (the control) without them.
"""
import ctypes
import errno
import fcntl
import mmap
import os
import signal
import socket
import struct
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
SHARED = os.path.realpath(sys.executable)
"""A file every sandbox sees (the Python that runs the arena and its bots)."""
PAGES = os.path.join(os.path.dirname(os.__file__), "pydoc_data", "topics.py")
"""A file every sandbox sees that hardly anything reads (some 180 pages)."""
BIT_SPACING = 16 * mmap.PAGESIZE
PAGE = mmap.PAGESIZE
PROT_RW, MAP_PRIVATE_ANON, MAP_POPULATE = 3, 0x22, 0x8000
SYS_SOCKET, SYS_FCNTL, SYS_PIDFD_OPEN, SYS_PROCESS_MADVISE, SYS_CACHESTAT = 41, 72, 434, 440, 451


def checked(result: int) -> int:
    """`result` of a libc call, or OSError from errno."""
    if result in (-1, None) or (isinstance(result, int) and result < 0):
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def shared_fd() -> int:
    return os.open(SHARED, os.O_RDONLY)


def mapping(flags: int = MAP_PRIVATE_ANON, fd: int = -1, prot: int = PROT_RW) -> int:
    """The address of a new one-page mapping."""
    address = libc.mmap(None, PAGE, prot, flags, fd, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return address


def flock_struct(kind: int = fcntl.F_RDLCK) -> bytes:
    return struct.pack("hhxxxxqqixxxx", kind, os.SEEK_SET, 0, 0, 0)


def madvise(advice: int) -> None:
    area = mmap.mmap(-1, 4 * PAGE)
    area.madvise(advice)


def mincore() -> None:
    """Whether the first page of SHARED is cached."""
    address = mapping(flags=mmap.MAP_SHARED, fd=shared_fd(), prot=mmap.PROT_READ)
    checked(libc.mincore(ctypes.c_void_p(address), PAGE, ctypes.create_string_buffer(1)))


def cachestat() -> None:
    fd = shared_fd()
    span = (ctypes.c_uint64 * 2)(0, PAGE)
    stat = (ctypes.c_uint64 * 5)()
    checked(libc.syscall(SYS_CACHESTAT, fd, span, stat, 0))


def process_madvise() -> None:
    pidfd = checked(libc.syscall(SYS_PIDFD_OPEN, os.getpid(), 0))
    address = mapping()
    vector = (ctypes.c_void_p * 2)(address, PAGE)   # one struct iovec
    checked(libc.syscall(SYS_PROCESS_MADVISE, pidfd, vector, 1, 21, 0))   # MADV_PAGEOUT


def preadv2_nowait() -> None:
    try:
        os.preadv(shared_fd(), [bytearray(PAGE)], 0, os.RWF_NOWAIT)
    except BlockingIOError:
        pass   # EAGAIN: not cached, which is the answer the channel carries


def mlockall() -> None:
    checked(libc.mlockall(2))   # MCL_FUTURE: MCL_CURRENT would pass RLIMIT_MEMLOCK
    libc.munlockall()


def socket_of(family: int, kind: int = socket.SOCK_STREAM, protocol: int = 0) -> None:
    socket.socket(family, kind, protocol).close()


def read_nonempty(path: str) -> None:
    with open(path) as file:
        if not file.read().strip():
            raise OSError(errno.ENODATA, "empty")


def openpty() -> None:
    for fd in os.openpty():
        os.close(fd)


PROBES = {
    # channels: each should be closed in the sandbox
    "fadvise DONTNEED": lambda: os.posix_fadvise(shared_fd(), 0, 0, os.POSIX_FADV_DONTNEED),
    "fadvise NOREUSE": lambda: os.posix_fadvise(shared_fd(), 0, 0, os.POSIX_FADV_NOREUSE),
    "preadv2 RWF_NOWAIT": preadv2_nowait,
    "mincore": mincore,
    "cachestat": cachestat,
    "readahead": lambda: checked(libc.readahead(shared_fd(), ctypes.c_long(0), PAGE)),
    "madvise PAGEOUT": lambda: madvise(21),
    "madvise POPULATE_READ": lambda: madvise(22),
    "madvise POPULATE_WRITE": lambda: madvise(23),
    "process_madvise": process_madvise,
    "mlock": lambda: checked(libc.mlock(ctypes.c_void_p(mapping()), PAGE)),
    "mlock2": lambda: checked(libc.syscall(325, ctypes.c_void_p(mapping()), PAGE, 0)),
    "mlockall": mlockall,
    "mmap MAP_POPULATE": lambda: mapping(flags=MAP_PRIVATE_ANON | MAP_POPULATE),
    "flock": lambda: fcntl.flock(shared_fd(), fcntl.LOCK_SH | fcntl.LOCK_NB),
    "fcntl F_SETLK": lambda: fcntl.fcntl(shared_fd(), fcntl.F_SETLK, flock_struct()),
    "fcntl F_GETLK": lambda: fcntl.fcntl(shared_fd(), fcntl.F_GETLK, flock_struct()),
    "fcntl F_OFD_SETLK": lambda: fcntl.fcntl(shared_fd(), fcntl.F_OFD_SETLK, flock_struct()),
    "fcntl F_NOTIFY": lambda: fcntl.fcntl(os.open(os.path.dirname(SHARED), os.O_RDONLY),
                                          fcntl.F_NOTIFY, fcntl.DN_ACCESS),
    "inotify": lambda: checked(libc.inotify_init1(0)),
    "socket AF_VSOCK": lambda: socket_of(socket.AF_VSOCK),
    # buffers of its own loopback, which a cgroup v1 memory limit does not count
    "socket AF_INET": lambda: socket_of(socket.AF_INET),
    "socket AF_INET6": lambda: socket_of(socket.AF_INET6, socket.SOCK_DGRAM),
    # the kernel reads the low 32 bits of an int argument: high bits must not slip past
    "socket AF_VSOCK, high bits set": lambda: os.close(checked(libc.syscall(
        SYS_SOCKET, ctypes.c_long(1 << 32 | socket.AF_VSOCK), socket.SOCK_STREAM, 0))),
    "fcntl F_SETLK, high bits set": lambda: checked(libc.syscall(
        SYS_FCNTL, shared_fd(), ctypes.c_long(1 << 32 | fcntl.F_SETLK),
        ctypes.c_char_p(flock_struct()))),
    "socket NETLINK_KOBJECT_UEVENT": lambda: socket_of(socket.AF_NETLINK, socket.SOCK_DGRAM,
                                                       15),
    "read /proc/sys/kernel/random/boot_id": lambda: read_nonempty(
        "/proc/sys/kernel/random/boot_id"),
    "read /proc/sys/kernel/pty/nr": lambda: read_nonempty("/proc/sys/kernel/pty/nr"),
    "read /proc/cmdline": lambda: read_nonempty("/proc/cmdline"),
    "read /proc/vmstat": lambda: read_nonempty("/proc/vmstat"),
    "read /proc/diskstats": lambda: read_nonempty("/proc/diskstats"),
    "read /proc/pressure/io": lambda: read_nonempty("/proc/pressure/io"),
    "openpty": openpty,
    "sched_setaffinity": lambda: os.sched_setaffinity(0, range(os.cpu_count())),
}
HONEST = {
    # what runtimes do: each should stay open in the sandbox
    "fcntl F_GETFL F_SETFL F_GETFD F_SETFD F_DUPFD": lambda: [
        fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL)),
        fcntl.fcntl(0, fcntl.F_SETFD, fcntl.fcntl(0, fcntl.F_GETFD)),
        os.close(fcntl.fcntl(0, fcntl.F_DUPFD, 10))],
    "fadvise WILLNEED": lambda: os.posix_fadvise(shared_fd(), 0, 0, os.POSIX_FADV_WILLNEED),
    "preadv2": lambda: os.preadv(shared_fd(), [bytearray(PAGE)], 0, 0),
    "madvise DONTNEED": lambda: madvise(mmap.MADV_DONTNEED),
    "mmap": mapping,
    "socket AF_UNIX": lambda: socket_of(socket.AF_UNIX),
    "socket NETLINK_ROUTE": lambda: socket_of(socket.AF_NETLINK, socket.SOCK_RAW, 0),
    "sched_getaffinity": lambda: os.sched_getaffinity(0),
    "read /proc/meminfo /proc/stat /proc/cpuinfo": lambda: [
        read_nonempty(f"/proc/{name}") for name in ("meminfo", "stat", "cpuinfo")],
}


def outcome(probe) -> str:
    try:
        probe()
    except OSError as error:
        return f"closed ({errno.errorcode.get(error.errno, error.errno)})"
    return "open"


def tries() -> None:
    for name, probe in {**PROBES, **HONEST}.items():
        print(f"channels: {name}: {outcome(probe)}", file=sys.stderr, flush=True)


def hold_lock() -> None:
    print(f"channels: hold lock: {outcome(lambda: fcntl.flock(shared_fd(), fcntl.LOCK_EX))}",
          file=sys.stderr, flush=True)
    time.sleep(600)


def try_lock() -> None:
    try:
        fcntl.flock(shared_fd(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        found = "free"
    except BlockingIOError:
        found = "held"
    except OSError as error:
        found = f"closed ({errno.errorcode.get(error.errno, error.errno)})"
    print(f"channels: the lock is {found}", file=sys.stderr, flush=True)


def open_ptys(count: int) -> None:
    held = []
    try:
        for _ in range(count):
            held += os.openpty()
        print(f"channels: opened {count} ptys", file=sys.stderr, flush=True)
    except OSError as error:
        print(f"channels: openpty: closed ({errno.errorcode.get(error.errno, error.errno)})",
              file=sys.stderr, flush=True)
    time.sleep(600)


def send_bits(bits: str, path: str = PAGES) -> None:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)   # each read loads its own page alone
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)   # every bit 0
        for index, bit in enumerate(bits):
            if bit == "1":
                os.pread(fd, PAGE, index * BIT_SPACING)
        found = f"sent {bits}"
    except OSError as error:
        found = f"send: closed ({errno.errorcode.get(error.errno, error.errno)})"
    print(f"channels: {found}", file=sys.stderr, flush=True)
    time.sleep(600)


def receive_bits(count: int, path: str = PAGES) -> None:
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        vector = ctypes.create_string_buffer(size // PAGE + 1)
        checked(libc.mincore(ctypes.c_void_p(address), size, vector))
        found = "received " + "".join(str(vector.raw[index * BIT_SPACING // PAGE] & 1)
                                      for index in range(count))
    except OSError as error:
        found = f"receive: closed ({errno.errorcode.get(error.errno, error.errno)})"
    print(f"channels: {found}", file=sys.stderr, flush=True)


def pty_count() -> None:
    try:
        with open("/proc/sys/kernel/pty/nr") as file:
            found = f"ptys open on the host: {int(file.read())}"
    except OSError as error:
        found = f"pty count: closed ({errno.errorcode.get(error.errno, error.errno)})"
    print(f"channels: {found}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    signal.signal(signal.SIGIO, signal.SIG_IGN)   # what F_NOTIFY sends when SHARED is read
    mode = sys.argv[1] if len(sys.argv) > 1 else "all"
    {"all": tries, "hold-lock": hold_lock, "try-lock": try_lock, "pty-count": pty_count,
     "open-ptys": lambda: open_ptys(int(sys.argv[2])),
     "send-bits": lambda: send_bits(*sys.argv[2:]),
     "receive-bits": lambda: receive_bits(int(sys.argv[2]), *sys.argv[3:])}[mode]()
