"""The sandbox when the arena does not run as root, with real bubblewrap, processes and gRPC.

Then every bot runs as the arena's own uid in a user namespace that bubblewrap makes with
`--unshare-user --disable-userns`, in which no further user namespace can be made, and the
arena cannot make cgroups in a tree that is not its user's (it plays on without them: see
SECURITY.md, "When the arena does not run as root").

As root, each test runs the arena as an unprivileged uid (`NOBODY`, through `setpriv`) in a
private mount namespace (`unshare --mount`) of its own, in which a folder others may not
enter on the way to the Python installation or the repository (`/root`, home of a pyenv
Python) is covered by an empty 0755 tmpfs that holds only the folder needed (`/root/.pyenv`,
bound back): nothing of the host changes. The arena's files (HOME, the installation key,
TMPDIR, records, logs) are in a folder that uid owns.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from arena import sandbox
from arena.sandbox import cgroups, mounts

NOBODY = 65534
"""The unprivileged uid (and gid) the arena runs as: `nobody` on Debian."""
ROOT = Path(__file__).resolve().parent.parent
USERNS_BOT = ROOT / "tests" / "misbehaving_bots" / "userns"
KILL_INIT_BOT = ROOT / "tests" / "misbehaving_bots" / "kill_init"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]


def _needed() -> list[Path]:
    """The folders the unprivileged arena reads or writes: the Python installation, the
    repository (the arena's packages, the bots), the temporary folder (its work folders)."""
    return [*mounts.python_dirs(), ROOT, Path(tempfile.gettempdir()).resolve()]


def _covers() -> dict[Path, list[Path]]:
    """folder others may not enter -> the folders in it to bind back: for each needed folder,
    the first such folder on the way to it."""
    covers: dict[Path, list[Path]] = {}
    for needed in _needed():
        for folder in reversed(needed.parents):
            if folder != Path("/") and not folder.stat().st_mode & stat.S_IXOTH:
                kept = folder / needed.relative_to(folder).parts[0]
                if kept not in covers.setdefault(folder, []):
                    covers[folder].append(kept)
                break
    return covers


def _unreachable(covers: dict[Path, list[Path]]) -> Path | None:
    """A needed folder, or one on the way to it, that others still may not enter with the
    covers in place (one deeper down: the covers do not go that far)."""
    kept = [path for paths in covers.values() for path in paths]
    for needed in _needed():
        for folder in [*reversed(needed.parents), needed]:
            if folder == Path("/") or any(folder in path.parents for path in kept):
                continue   # "/", or a cover (a 0755 tmpfs) and the folders above it
            if not folder.stat().st_mode & stat.S_IXOTH:
                return folder
    return None


class Unprivileged:
    """Runs commands as NOBODY in a private mount namespace (see the module docstring)."""

    def __init__(self, base: Path):
        lines = ["set -e"]
        for number, (cover, kept) in enumerate(_covers().items()):
            asides = [base / f"aside-{number}-{index}" for index in range(len(kept))]
            for aside, path in zip(asides, kept):   # out of the way of the cover...
                aside.mkdir()
                lines.append(f"mount --bind {shlex.quote(str(path))} {shlex.quote(str(aside))}")
            lines.append(f"mount -t tmpfs -o mode=0755,size=1m arena-test-cover "
                         f"{shlex.quote(str(cover))}")
            for aside, path in zip(asides, kept):   # ... and back into it
                lines += [f"mkdir -p {shlex.quote(str(path))}",
                          f"mount --move {shlex.quote(str(aside))} {shlex.quote(str(path))}"]
        lines.append(f'exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups -- "$@"')
        self.script = "\n".join(lines)

    def work_folder(self) -> Path:
        """A fresh folder NOBODY owns, with a home and a TMPDIR in it."""
        work = Path(tempfile.mkdtemp(prefix="arena-nonroot-"))
        for folder in (work, work / "home", work / "tmp"):
            folder.mkdir(exist_ok=True)
            os.chown(folder, NOBODY, NOBODY)
        return work

    def run(self, argv: list[str], work: Path, timeout: float = 60
            ) -> subprocess.CompletedProcess:
        env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
               "HOME": str(work / "home"), "TMPDIR": str(work / "tmp"), "LANG": "C.UTF-8",
               "ARENA_KEY_FILE": str(work / "home" / "installation.key")}
        return subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "--",
             "sh", "-c", self.script, "sh", *map(str, argv)],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def _host_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return ("needs root: it runs the arena as an unprivileged uid (setpriv) in a private "
                "mount namespace")
    missing = [tool for tool in ("setpriv", "unshare", "mount") if not shutil.which(tool)]
    if missing:
        return f"needs {', '.join(missing)} (util-linux, mount)"
    if not sandbox.available():
        return "bubblewrap cannot run here"
    folder = _unreachable(_covers())
    if folder is not None:
        return f"uid {NOBODY} cannot reach {folder}, which the arena needs"
    private = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                             capture_output=True, text=True)
    if private.returncode != 0:
        return f"cannot make a private mount namespace here: {private.stderr.strip()}"
    return None


def _kernel_skip_reason(runner: Unprivileged, work: Path) -> str | None:
    """Probed as NOBODY: can it make a user namespace, and does bwrap --disable-userns run."""
    userns = runner.run(["unshare", "--user", "true"], work)
    if userns.returncode != 0:
        return (f"the kernel refuses unprivileged user namespaces here "
                f"({userns.stderr.strip()})")
    disable = runner.run([shutil.which("bwrap"), "--unshare-user", "--disable-userns",
                          "--ro-bind", "/", "/", "true"], work)
    if disable.returncode != 0:
        return (f"bwrap --disable-userns does not run here (bubblewrap 0.8 or later has it): "
                f"{disable.stderr.strip()}")
    return None


@pytest.fixture(scope="module")
def nobody(tmp_path_factory):
    reason = _host_skip_reason()
    if reason:
        pytest.skip(reason)
    runner = Unprivileged(tmp_path_factory.mktemp("covers"))
    work = runner.work_folder()
    try:
        reason = _kernel_skip_reason(runner, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if reason:
        pytest.skip(reason)
    # The `arena` folders in the arena's own cgroups, as an arena run as root makes them: the
    # unprivileged arena finds them there and must not take them for its own.
    cgroups.placement()
    return runner


@pytest.fixture
def work(nobody):
    folder = nobody.work_folder()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def owned_by_others(folder: Path) -> list[str]:
    return [str(path) for path in [folder, *folder.rglob("*")]
            if path.lstat().st_uid != NOBODY or path.lstat().st_gid != NOBODY]


def test_a_sandboxed_match_played_by_an_unprivileged_arena_ends_normally(nobody, work):
    done = nobody.run([*ARENA, "play", "mandala", "--bot", ROOT / "sample_bots" / "random",
                       "--bot", ROOT / "sample_bots" / "greedy", "--seed", 3,
                       "--record", work / "m.json"], work)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((work / "m.json").read_text())
    assert record["result"]["end"] == "normal" and "forfeit" not in record["result"], \
        record["result"]
    assert "result: scores" in done.stdout and "end normal" in done.stdout
    assert "Traceback" not in done.stderr
    # No cgroups of its own here: one warning line per controller, never a failed bot, and
    # memory bounded per process by RLIMIT_AS instead (SECURITY.md).
    warnings = [line for line in done.stderr.splitlines() if "cgroup for bots" in line]
    assert any("no memory cgroup" in line and "RLIMIT_AS" in line for line in warnings), \
        done.stderr
    assert any("no pids cgroup" in line for line in warnings), done.stderr
    # Everything it wrote is its user's; what it kept in TMPDIR (the bots' /etc, its
    # sockets) is gone.
    assert owned_by_others(work) == []
    assert sorted(path.name.split("-")[0] for path in (work / "m.logs").iterdir()) == [
        "greedy", "random"]
    assert list((work / "tmp").iterdir()) == []


def test_inside_a_bot_of_an_unprivileged_arena_no_user_namespace_can_be_made(nobody, work):
    done = nobody.run([*ARENA, "play", "mandala", "--bot", USERNS_BOT,
                       "--bot", ROOT / "sample_bots" / "random", "--seed", 3,
                       "--record", work / "u.json"], work)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((work / "u.json").read_text())
    assert record["result"]["end"] == "normal", record["result"]
    log = next((work / "u.logs").glob("userns-*.log")).read_text()
    # The seccomp filter answers first (EPERM); bwrap's --disable-userns stands behind it
    # (see the tests below, which switch the filter off).
    assert "userns: unshare(CLONE_NEWUSER): refused (EPERM)" in log, log
    assert "userns: unshare -U: refused (unshare: unshare failed: Operation not permitted)" \
        in log, log
    assert "userns: bwrap: refused (" in log, log
    assert "made one" not in log and "not run" not in log, log


def test_a_bot_that_kills_the_init_of_its_own_uid_forfeits_with_a_crash_not_a_host_fault(
        nobody, work):
    # Here its init runs as its uid: the catchable signals are ignored, SIGKILL ends it, and
    # the init's "started" report makes that the bot's crash (tests/misbehaving_bots/kill_init).
    done = nobody.run([*ARENA, "play", "mandala", "--bot", KILL_INIT_BOT,
                       "--bot", ROOT / "sample_bots" / "random", "--seed", 3,
                       "--record", work / "k.json"], work)
    assert done.returncode == 0, done.stdout + done.stderr
    forfeit = json.loads((work / "k.json").read_text())["result"]["forfeit"]
    assert (forfeit["seat"], forfeit["reason"]) == (0, "crash"), forfeit
    assert "ended its sandbox's init" in forfeit["detail"], forfeit
    log = next((work / "k.logs").glob("kill_init-*.log")).read_text()
    # The init ignored the first four (the bot, 50 ms apart, lived on to send the next);
    # SIGKILL ended it, and with it the sandbox, often before the bot could say so.
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1"):
        assert f"kill_init: {name} sent" in log, log
    assert "Traceback" not in done.stderr


def run_probe_in_bwrap(nobody: Unprivileged, work: Path, *options: str) -> str:
    """The userns bot's probe run by bwrap itself as NOBODY, with `options` and no seccomp
    filter; its lines."""
    done = nobody.run([shutil.which("bwrap"), "--ro-bind", "/", "/", "--unshare-pid",
                       "--dev", "/dev", "--proc", "/proc", "--die-with-parent", *options,
                       "--", sys.executable, "-I", USERNS_BOT / "probe.py"], work)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_bwrap_disable_userns_alone_blocks_user_namespaces_that_are_made_without_it(
        nobody, work):
    without = run_probe_in_bwrap(nobody, work, "--unshare-user")
    assert "userns: unshare(CLONE_NEWUSER): made one" in without, without
    assert "userns: unshare -U: made one" in without, without
    blocked = run_probe_in_bwrap(nobody, work, "--unshare-user", "--disable-userns")
    assert "userns: unshare(CLONE_NEWUSER): refused (ENOSPC)" in blocked, blocked
    assert "userns: unshare -U: refused (" in blocked, blocked
    assert "made one" not in blocked, blocked


SPAWN_WITHOUT_SECCOMP = """
    import sys
    from arena import sandbox
    from arena.sandbox import doctor, seccomp

    def switched_off():
        raise seccomp.SeccompUnavailable("switched off by the test")

    seccomp.program_fd = switched_off
    if sys.argv[1] == "without --disable-userns":
        doctor.bwrap_disables_userns = lambda: False
    bot = sandbox.spawn([sys.executable, "-I", "probe.py"], sys.argv[2], env={},
                        log_path=sys.argv[3])
    try:
        print("status", bot.wait(60), "uid", bot.uid)
    finally:
        bot.kill()
    """


@pytest.mark.parametrize("userns", ["with --disable-userns", "without --disable-userns"])
def test_the_unprivileged_arena_gives_its_bots_bwrap_disable_userns(nobody, work, userns):
    """The arena's own spawn, run as NOBODY with the seccomp filter switched off: the bot's
    user namespace is one in which no other can be made, unless the arena is made to leave
    out --disable-userns (the control: then the same bot makes one)."""
    log = work / "probe.log"
    done = nobody.run([sys.executable, "-c", textwrap.dedent(SPAWN_WITHOUT_SECCOMP), userns,
                       USERNS_BOT, log], work)
    assert "status 0 uid None" in done.stdout, done.stdout + done.stderr
    lines = log.read_text()
    if userns == "with --disable-userns":
        assert "userns: unshare(CLONE_NEWUSER): refused (ENOSPC)" in lines, lines
        assert "made one" not in lines, lines
    else:
        assert "userns: unshare(CLONE_NEWUSER): made one" in lines, lines


DOCTOR_ROW_WITHOUT_SECCOMP = """
    import shutil
    from arena.sandbox import doctor
    row = doctor._userns_row(shutil.which("bwrap"), None, None, root=False)
    print(row.status, "|", row.detail)
    """


def test_the_doctor_of_an_unprivileged_arena_names_bwrap_disable_userns(nobody, work):
    done = nobody.run([*ARENA, "doctor"], work)
    rows = {name: line for line in done.stdout.splitlines()
            for name in ("user namespaces blocked", "uid drop", "cgroup memory", "cgroup pids")
            if line.startswith(name + " ")}
    assert " enforced " in rows["user namespaces blocked"], done.stdout
    assert "bwrap --disable-userns" in rows["user namespaces blocked"], done.stdout
    assert " missing " in rows["uid drop"], done.stdout
    # It cannot make cgroups in root's tree, though an arena run as root made the `arena`
    # folders there: the doctor says so, and the league needs them, so it exits 1.
    assert " missing " in rows["cgroup memory"] and " missing " in rows["cgroup pids"]
    assert "missing for leagues: cgroup memory, cgroup pids" in done.stdout
    assert done.returncode == 1 and "Traceback" not in done.stderr
    # Without a seccomp filter, bwrap's --disable-userns alone makes the row enforced
    # (unshare fails with ENOSPC there, not EPERM).
    row = nobody.run([sys.executable, "-c", textwrap.dedent(DOCTOR_ROW_WITHOUT_SECCOMP)], work)
    assert row.stdout.strip() == "enforced | bwrap --disable-userns", row.stdout + row.stderr


FORK_BOMB = """
    import json, sys, time
    from pathlib import Path
    from arena import sandbox
    bomb = ("import os, time\\n"
            "print('bombing', flush=True)\\n"
            "while True:\\n"
            "    try:\\n"
            "        os.fork()\\n"
            "    except OSError:\\n"
            "        time.sleep(0.01)\\n")
    log = Path(sys.argv[2])
    bot = sandbox.spawn([sys.executable, "-c", bomb], sys.argv[1], env={}, log_path=log,
                        limits=sandbox.Limits(processes=16))
    deadline = time.monotonic() + 20
    while "bombing" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the bomb never started"
        time.sleep(0.02)
    time.sleep(1.0)
    during = sorted(bot.pids())
    bot.kill()
    print(json.dumps({"during": during, "cgroups": sorted(bot.cgroups.folders),
                      "after": sorted(bot.pids())}))
    """


def is_running(pid: int) -> bool:
    """Read from /proc here, not with sandbox.running: the check is not the code it checks."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_without_a_pids_cgroup_a_fork_bomb_is_held_to_the_limit_and_fully_killed(nobody, work):
    bot_dir = work / "bot"
    bot_dir.mkdir()
    os.chown(bot_dir, NOBODY, NOBODY)
    done = nobody.run([sys.executable, "-c", textwrap.dedent(FORK_BOMB), bot_dir,
                       work / "bomb.log"], work)
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["cgroups"] == []   # RLIMIT_NPROC alone holds it
    # 16 processes of the bot at most, plus the sandbox's own (bwrap and its init).
    assert 2 < len(seen["during"]) <= 16 + 2, seen
    assert seen["after"] == [] and not [pid for pid in seen["during"] if is_running(pid)]
