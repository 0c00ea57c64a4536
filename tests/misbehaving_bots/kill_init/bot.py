"""Tries to end its sandbox's init (its parent) before its handshake, then exits with status 3.

An init that ended without reporting the bot's end would make this crash look like a sandbox
that never ran its command: the host's fault, no forfeit, and a league stopped or a ladder
paused for as long as the bot likes. Each attempt is logged: "refused" when the kernel
refuses it (an init of another uid), "sent" when it was sent (the arena not root: same uid).
"""
import os
import signal
import sys
import time

init = os.getppid()
for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGKILL):
    try:
        os.kill(init, signum)
        print(f"kill_init: {signum.name} sent", file=sys.stderr, flush=True)
    except PermissionError:
        print(f"kill_init: {signum.name} refused", file=sys.stderr, flush=True)
    time.sleep(0.05)
sys.exit(3)
