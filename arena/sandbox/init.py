"""The bot's init inside the sandbox: joins the bot's cgroups, sets its limits, drops root,
runs the bot's command, and reaps and kills whatever the command leaves behind.

Run as a script by an isolated interpreter (`python -I -S init.py SPEC -- ARGV...`): it needs
nothing but the standard library, and nothing of the bot's folder or PYTHONPATH is imported.
SPEC is JSON: rlimits, uid/gid to drop to (or null), the descriptor of the arena's pipe, the
descriptors of the bot's cgroup membership files, and the descriptor to report the bot's end on.
"""
import ctypes
import json
import os
import resource
import signal
import sys
import threading

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38


def main() -> None:
    """Sets the limits, drops to the bot's uid, becomes a child subreaper (so every orphan of
    the bot, daemons included, stays its descendant and within reach of the arena's kill),
    runs ARGV, and when ARGV ends kills whatever it left behind, then exits with ARGV's status
    (and reports it on the status descriptor). When the arena's pipe closes, the arena is gone
    (even if it died before bwrap could arrange to die with it): it kills ARGV, and so the
    rest, at once.
    """
    spec = json.loads(sys.argv[1])
    argv = sys.argv[3:]
    for fd in spec["cgroup_fds"]:   # "0" is the writer itself: the bot's cgroups from here on
        os.write(fd, b"0")
        os.close(fd)
    for name, soft, hard in spec["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if spec["uid"] is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])  # drops every capability too
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    arena_fd, status_fd = spec["arena_fd"], spec["status_fd"]
    os.set_inheritable(arena_fd, False)   # the bot gets neither
    os.set_inheritable(status_fd, False)
    bot = os.fork()
    if bot == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            print(f"arena sandbox: cannot run {argv[0]!r}: {error.strerror}", file=sys.stderr)
        os._exit(127)
    threading.Thread(target=end_with_arena, args=(arena_fd,), daemon=True).start()
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
            for child in children_of_self():
                os.kill(child, signal.SIGKILL)
    report = ({"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status)
              else {"exit": os.waitstatus_to_exitcode(status)})
    try:
        os.write(status_fd, json.dumps(report).encode())
    except OSError:
        pass   # the arena is gone
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass   # SIGKILL and SIGSTOP cannot be caught, so need no reset
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status))


def end_with_arena(arena_fd: int) -> None:
    """Waits for the arena's pipe to close, then kills the wrapper's children (the bot); the
    main loop then kills what they leave and exits."""
    while os.read(arena_fd, 4096):   # the arena never writes: this returns at its end
        pass
    for child in children_of_self():
        os.kill(child, signal.SIGKILL)


def children_of_self() -> list:
    children = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as file:
            children += [int(pid) for pid in file.read().split()]
    return children


if __name__ == "__main__":
    main()
