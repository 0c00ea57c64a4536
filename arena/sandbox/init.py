"""The bot's init inside the sandbox: joins the bot's cgroups, sets its limits, runs the bot's
command (as the bot's uid), and reaps and kills whatever the command leaves behind.

The bot must not be able to end its init: an init that ends without reporting the command's
end would make the bot's crash look like the host's (a sandbox that never ran its command).
So the init keeps root when the bot gets a uid of its own (a bot cannot signal another uid's
process), ignores every signal it can, and reports "started" before it starts the command:
a sandbox whose init reported that and then no end was ended by the bot.

Run as a script by an isolated interpreter (`python -I -S init.py SPEC -- ARGV...`): it needs
nothing but the standard library, and nothing of the bot's folder or PYTHONPATH is imported.
SPEC is a dict in hex of `marshal` (the arena runs this init on its own interpreter): rlimits,
uid/gid to drop to (or None), the descriptor of the arena's pipe, the descriptors of the bot's
cgroup membership files, and the descriptor to report the bot's end on. Each report is one line
of JSON.

Every bot start runs this init, so it imports only modules built into the interpreter or
written in C: json (with re), signal (with enum) and threading cost it ~12 ms of CPU more.
"""
import _signal as signal   # signal's C core: the same calls, without the enums
import _thread
import ctypes
import marshal
import os
import resource
import sys

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38


def main() -> None:
    """Sets the limits, becomes a child subreaper (so every orphan of the bot, daemons
    included, stays its descendant and within reach of the arena's kill), runs ARGV as the
    bot's uid, and when ARGV ends kills whatever it left behind, then exits with ARGV's status
    (and reports it on the status descriptor). When the arena's pipe closes, the arena is gone
    (even if it died before bwrap could arrange to die with it): it kills ARGV, and so the
    rest, at once.
    """
    spec = marshal.loads(bytes.fromhex(sys.argv[1]))
    argv = sys.argv[3:]
    for fd in spec["cgroup_fds"]:   # "0" is the writer itself: the bot's cgroups from here on
        os.write(fd, b"0")
        os.close(fd)
    for name, soft, hard in spec["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    ignored = ignore_signals()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    arena_fd, status_fd = spec["arena_fd"], spec["status_fd"]
    os.set_inheritable(arena_fd, False)   # the bot gets neither
    os.set_inheritable(status_fd, False)
    report(status_fd, "started", "true")   # before the bot exists: it cannot come first
    bot = os.fork()
    if bot == 0:
        for signum, handler in ignored.items():   # the bot's start is as it was
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        if spec["uid"] is not None:
            os.setgroups([])
            os.setgid(spec["gid"])
            os.setuid(spec["uid"])  # drops every capability too
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)   # after setuid, which clears it
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            print(f"arena sandbox: cannot run {argv[0]!r}: {error.strerror}", file=sys.stderr)
        os._exit(127)
    _thread.start_new_thread(end_with_arena, (arena_fd,))
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
    if os.WIFSIGNALED(status):
        report(status_fd, "signal", str(os.WTERMSIG(status)))
    else:
        report(status_fd, "exit", str(os.waitstatus_to_exitcode(status)))
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass   # SIGKILL and SIGSTOP cannot be caught, so need no reset
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status))


def ignore_signals() -> dict:
    """Ignores every signal that can be ignored (the bot, under the same uid when the arena is
    not root, could end the init with one); returns each one's former handler. SIGKILL and
    SIGSTOP cannot be: the "started" report covers an init killed by the bot, and a stopped
    one only stops reaping."""
    ignored = {}
    for signum in signal.valid_signals():
        if signum in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            continue   # SIGCHLD ignored would reap the bot before `os.wait` sees its status
        try:
            ignored[signum] = signal.signal(signum, signal.SIG_IGN)
        except (OSError, ValueError):
            continue   # one the C library keeps for itself (the threads' signals)
    return ignored


def report(status_fd: int, key: str, value: str) -> None:
    """One line of JSON, {key: value} (value: JSON text), on the status descriptor (a pipe:
    one write, whole, under PIPE_BUF)."""
    try:
        os.write(status_fd, f'{{"{key}": {value}}}\n'.encode())
    except OSError:
        pass   # the arena is gone


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
