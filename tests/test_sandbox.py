"""The bot sandbox, with real bubblewrap and real processes: what a bot can and cannot do.

Each test runs a small Python program as the bot (`python -c CODE` in a bot folder) and checks
what the host sees: its listeners, its files, its process table, the bot's log.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena import sandbox
from arena.bench.sandbox import BUSY_BOT
from arena.sandbox import GiB, MiB, Limits, SandboxUnavailable, cgroups, mounts

pytestmark = pytest.mark.sandbox


@pytest.fixture
def bot_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "own.txt").write_text("the bot's own file\n")
    return folder


def start_bot(bot_dir: Path, code: str, *, limits: Limits = Limits(), **options):
    """Starts `code` as a sandboxed bot; (the SandboxedProcess, its log's path)."""
    log = bot_dir.parent / "bot.log"
    return sandbox.spawn([sys.executable, "-c", textwrap.dedent(code)], bot_dir, env={},
                         limits=limits, log_path=log, **options), log


def run_bot(bot_dir: Path, code: str, *, timeout: float = 30, **options) -> tuple[int, str]:
    """Runs `code` as a sandboxed bot to its end; (exit status, its log)."""
    bot, log = start_bot(bot_dir, code, **options)
    try:
        status = bot.wait(timeout)
    finally:
        bot.kill()
    return status, log.read_text(errors="replace")


def wait_for_line(log: Path, text: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.02)
    raise AssertionError(f"bot never wrote {text!r}; log: {log.read_text(errors='replace')}")


def is_running(pid: int) -> bool:
    """True while `pid` is a live process (a zombie awaiting its reaper counts as ended).

    Read here from /proc, not with sandbox.running: the check must not be the code it checks.
    """
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and is_running(
                        int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


# -- what the bot can reach ------------------------------------------------------------------

def test_no_network_the_hosts_loopback_listener_sees_nothing(bot_dir):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        status, log = run_bot(bot_dir, f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2)
                print("connected")
            except OSError as error:
                print("no connection:", error)
            """)
        listener.settimeout(0.3)
        with pytest.raises(socket.timeout):
            listener.accept()
    assert status == 0
    assert "no connection" in log and "connected\n" not in log


def test_a_planted_file_outside_the_bot_folder_cannot_be_read(bot_dir, tmp_path):
    secret = tmp_path / "planted-secret.txt"
    secret.write_text("do not read\n")
    status, log = run_bot(bot_dir, f"""
        try:
            print("read:", open({str(secret)!r}).read())
        except OSError as error:
            print("refused:", type(error).__name__)
        """)
    assert status == 0
    assert "refused: FileNotFoundError" in log and "do not read" not in log


def test_the_host_beyond_system_and_python_is_invisible(bot_dir):
    repo_root = Path(sandbox.__file__).resolve().parent.parent
    home = Path.home()
    status, log = run_bot(bot_dir, f"""
        import json, os
        home = {str(home)!r}
        print(json.dumps({{
            "repo visible": os.path.exists({str(repo_root / "pyproject.toml")!r}),
            "home holds": sorted(os.listdir(home)) if os.path.isdir(home) else [],
            "top level": sorted(os.listdir("/")),
        }}))
        """)
    assert status == 0, log
    seen = json.loads(log)
    assert seen["repo visible"] is False
    python_top = Path(sys.prefix).parts[1]  # e.g. "root" for a pyenv Python under /root
    assert set(seen["top level"]) <= {"bin", "bot", "dev", "etc", "lib", "lib32", "lib64",
                                      "libx32", "opt", "proc", "sbin", "tmp", "usr", python_top}
    # Of a home, at most the way to the Python installation.
    way_to_python = ([Path(sys.prefix).relative_to(home).parts[0]]
                     if Path(sys.prefix).is_relative_to(home) else [])
    assert seen["home holds"] == way_to_python


def test_the_arenas_own_editable_install_hook_is_covered(bot_dir):
    # `pip install -e .` (the README's set-up) leaves a .pth in the site folder that every
    # Python start runs, importing a finder that maps `arena` to the host's checkout. Inside,
    # the arena comes from LIB_DIR: the hook would only tell the bot where the host keeps the
    # repository, and cost its start the finder's imports.
    hooks = [str(path) for path in mounts.own_install_hooks(mounts.python_dirs())]
    if any(name.startswith("__editable___arena_") for name in sys.modules):
        assert len(hooks) == 2, hooks   # this Python ran the hook: the bot's would too
    status, log = run_bot(bot_dir, f"""
        import json, sys
        print(json.dumps({{"read": [open(hook).read() for hook in {hooks!r}],
                           "loaded": sorted(name for name in sys.modules
                                            if "editable" in name)}}))
        """)
    assert status == 0, log
    seen = json.loads(log)
    assert seen == {"read": [""] * len(hooks), "loaded": []}, seen


def test_the_bot_imports_the_arena_and_engine_packages_and_sees_nothing_else_of_the_repo(
        bot_dir):
    status, log = run_bot(bot_dir, f"""
        import os
        import arena, arena.errors, engine.core
        print("arena at", arena.__file__)
        print("engine at", engine.__file__)
        print("beside them:", sorted(os.listdir({sandbox.LIB_DIR!r})))
        """)
    assert status == 0, log
    assert f"arena at {sandbox.LIB_DIR}/arena/__init__.py" in log
    assert f"engine at {sandbox.LIB_DIR}/engine/__init__.py" in log
    assert "beside them: ['arena', 'engine']" in log  # no results, no bots, no tests


def test_its_own_folder_is_read_only(bot_dir):
    status, log = run_bot(bot_dir, """
        print(open("own.txt").read().strip())
        try:
            open("own.txt", "a").write("changed")
        except OSError as error:
            print("write refused:", error.strerror)
        """)
    assert status == 0
    assert "the bot's own file" in log and "write refused" in log
    assert (bot_dir / "own.txt").read_text() == "the bot's own file\n"


def test_another_bots_folder_cannot_be_written(bot_dir, tmp_path):
    other = tmp_path / "other_bot"
    other.mkdir()
    (other / "bot.py").write_text("print('other bot')\n")
    status, log = run_bot(bot_dir, f"""
        try:
            open({str(other / "bot.py")!r}, "w").write("hijacked")
            print("wrote")
        except OSError as error:
            print("refused:", type(error).__name__)
        """)
    assert status == 0 and "refused" in log
    assert (other / "bot.py").read_text() == "print('other bot')\n"


def test_its_tmp_is_writable_private_and_capped(bot_dir):
    marker = "/tmp/arena-sandbox-test-marker"
    status, log = run_bot(bot_dir, f"""
        import multiprocessing
        open({marker!r}, "w").write("scratch")
        print("tmp holds:", open({marker!r}).read())
        multiprocessing.Lock()  # a POSIX semaphore, in /dev/shm
        try:
            with open("/tmp/big", "wb") as big:
                for _ in range(16):
                    big.write(bytes(1 << 20))
            print("wrote 16 MiB")
        except OSError as error:
            print("full:", error.strerror)
        """, limits=Limits(tmp_bytes=4 * MiB))
    assert status == 0, log
    assert "tmp holds: scratch" in log and "full: No space left on device" in log
    assert not os.path.exists(marker)


def test_a_socket_is_reachable_while_its_private_folder_stays_closed(bot_dir, tmp_path):
    private = tmp_path / "sock"
    private.mkdir(mode=0o700)
    (private / "neighbour.txt").write_text("next to the socket")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(private / "arena.sock"))
        server.listen()
        status, log = run_bot(bot_dir, f"""
            import os, socket
            client = socket.socket(socket.AF_UNIX)
            client.connect({str(private / "arena.sock")!r})
            client.sendall(b"hello")
            print("folder holds:", os.listdir({str(private)!r}))
            for attempt in (lambda: os.unlink({str(private / "arena.sock")!r}),
                            lambda: open({str(private / "planted")!r}, "w")):
                try:
                    attempt()
                    print("changed the folder")
                except OSError as error:
                    print("refused:", error.strerror)
            """, sockets=[private / "arena.sock"])
        server.settimeout(2)
        connection, _ = server.accept()
        assert connection.recv(5) == b"hello"
        connection.close()
    assert status == 0, log
    assert "folder holds: ['arena.sock']" in log  # the socket alone, not its neighbours
    assert log.count("refused:") == 2 and "changed the folder" not in log
    assert private.stat().st_mode & 0o777 == 0o700
    assert sorted(path.name for path in private.iterdir()) == ["arena.sock", "neighbour.txt"]


def test_a_bind_rw_folder_is_writable(bot_dir, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    status, log = run_bot(bot_dir, f"open({str(shared / 'note')!r}, 'w').write('x')",
                          bind_rw=[shared])
    assert status == 0, log
    assert (shared / "note").read_text() == "x"


# -- resource limits ---------------------------------------------------------------------------

def test_a_bot_touching_4_gib_is_killed_for_memory_under_the_default_1_gib_limit(bot_dir):
    bot, log = start_bot(bot_dir, """
        block = bytearray(4 << 30)   # every page written: resident, not just reserved
        print("allocated")
        """)
    try:
        status = bot.wait(60)
    finally:
        bot.kill()
    assert status == 128 + signal.SIGKILL
    assert "allocated" not in log.read_text()
    assert bot.memory_killed() is True
    assert bot.death() == "killed for going over its memory limit"


@pytest.mark.serial   # a CPU limit, timed: with nothing beside it
def test_the_cpu_limit_ends_a_busy_bot(bot_dir):
    started = time.monotonic()
    status, log = run_bot(bot_dir, "while True: pass", limits=Limits(cpu_seconds=1))
    elapsed = time.monotonic() - started
    assert status in (128 + signal.SIGXCPU, 128 + signal.SIGKILL)
    assert elapsed < 10


def test_file_size_and_open_file_limits(bot_dir):
    status, log = run_bot(bot_dir, """
        try:
            with open("/tmp/big", "wb") as big:
                big.write(bytes(2 << 20))
            print("wrote 2 MiB")
        except OSError as error:
            print("file:", error.strerror)
        files = []
        try:
            for _ in range(100):
                files.append(open("/dev/null"))
            print("opened 100")
        except OSError as error:
            print("open files:", error.strerror)
        """, limits=Limits(file_size_bytes=1 * MiB, open_files=32))
    assert status == 0, log
    assert "file: File too large" in log and "open files: Too many open files" in log


def test_a_fork_bomb_is_contained_and_fully_killed(bot_dir):
    bot, log = start_bot(bot_dir, """
        import os, time
        print("bombing", flush=True)
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.01)
        """, limits=Limits(processes=16))
    try:
        wait_for_line(log, "bombing")
        time.sleep(1.0)
        during = bot.pids()
        # 16 processes of the bot's uid, plus the sandbox's own (bwrap and its init).
        assert 2 < len(during) <= 16 + 2
        assert subprocess.run(["true"]).returncode == 0  # the host can still start processes
    finally:
        bot.kill()
    assert not [pid for pid in during if is_running(pid)]
    assert bot.pids() == set()


@pytest.mark.parametrize("unsafe", [False, True], ids=["sandboxed", "unsafe"])
def test_kill_ends_a_daemonised_grandchild(bot_dir, unsafe):
    marker = f"daemon-marker-{os.getpid()}-{time.monotonic_ns()}"
    # The bot's code spells the marker in two halves, so that only the daemon's command line
    # holds it whole: the bot and its short-lived middle child must not match.
    bot, log = start_bot(bot_dir, f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                          {marker[:7]!r} + {marker[7:]!r}])
            os._exit(0)
        print("daemonised", flush=True)
        time.sleep(600)
        """, unsafe=unsafe)
    try:
        wait_for_line(log, "daemonised")
        deadline = time.monotonic() + 10
        while not processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        daemons = processes_with(marker)
        assert len(daemons) == 1 and set(daemons) <= bot.pids()
    finally:
        bot.kill()
    assert not [pid for pid in daemons if is_running(pid)]


def test_a_daemon_dies_with_a_bot_that_exits_on_its_own(bot_dir):
    marker = f"orphan-marker-{os.getpid()}-{time.monotonic_ns()}"
    status, log = run_bot(bot_dir, f"""
        import os, sys
        if os.fork() == 0:
            os.setsid()
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                      {marker!r}])
        print("leaving a daemon behind")
        """)
    assert status == 0
    assert processes_with(marker) == []


def test_a_1_gib_stderr_flood_keeps_the_log_within_its_cap(bot_dir):
    cap = 256 * 1024
    started = time.monotonic()
    status, log = run_bot(bot_dir, """
        import os
        block = b"x" * (1 << 20)
        for _ in range(1024):
            os.write(2, block)
        print("flooded", flush=True)
        """, log_cap_bytes=cap, timeout=60)
    elapsed = time.monotonic() - started
    print(f"1 GiB through the log drain in {elapsed:.2f} s")
    assert status == 0
    size = (bot_dir.parent / "bot.log").stat().st_size
    assert cap <= size <= cap + 200
    assert log.count("log truncated") == 1 and "flooded" not in log
    assert elapsed < 30


def test_two_processes_flooding_one_log_fill_it_to_its_cap_and_note_it_once(bot_dir):
    """Two processes of one bot share its log (same bot in two seats, or two league
    workers): together they fill it to its cap, not a byte more, and one of them notes it."""
    cap = 256 * 1024
    code = """
        import os
        block = b"x" * (1 << 20)
        for _ in range(64):
            os.write(2, block)
        """
    bots = [start_bot(bot_dir, code, log_cap_bytes=cap)[0] for _ in range(2)]
    try:
        assert [bot.wait(60) for bot in bots] == [0, 0]
    finally:
        for bot in bots:
            bot.kill()
    log = (bot_dir.parent / "bot.log").read_bytes()
    note = f"\n[arena: log truncated at {cap} bytes; later output discarded]\n".encode()
    assert len(log) == cap + len(note) and log.endswith(note)
    assert log.count(b"log truncated") == 1


def test_a_log_already_full_stays_full(bot_dir):
    log = bot_dir.parent / "bot.log"
    log.write_bytes(b"y" * 2000)
    status, text = run_bot(bot_dir, "print('one more run')", log_cap_bytes=1000)
    assert status == 0 and log.stat().st_size == 2000 and "one more run" not in text


# -- starting and ending -----------------------------------------------------------------------

def test_exit_status_and_kill_are_reported(bot_dir):
    status, _ = run_bot(bot_dir, "import sys; sys.exit(3)")
    assert status == 3
    bot, _ = start_bot(bot_dir, "import time; time.sleep(600)")
    assert bot.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        bot.wait(0.2)
    bot.kill()
    assert bot.returncode is not None and bot.pids() == set()
    bot.kill()  # ending an ended bot is harmless


@pytest.mark.parametrize("unsafe", [False, True], ids=["sandboxed", "unsafe"])
def test_the_bot_dies_with_the_arena(bot_dir, unsafe):
    """An arena process killed outright takes its bot along (bwrap's --die-with-parent)."""
    arena = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from arena import sandbox
        bot = sandbox.spawn([sys.executable, "-c", "import time; time.sleep(600)"],
                            {str(bot_dir)!r}, env={{}}, log_path={str(bot_dir.parent / "log")!r},
                            unsafe={unsafe!r})
        time.sleep(0.3)
        print(" ".join(map(str, bot.pids())), flush=True)
        time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(pid) for pid in arena.stdout.readline().split()]
        assert pids
    finally:
        arena.kill()
        arena.wait()
    deadline = time.monotonic() + 5
    while any(is_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in pids if is_running(pid)]


@pytest.mark.parametrize("unsafe", [False, True], ids=["sandboxed", "unsafe"])
def test_a_bot_dies_with_an_arena_killed_while_the_sandbox_is_still_starting(bot_dir, unsafe):
    """The arena dies the instant spawn() returns, before bwrap (or the unsafe wrapper) has
    set up dying with its parent: nothing of the bot may outlive it (it would sleep for 10
    minutes). On a busy machine this window is wide: the test failed most runs under load
    while only bwrap's --die-with-parent (even under setpriv --pdeathsig) guarded it."""
    marker = f"startup-window-{os.getpid()}-{time.monotonic_ns()}"
    arena = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os, signal, sys
        from arena import sandbox
        sandbox.spawn([sys.executable, "-c", "import time; time.sleep(600)", {marker!r}],
                      {str(bot_dir)!r}, env={{}}, log_path={str(bot_dir.parent / "log")!r},
                      unsafe={unsafe})
        os.kill(os.getpid(), signal.SIGKILL)
        """)], timeout=60)
    assert arena.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


def command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:   # it ended
        return b""


def test_a_bot_dressed_as_a_reaper_is_not_taken_for_one(bot_dir):
    """Sweeps leave a gone arena's bots to its reaper when one is at work, and know a reaper by
    its command line: a bot that copies one (its arena's pid after the reaper's path) must
    not pass, or it could outlive its arena unswept. Its pid namespace gives it away; the
    same command line outside any sandbox is taken for a reaper."""
    from arena.sandbox import reaper
    owner = 2**22 + 17   # above any pid this machine gives (pid_max is at most 2**22)

    def dressed(arena_pid: int) -> list[str]:
        return [sys.executable, "-c", "import time; time.sleep(600)",
                os.path.abspath(reaper.__file__), str(arena_pid)]
    bot = sandbox.spawn(dressed(owner), bot_dir, env={}, log_path=bot_dir.parent / "log")
    outside = subprocess.Popen(dressed(owner + 1))

    def dressed_up() -> bool:   # the bot itself, not bwrap or the init, whose lines hold it too
        return any(command_line(pid).split(b"\0")[1:5] == [arg.encode() for arg in
                                                            dressed(owner)[1:]]
                   for pid in bot.pids())
    try:
        deadline = time.monotonic() + 30
        while not dressed_up() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert dressed_up(), "the dressed bot never started"
        found = reaper.reapers()
        assert owner not in found and found.get(owner + 1) == outside.pid
    finally:
        bot.kill()
        outside.kill()   # by pid: the test's own
        outside.wait()


def test_a_missing_command_exits_127_with_a_log_line(bot_dir):
    log = bot_dir.parent / "bot.log"
    bot = sandbox.spawn(["no-such-bot-program"], bot_dir, env={}, log_path=log)
    assert bot.wait(10) == 127
    bot.kill()
    assert "cannot run 'no-such-bot-program'" in log.read_text()


def test_without_bwrap_on_path_spawning_names_the_package_and_the_escape_hatch(
        bot_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert sandbox.available() is False
    with pytest.raises(SandboxUnavailable, match="bwrap.* is not on PATH"):
        sandbox.require()
    with pytest.raises(SandboxUnavailable) as raised:
        sandbox.spawn(["python", "-c", "pass"], bot_dir, env={}, log_path=tmp_path / "log")
    message = str(raised.value)
    assert "bubblewrap" in message and "--unsafe-no-sandbox" in message
    assert "\n" not in message


def test_unsafe_mode_keeps_the_limits(bot_dir):
    bot, _ = start_bot(bot_dir, "bytearray(4 << 30)", unsafe=True)
    try:
        bot.wait(60)
    finally:
        bot.kill()
    assert bot.memory_killed() is True


def test_bad_arguments_are_one_clear_error(bot_dir, tmp_path):
    with pytest.raises(sandbox.SandboxError, match="does not exist"):
        sandbox.spawn(["python"], tmp_path / "missing", env={}, log_path=tmp_path / "log")
    with pytest.raises(sandbox.SandboxError, match="not a Unix socket: start the server"):
        sandbox.spawn(["python"], bot_dir, env={}, sockets=[tmp_path / "no.sock"],
                      log_path=tmp_path / "log")
    with pytest.raises(sandbox.SandboxError, match="empty"):
        sandbox.spawn([], bot_dir, env={}, log_path=tmp_path / "log")


def test_limits_default_to_one_gib_of_memory():
    assert Limits().memory_bytes == GiB and Limits().tmp_bytes >= MiB


# -- kernel state shared beyond the sandbox, and cgroups ------------------------------------------

needs_memory_cgroup = pytest.mark.skipif(
    "memory" not in cgroups.placement().folders,
    reason=f"no memory cgroup for bots here: {cgroups.placement().missing.get('memory')}")
needs_freezer = pytest.mark.skipif(
    "freezer" not in cgroups.placement().folders,
    reason=f"no freezer cgroup for bots here: {cgroups.placement().missing.get('freezer')}")

KEYRING_NOTE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_keyctl = 248, 250
KEY_SPEC_USER_KEYRING = ctypes.c_long(-4)
key = libc.syscall(SYS_add_key, b"user", b"{note}", b"hello from a bot", 16, KEY_SPEC_USER_KEYRING)
print("add_key", key, os.strerror(ctypes.get_errno()), flush=True)
KEYCTL_SETPERM, everyone = 5, 0x3f3f3f3f
print("keyctl", libc.syscall(SYS_keyctl, KEYCTL_SETPERM, key, everyone),
      os.strerror(ctypes.get_errno()), flush=True)
"""


def test_a_keyring_note_left_by_a_bot_is_never_read_by_a_later_process(bot_dir):
    note = f"arena-note-{os.getpid()}-{time.monotonic_ns()}"
    status, log = run_bot(bot_dir, KEYRING_NOTE.format(note=note))
    assert status == 0, log
    assert "add_key -1 Operation not permitted" in log
    status, later = run_bot(bot_dir, f"""
        import os
        keys = open("/proc/keys").read() if os.path.exists("/proc/keys") else ""
        print("found" if {note!r} in keys else "nothing")
        """)
    assert status == 0 and "nothing" in later, later
    host_keys = Path("/proc/keys").read_text() if Path("/proc/keys").exists() else ""
    assert note not in host_keys


def test_new_namespaces_io_uring_and_keyrings_fail_with_eperm(bot_dir):
    status, log = run_bot(bot_dir, """
        import ctypes, errno, os, subprocess
        libc = ctypes.CDLL(None, use_errno=True)
        def errno_of(result):
            return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
        CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
        print("unshare(CLONE_NEWUSER)", errno_of(libc.unshare(CLONE_NEWUSER)))
        print("unshare(CLONE_NEWNS)", errno_of(libc.unshare(CLONE_NEWNS)))
        params = ctypes.create_string_buffer(120)
        print("io_uring_setup", errno_of(libc.syscall(425, 8, params)))
        print("add_key", errno_of(libc.syscall(248, b"user", b"k", b"v", 1, ctypes.c_long(-4))))
        print("bpf", errno_of(libc.syscall(321, 0, None, 0)))
        print("ptrace", errno_of(libc.syscall(101, 16, 1, None, None)))
        done = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
        print("unshare -U:", done.returncode, done.stderr.strip())
        done = subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True)
        print("bwrap inside:", "runs" if done.returncode == 0 else "refused")
        print("fork still works:", subprocess.run(["true"]).returncode)
        """)
    assert status == 0, log
    for call in ("unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)", "io_uring_setup", "add_key",
                 "bpf", "ptrace"):
        assert f"{call} EPERM" in log, log
    assert "unshare -U: 1 unshare: unshare failed: Operation not permitted" in log
    assert "bwrap inside: refused" in log
    assert "fork still works: 0" in log


@pytest.mark.skipif(not (shutil.which("node") and shutil.which("java")),
                    reason="needs node and java (apt-get install nodejs default-jre-headless)")
def test_honest_runtimes_start_threads_node_java_and_which(bot_dir):
    status, log = run_bot(bot_dir, """
        import subprocess, threading
        threads = [threading.Thread(target=threading.Event().wait, args=(0.5,))
                   for _ in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print("50 threads ran", flush=True)
        for command in (["node", "-e", "console.log('node', require('os').userInfo().username)"],
                        ["java", "-version"], ["java", "-XX:-UsePerfData", "-version"],
                        ["which", "node"]):
            done = subprocess.run(command, capture_output=True, text=True)
            print(" ".join(command[:2]), "status", done.returncode,
                  (done.stdout + done.stderr).strip()[:80], flush=True)
        """)
    assert status == 0, log
    assert "50 threads ran" in log
    assert "node -e status 0 node bot" in log
    # The JVM runs; it only warns that it cannot lock its perf-data file (locks are denied:
    # SECURITY.md), which -XX:-UsePerfData leaves out.
    assert "java -version status 0 " in log
    assert "java -XX:-UsePerfData status 0 openjdk version" in log
    assert "which node status 0 /usr/bin/node" in log


def test_the_bots_etc_holds_only_what_runtimes_read_and_its_own_user(bot_dir):
    status, log = run_bot(bot_dir, """
        import json, os
        bound = {}
        for name in ("ssl/certs", "alternatives"):
            try:
                open(f"/etc/{name}/arena-bot-was-here", "w")
                bound[name] = "writable"
            except OSError:
                bound[name] = sorted(os.listdir(f"/etc/{name}"))
        print(json.dumps({"etc": sorted(os.listdir("/etc")), "bound": bound,
                          "passwd": open("/etc/passwd").read(), "uid": os.getuid()}))
        """)
    assert status == 0, log
    seen = json.loads(log)
    assert {"ld.so.cache", "passwd", "group", "nsswitch.conf"} <= set(seen["etc"])
    assert not {"shadow", "hostname", "ssh", "sudoers"} & set(seen["etc"])
    assert f":{seen['uid']}:" in seen["passwd"]
    # The certificates and the alternatives are the host's own, bound read-only.
    for name, listing in seen["bound"].items():
        assert listing == sorted(os.listdir(f"/etc/{name}")), name


@needs_memory_cgroup
def test_all_processes_of_a_bot_together_stay_within_its_memory_limit(bot_dir):
    """Three children of 60 MiB each and 60 MiB of memfds (four: each file is capped at the
    16 MiB file size limit) under a 128 MiB limit: the kernel kills before their sum passes
    the limit (the bot's resident memory, sampled, stays within 10%)."""
    limit = 128 * MiB
    bot, log = start_bot(bot_dir, """
        import mmap, os, time
        MiB = 1 << 20
        def hold(size):
            block = bytearray(size)   # every page written
            time.sleep(30)
        maps = []
        for _ in range(4):
            fd = os.memfd_create("hoard")
            os.ftruncate(fd, 15 * MiB)
            maps.append(mmap.mmap(fd, 15 * MiB))
            maps[-1].write(b"x" * (15 * MiB))
        print("memfds filled", flush=True)
        for _ in range(3):
            if os.fork() == 0:
                hold(60 * MiB)
                os._exit(0)
            time.sleep(0.3)
        print("children started", flush=True)
        for _ in range(3):
            os.wait()
        print("all children ended on their own", flush=True)
        """, limits=Limits(memory_bytes=limit))
    most = 0
    try:
        deadline = time.monotonic() + 30
        while bot.poll() is None and time.monotonic() < deadline:
            most = max(most, sum(proportional_bytes(pid) for pid in bot.pids()))
            time.sleep(0.02)
        bot.wait(30)
    finally:
        bot.kill()
    assert "memfds filled" in log.read_text()
    assert bot.memory_killed() is True
    assert 0 < most <= limit * 1.1, most


def proportional_bytes(pid: int) -> int:
    """The resident memory of a process with each shared page (the memfds the children
    inherit, the interpreter) divided among the processes that map it (Pss), so a sum over
    processes counts each page once; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@needs_memory_cgroup
def test_tmpfs_files_count_in_the_bots_memory(bot_dir):
    status, log = run_bot(bot_dir, """
        for part in range(4):   # 15 MiB each: under the 16 MiB file size limit
            with open(f"/dev/shm/hoard{part}", "wb") as hoard:
                hoard.write(bytes(15 << 20))
        print("wrote 60 MiB to /dev/shm", flush=True)
        block = bytearray(60 << 20)
        print("and 60 MiB more in memory", flush=True)
        """, limits=Limits(memory_bytes=96 * MiB, tmp_bytes=64 * MiB))
    assert status == 128 + signal.SIGKILL, log
    assert "wrote 60 MiB to /dev/shm" in log and "and 60 MiB more" not in log


def cpu_stopped_and_thawed(bot_dir: Path, stop: str = "freeze", stopped_for: float = 0.5
                          ) -> tuple[float, float, sandbox.SandboxedProcess]:
    """CPU seconds a bot spinning in four threads uses in `stopped_for` seconds stopped
    (`stop`: "freeze" or "hold"), then in 0.5 s thawed; and the bot (ended)."""
    bot, log = start_bot(bot_dir, BUSY_BOT)
    try:
        wait_for_line(log, "busy")
        time.sleep(0.3)
        bot.freeze() if stop == "freeze" else bot.hold()
        time.sleep(0.05)   # a process stopped by a signal settles its CPU time
        stopped_at = bot.cpu_seconds()
        time.sleep(stopped_for)
        while_stopped = bot.cpu_seconds() - stopped_at
        bot.thaw()
        time.sleep(0.5)
        while_thawed = bot.cpu_seconds() - stopped_at - while_stopped
        assert bot.poll() is None
    finally:
        bot.kill()
    return while_stopped, while_thawed, bot


@needs_freezer
@pytest.mark.serial   # CPU used in 0.5 s: measured with nothing beside it
def test_a_frozen_bot_uses_no_cpu_and_thaws_where_it_was(bot_dir):
    while_frozen, while_thawed, _ = cpu_stopped_and_thawed(bot_dir)
    assert while_frozen < 0.02, while_frozen
    assert while_thawed > 0.05, while_thawed   # it runs again (on a busy machine: some)


needs_cpu_quota = pytest.mark.skipif(
    "cpu" not in cgroups.placement().folders,
    reason=f"no cpu cgroup for bots here: {cgroups.placement().missing.get('cpu')}")


@needs_cpu_quota
@pytest.mark.serial   # CPU used in 1 s: measured with nothing beside it
def test_a_held_bot_spinning_in_four_threads_gets_its_quota_and_no_more(bot_dir):
    # Held between its turns, a bot gets the kernel's least quota, 1 ms in 100 ms, and each
    # hold hands it a fresh one: a few ms in a 0.2 s gap, whatever its threads do.
    while_held, while_thawed, bot = cpu_stopped_and_thawed(bot_dir, "hold", stopped_for=0.2)
    # The quota a hold hands it, one period's more, and what it may overrun until the
    # scheduler's tick (4 ms at 250 Hz) on each core: 2-5 ms measured, against ~0.2 s a core
    # when let run (the control below).
    assert while_held < 0.02, while_held
    assert while_thawed > 0.05, while_thawed   # the control: it spins when let run
    # The kill lifted the hold: the bot died and its cgroup went.
    assert not bot.cgroups.folders["cpu"][1].exists()


needs_freezer_v1 = pytest.mark.skipif(
    cgroups.placement().folders.get("freezer", (0,))[0] != 1,
    reason="no cgroup v1 freezer for bots here (only it has the kept-frozen cgroup)")


@needs_freezer_v1
def test_an_empty_cgroup_of_the_bot_stays_frozen_while_it_lives_and_goes_with_it(bot_dir):
    """It keeps the kernel's freezer switched on, so freezing the bot does not patch kernel
    code each time (cgroups.BotCgroups._keep_freezer_active); the bot never runs in it."""
    bot, log = start_bot(bot_dir, """
        import time
        print("up", flush=True)
        while True:
            time.sleep(0.01)
            print("tick", flush=True)
        """)
    try:
        wait_for_line(log, "up")
        kept = bot.cgroups.folders["freezer"][1] / cgroups.KEPT_FROZEN
        bot.freeze()
        bot.thaw()
        assert (kept / "freezer.state").read_text().strip() == "FROZEN"
        assert (kept / "cgroup.procs").read_text() == ""
        ticks = log.read_text().count("tick")
        deadline = time.monotonic() + 15
        while log.read_text().count("tick") <= ticks and time.monotonic() < deadline:
            time.sleep(0.02)
        assert log.read_text().count("tick") > ticks   # thawed, it runs on
    finally:
        bot.kill()
    assert not kept.exists() and not kept.parent.exists()


@needs_freezer_v1
@pytest.mark.serial   # sweeps what dead arenas left: alone, so no other test's arena
def test_a_killed_arenas_bot_cgroup_goes_with_its_kept_frozen_cgroup():
    _, arena_folder = cgroups.placement().folders["freezer"]
    gone = subprocess.Popen(["true"])
    gone.wait()
    orphan = arena_folder / f"{gone.pid}-0"
    kept = orphan / cgroups.KEPT_FROZEN
    kept.mkdir(parents=True)
    (kept / "freezer.state").write_text("FROZEN")
    try:
        sweep = cgroups.sweep_orphans()
        assert not orphan.exists()
        assert gone.pid in sweep.owners
    finally:
        for folder in (kept, orphan):
            if folder.exists():
                folder.rmdir()


@pytest.mark.serial   # CPU used in 0.5 s: measured with nothing beside it
def test_freeze_and_cpu_time_work_without_cgroups_too(bot_dir, monkeypatch):
    """Where there are no cgroups (SIGSTOP to each process, CPU time summed from /proc)."""
    monkeypatch.setattr(cgroups, "placement", lambda: cgroups.Placement(
        missing={name: "switched off by the test" for name in cgroups.CONTROLLERS}))
    while_frozen, while_thawed, bot = cpu_stopped_and_thawed(bot_dir)
    assert bot.cgroups.folders == {}
    assert while_frozen < 0.02, while_frozen
    assert while_thawed > 0.05, while_thawed


def test_a_bots_cgroups_are_made_inside_the_arenas_own_and_removed_when_it_ends(bot_dir):
    bot, log = start_bot(bot_dir, "import time; print('up', flush=True); time.sleep(600)")
    try:
        wait_for_line(log, "up")
        folders = {folder for _, folder in bot.cgroups.folders.values()}
        for _, folder in bot.cgroups.folders.values():
            assert folder.parent.name == "arena" and folder.is_dir()
            assert bot.pids() & {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}
    finally:
        bot.kill()
    assert not [folder for folder in folders if folder.exists()]


def test_a_bot_killed_by_sigkill_is_reported_as_a_signal_without_a_traceback(bot_dir):
    bot, log = start_bot(bot_dir, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    try:
        status = bot.wait(30)
    finally:
        bot.kill()
    assert status == 128 + signal.SIGKILL
    assert bot.death() == "killed by signal 9"
    assert "Traceback" not in log.read_text() and "OSError" not in log.read_text()


def unified_placement() -> cgroups.Placement:
    """This machine's placement, with freezing and CPU time moved to the cgroup v2 (unified)
    hierarchy: both are built into every v2 cgroup, controllers or not."""
    mounts, own = cgroups._cgroup_mounts(), cgroups._own_cgroups()
    if "cgroup2" not in mounts or 0 not in own:
        pytest.skip("no cgroup v2 hierarchy is mounted here")
    found = cgroups.Placement(folders={name: place for name, place in
                                       cgroups.placement().folders.items()
                                       if name not in ("freezer", "cpuacct")})
    for controller in ("freezer", "cpuacct"):
        cgroups._place(found, controller, 2, cgroups._inside(*mounts["cgroup2"], own[0][1]))
    if found.missing:
        pytest.skip(f"the cgroup v2 hierarchy cannot be used here: {found.missing}")
    return found


@pytest.mark.serial   # CPU used in 0.5 s: measured with nothing beside it
def test_on_cgroup_v2_a_frozen_bot_uses_no_cpu_and_its_cgroup_goes_with_it(bot_dir,
                                                                          monkeypatch):
    placement = unified_placement()
    monkeypatch.setattr(cgroups, "placement", lambda: placement)
    while_frozen, while_thawed, bot = cpu_stopped_and_thawed(bot_dir)
    assert while_frozen < 0.02, while_frozen
    assert while_thawed > 0.05, while_thawed
    version, folder = bot.cgroups.folders["freezer"]
    assert version == 2 and folder.parent == placement.folders["freezer"][1]
    assert not folder.exists()


@pytest.mark.skipif("memory" not in cgroups.placement().folders
                    or cgroups.placement().folders["memory"][0] != 2,
                    reason="the memory controller is not on cgroup v2 here (v1 is tested above)")
def test_on_cgroup_v2_the_memory_limit_kills_for_memory(bot_dir):
    bot, _ = start_bot(bot_dir, "bytearray(256 << 20)", limits=Limits(memory_bytes=128 * MiB))
    try:
        bot.wait(60)
    finally:
        bot.kill()
    assert bot.memory_killed() is True


def test_an_arena_out_of_file_descriptors_still_kills_its_bot(bot_dir):
    """The process scan keeps descriptors in reserve: with every other one in use (as after
    a connection flood), kill() still finds and ends every process of the bot."""
    arena = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os, resource, sys, time
        from arena import sandbox
        bot = sandbox.spawn([sys.executable, "-c", "import os, time; os.fork(); time.sleep(600)"],
                            {str(bot_dir)!r}, env={{}}, log_path={str(bot_dir.parent / "log")!r})
        time.sleep(1.0)
        pids = bot.pids()
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        hoard = []
        try:
            while True:
                hoard.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as error:
            print("out of descriptors:", error.strerror, flush=True)
        bot.kill()
        print("alive after kill:", [pid for pid in pids if sandbox.running(pid)], len(pids))
        """)], capture_output=True, text=True, timeout=60, cwd=bot_dir.parent)
    assert "out of descriptors: Too many open files" in arena.stdout, arena.stderr
    assert "alive after kill: [] " in arena.stdout, arena.stdout + arena.stderr
    assert int(arena.stdout.split()[-1]) >= 3   # bwrap, its init, the bot and its child


def test_a_bot_cgroups_name_tells_its_arena_from_a_later_process_with_its_pid():
    from arena.sandbox import reaper
    gone = subprocess.Popen(["true"])
    gone.wait()
    name = reaper.bot_cgroup_name(os.getpid(), 7)
    assert reaper.bot_cgroup_owner(name)[0] == os.getpid()
    assert not reaper.owner_gone(*reaper.bot_cgroup_owner(name))   # this very process
    assert reaper.owner_gone(os.getpid(), "1")   # its pid, but a process of another time
    assert reaper.owner_gone(gone.pid, None) and not reaper.owner_gone(os.getpid(), None)
    assert reaper.bot_cgroup_owner(f"{gone.pid}-0") == (gone.pid, None)   # an earlier name
    for other in ("kept-frozen", "12-x", "12", "1-2-3-4", ""):
        assert reaper.bot_cgroup_owner(other) is None


def test_a_reaper_takes_its_arenas_bot_cgroups_not_a_later_process_given_its_pid(tmp_path):
    # The reaper of arena 123, started at tick 456, ends the cgroups named for it (and an
    # earlier version's, named by pid alone); not those of another process given pid 123
    # after it died, nor another pid's.
    from arena.sandbox import reaper
    for name in ("123-0-456", "123-1-789", "123-2", "124-0-456"):
        (tmp_path / name).mkdir()
    assert set(reaper.owned_by([str(tmp_path)], 123, "456")) == {"123-0-456", "123-2"}
    assert set(reaper.owned_by([str(tmp_path)], 123)) == {"123-0-456", "123-1-789", "123-2"}


@pytest.mark.serial   # sweeps what dead arenas left: alone, so no other test's arena
def test_a_bot_cgroup_whose_arenas_pid_now_names_another_process_is_swept():
    """Pids are used again (32,768 on some machines): a bot cgroup is its arena's while a
    process with that pid *and start time* runs, so a bot cannot keep its cgroup looking
    owned by cycling through pids once its arena is gone."""
    from arena.sandbox import reaper
    if not cgroups.placement().folders:
        pytest.skip(f"no cgroups for bots here: {cgroups.placement().missing}")
    _, arena_folder = next(iter(cgroups.placement().folders.values()))
    reused = arena_folder / f"{os.getpid()}-999998-1"   # this pid, but started at tick 1
    ours = arena_folder / reaper.bot_cgroup_name(os.getpid(), 999999)
    reused.mkdir()
    ours.mkdir()
    try:
        sweep = cgroups.sweep_orphans()
        assert not reused.exists() and os.getpid() in sweep.owners
        assert ours.exists()
    finally:
        for folder in (reused, ours):
            if folder.exists():
                folder.rmdir()


@pytest.mark.serial   # any other arena's start would sweep the orphan first
def test_empty_bot_cgroups_of_a_killed_arena_are_removed_and_no_others(tmp_path):
    if not cgroups.placement().folders:
        pytest.skip(f"no cgroups for bots here: {cgroups.placement().missing}")
    _, arena_folder = next(iter(cgroups.placement().folders.values()))
    gone = subprocess.Popen(["true"])
    gone.wait()
    orphan = arena_folder / f"{gone.pid}-0"
    ours = arena_folder / f"{os.getpid()}-999999"
    orphan.mkdir()
    ours.mkdir()
    try:
        sweep = cgroups.sweep_orphans()
        assert not orphan.exists()
        assert gone.pid in sweep.owners
        assert ours.exists()   # a live arena's
    finally:
        for folder in (orphan, ours):
            if folder.exists():
                folder.rmdir()
