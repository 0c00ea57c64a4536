"""Tries to make a user namespace three ways and prints one line for each on stderr:
`userns: WAY: made one` or `userns: WAY: refused (WHY)` (`not run (WHY)` when the tool is
missing). Used by the `userns` bot at its start, and run alone by the tests as a control.

Each way runs in a process of its own: a process that made a user namespace stays in it,
with no uid mapped, and every later try of its own would fail for that reason alone.
"""
import subprocess
import sys

SYSCALL = ("import ctypes, errno\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "if libc.unshare(0x10000000) == 0:\n"   # CLONE_NEWUSER
           "    print('made one')\n"
           "else:\n"
           "    code = ctypes.get_errno()\n"
           "    print(f'refused ({errno.errorcode.get(code, code)})')\n")
WAYS = {
    "unshare(CLONE_NEWUSER)": [sys.executable, "-I", "-S", "-c", SYSCALL],
    "unshare -U": ["unshare", "-U", "true"],
    "bwrap": ["bwrap", "--ro-bind", "/", "/", "true"],
}


def tries() -> None:
    for way, argv in WAYS.items():
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as error:
            outcome = f"not run ({error})"
        else:
            if way == "unshare(CLONE_NEWUSER)":
                outcome = done.stdout.strip() or f"not run ({done.stderr.strip()})"
            elif done.returncode == 0:
                outcome = "made one"
            else:
                reason = (done.stderr.strip().splitlines() or [f"status {done.returncode}"])[-1]
                outcome = f"refused ({reason})"
        print(f"userns: {way}: {outcome}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    tries()
