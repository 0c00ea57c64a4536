"""Channels between processes of bots, each closed in the real sandbox, each open without it.

Two processes of one bot (its two seatings of a deal) or of one author must not be able to
talk through state the host shares between sandboxes. The `channels` bot's probe
(tests/misbehaving_bots/channels/probe.py) tries each channel; here it runs in the real
sandbox (bubblewrap, seccomp, the bot's own uid), alone and in pairs of processes, and, as the
control, with the seccomp filter and the hidden paths switched off, where every channel works.
"""
from __future__ import annotations

import os
import re
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import sandbox
from arena.bots import BotHost, BotSpec
from arena.clock import TimeControl
from arena.match import StrategySeat, play_match
from arena.sandbox import mounts, seccomp

pytestmark = pytest.mark.sandbox

BOT = Path(__file__).parent / "misbehaving_bots" / "channels"
sys.path.insert(0, str(BOT))
import probe  # noqa: E402  (the probe's names: what it tries, and what must stay open)

sys.path.remove(str(BOT))

CLOSED_WITH = {
    "fadvise DONTNEED": "EINVAL", "fadvise NOREUSE": "EINVAL",
    "preadv2 RWF_NOWAIT": "ENOTSUP", "mincore": "EPERM", "cachestat": "ENOSYS",
    "readahead": "EINVAL", "madvise PAGEOUT": "EINVAL", "madvise POPULATE_READ": "EINVAL",
    "madvise POPULATE_WRITE": "EINVAL", "process_madvise": "EPERM", "mlock": "EPERM",
    "mlock2": "EPERM", "mlockall": "EPERM", "mmap MAP_POPULATE": "EPERM", "flock": "ENOLCK",
    "fcntl F_SETLK": "ENOLCK", "fcntl F_GETLK": "ENOLCK", "fcntl F_OFD_SETLK": "ENOLCK",
    "fcntl F_NOTIFY": "EPERM", "inotify": "EPERM", "socket AF_VSOCK": "EAFNOSUPPORT",
    "socket AF_VSOCK, high bits set": "EAFNOSUPPORT", "fcntl F_SETLK, high bits set": "ENOLCK",
    "socket AF_INET": "EAFNOSUPPORT", "socket AF_INET6": "EAFNOSUPPORT",
    "socket NETLINK_KOBJECT_UEVENT": "EPROTONOSUPPORT",
    "read /proc/sys/kernel/random/boot_id": "ENOENT", "read /proc/sys/kernel/pty/nr": "ENOENT",
    "read /proc/cmdline": "ENODATA", "read /proc/vmstat": "ENODATA",
    "read /proc/diskstats": "ENODATA", "read /proc/pressure/io": "ENOENT", "openpty": "ENOENT",
    "sched_setaffinity": "EPERM",
}
"""What each probe of the channels bot meets in the sandbox: the errno of the seccomp rule or
of the hidden path (an empty /proc/cmdline reads as ENODATA)."""


def host_has_vsock() -> bool:
    try:
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
    except OSError:
        return False
    return True


@pytest.fixture
def protections_off(monkeypatch):
    """The control: no seccomp filter, nothing of /proc or /dev hidden."""
    def switched_off():
        raise seccomp.SeccompUnavailable("switched off by the test")
    monkeypatch.setattr(seccomp, "program_fd", switched_off)
    monkeypatch.setattr(mounts, "HIDDEN_FOLDERS", ())
    monkeypatch.setattr(mounts, "HIDDEN_FILES", ())


def start_probe(tmp_path: Path, *arguments: str, name: str = "probe", **options):
    """The probe in the sandbox, as a bot of its own; (the process, its log's path)."""
    log = tmp_path / f"{name}.log"
    return sandbox.spawn([sys.executable, "probe.py", *arguments], BOT, env={},
                         log_path=log, **options), log


def run_probe(tmp_path: Path, *arguments: str, name: str = "probe", **options) -> Path:
    """Runs the probe to its end; its log's path."""
    bot, log = start_probe(tmp_path, *arguments, name=name, **options)
    try:
        assert bot.wait(60) == 0, log.read_text()
    finally:
        bot.kill()
    return log


def outcomes(text: str) -> dict[str, str]:
    """{probe name: outcome} of the probe's `channels: NAME: OUTCOME` lines."""
    return dict(re.findall(r"^channels: (.+): (open|closed \(\w+\))$", text, re.MULTILINE))


def wait_for(log: Path, pattern: str, timeout: float = 30) -> str:
    """The first match of `pattern` in the log, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text() if log.exists() else "")
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError(f"the probe never wrote {pattern!r}: "
                         f"{log.read_text() if log.exists() else '(no log)'}")


def test_every_channel_probe_is_closed_and_what_runtimes_need_stays_open(tmp_path):
    seen = outcomes(run_probe(tmp_path).read_text())
    assert set(CLOSED_WITH) == set(probe.PROBES)   # the table above names every probe
    assert {name: seen.get(name) for name in probe.PROBES} == {
        name: f"closed ({code})" for name, code in CLOSED_WITH.items()}
    assert {name: seen.get(name) for name in probe.HONEST} == {
        name: "open" for name in probe.HONEST}


def test_without_the_protections_every_channel_probe_is_open(tmp_path, protections_off):
    seen = outcomes(run_probe(tmp_path).read_text())
    expected = {name: "open" for name in {**probe.PROBES, **probe.HONEST}}
    # The kernel itself refuses cachestat on a file the caller may not write (since 6.5),
    # so the filter's ENOSYS only stands in front of that.
    expected["cachestat"] = "closed (EPERM)"
    for name in probe.PROBES:
        if name.startswith("read /proc/") and not os.path.exists(name.removeprefix("read ")):
            expected[name] = "closed (ENOENT)"   # a kernel without it (no PSI, say)
    if resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] < 2 * 4096:   # bots inherit it
        for name in ("mlock", "mlock2", "mlockall"):
            expected[name] = "closed (EPERM)"   # the rlimit alone forbids it here
    if not host_has_vsock():
        for name in ("socket AF_VSOCK", "socket AF_VSOCK, high bits set"):
            expected[name] = "closed (EAFNOSUPPORT)"   # the host has no VM sockets at all
    assert seen == expected


def sent_and_received(tmp_path: Path, sender: tuple[str, ...], sent: str,
                      receiver: tuple[str, ...], received: str,
                      **options) -> tuple[str, str]:
    """One sandboxed probe (`sender`: its mode and arguments) acts on the host's shared state
    and waits; while it waits, another (`receiver`) looks: (the sender's line matching `sent`,
    the receiver's matching `received`). `options` go to both spawns."""
    bot, log = start_probe(tmp_path, *sender, name="sender", **options)
    try:
        sender_line = wait_for(log, sent)
        receiver_line = wait_for(run_probe(tmp_path, *receiver, name="receiver", **options),
                                 received, 1)
    finally:
        bot.kill()
    return sender_line, receiver_line


def lock_seen_by_another_process(tmp_path: Path) -> tuple[str, str]:
    """One sandboxed process takes an exclusive flock on a file every sandbox sees, another
    tries it: (what the holder got, what the other found)."""
    return sent_and_received(tmp_path, ("hold-lock",), r"hold lock: .*", ("try-lock",),
                             r"the lock is .*")


def test_a_lock_held_by_one_process_is_never_seen_by_another(tmp_path):
    held, found = lock_seen_by_another_process(tmp_path)
    assert held == "hold lock: closed (ENOLCK)"
    assert found == "the lock is closed (ENOLCK)"


def test_without_the_filter_a_lock_carries_a_bit_between_processes(tmp_path, protections_off):
    held, found = lock_seen_by_another_process(tmp_path)
    assert held == "hold lock: open"
    assert found == "the lock is held"


def ptys_counted_by_another_process(tmp_path: Path) -> tuple[str, str]:
    """One sandboxed process opens 8 ptys and keeps them, another reads the host's count."""
    return sent_and_received(tmp_path, ("open-ptys", "8"), r"(opened 8 ptys|openpty: .*)",
                             ("pty-count",), r"(ptys open on the host|pty count): .*")


def test_ptys_can_be_neither_opened_nor_counted(tmp_path):
    opened, counted = ptys_counted_by_another_process(tmp_path)
    assert opened == "openpty: closed (ENOENT)"
    assert counted == "pty count: closed (ENOENT)"


def test_without_the_hidden_paths_ptys_opened_by_one_process_are_counted_by_another(
        tmp_path, protections_off):
    opened, counted = ptys_counted_by_another_process(tmp_path)
    assert opened == "opened 8 ptys"
    assert int(counted.rpartition(" ")[2]) >= 8


BITS = "10110010"


@pytest.fixture
def page_file(tmp_path) -> Path:
    """A 1 MiB file of the test's own, on disk, that both probes see: it stands for the large
    read-only files under /usr of the attack in issue 20 (the page cache works alike), where
    other processes of the host could load or evict the pages that carry the bits."""
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "pages"
    with open(path, "wb") as file:
        file.write(os.urandom(1 << 20))
        os.fsync(file.fileno())   # clean pages: only those can be evicted
    kind = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    if kind.stdout.strip() in ("tmpfs", "ramfs"):
        pytest.skip(f"{path} is on {kind.stdout.strip()}, whose pages are its storage: they "
                    "cannot be evicted, so the control cannot pass a bit")
    return path


def bits_through_the_page_cache(tmp_path: Path, page_file: Path) -> tuple[str, str]:
    """One sandboxed process leaves 8 pages of a file both see cached or evicted (the attack
    of issue 20, which named a whole hand), another reads them with mincore."""
    return sent_and_received(
        tmp_path, ("send-bits", BITS, str(page_file)), r"(sent \d+|send: .*)",
        ("receive-bits", str(len(BITS)), str(page_file)), r"(received \d+|receive: .*)",
        bind_rw=[page_file.parent])


def test_no_bit_passes_through_the_page_cache(tmp_path, page_file):
    sent, received = bits_through_the_page_cache(tmp_path, page_file)
    assert sent == "send: closed (EINVAL)"
    assert received == "receive: closed (EPERM)"   # mincore


def test_without_the_filter_bits_pass_through_the_page_cache(tmp_path, page_file,
                                                            protections_off):
    sent, received = bits_through_the_page_cache(tmp_path, page_file)
    assert sent == f"sent {BITS}"
    assert received == f"received {BITS}"


def test_the_channels_bot_plays_a_full_match_with_every_channel_closed(tmp_path):
    """The probe as a bot's start-up, through the arena's own bot host and a real match."""
    with BotHost(log_dir=tmp_path / "logs") as host:
        spec = BotSpec.load(BOT)
        seat = host.seat(spec)
        try:
            record = play_match("mandala", 2, {}, 5, [seat, StrategySeat("random", "mandala")],
                                TimeControl(move_time=1.0, startup=20.0))
        finally:
            seat.close()
        log = host.log_path(spec).read_text()
    assert record["result"]["end"] == "normal", record["result"]
    seen = outcomes(re.sub(r"^[^|\n]*\| ", "", log, flags=re.MULTILINE))   # tags off
    assert {name: seen.get(name) for name in probe.PROBES} == {
        name: f"closed ({code})" for name, code in CLOSED_WITH.items()}
