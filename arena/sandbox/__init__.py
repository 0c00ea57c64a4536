"""Run bot commands in a bubblewrap sandbox with per-bot limits; hold, freeze, measure, end them.

Knows nothing of games or gRPC. The public names, `from arena import sandbox`:
`sandbox.spawn(argv, bot_dir, ...)` -> `SandboxedProcess`, `Limits`, `available()`,
`require()`, `running(pid)`, `HELD_QUOTA_US` (a bot's CPU quota between its turns),
`log_text(path)` and `log_lines(path)` (a bot log read back, for excerpts), the errors
`SandboxUnavailable` and `SandboxError`.

One module per part: `mounts` (what a bot sees: the bwrap command line and its /etc), `init`
(the bot's init inside the sandbox: cgroups joined, rlimits, uid dropped, orphans reaped),
`cgroups` (memory, pids and CPU of each bot, freezing), `reaper` (ends the bots of an
arena process that died), `seccomp` (the system-call filter),
`proctree` (the host's process table), `scratch` (temporary folders that name their
arena process, so a dead one's are found), `logdrain` (the bot's capped log), `process` (spawn
and SandboxedProcess), `doctor` (what is enforced on this machine). SECURITY.md at the
repository's root says what a bot can and cannot do, and how each protection is tested.
"""
from arena.sandbox.cgroups import HELD_QUOTA_US
from arena.sandbox.doctor import available, protections, require
from arena.sandbox.errors import SandboxError, SandboxUnavailable
from arena.sandbox.limits import GiB, MiB, Limits
from arena.sandbox.logdrain import log_lines, log_text
from arena.sandbox.mounts import BOT_DIR, LIB_DIR
from arena.sandbox.process import BOT_GID, SandboxedProcess, spawn
from arena.sandbox.proctree import running

__all__ = ["BOT_DIR", "BOT_GID", "GiB", "HELD_QUOTA_US", "LIB_DIR", "Limits", "MiB", "SandboxError",
           "SandboxUnavailable", "SandboxedProcess", "available", "log_lines", "log_text",
           "protections", "require", "running", "spawn"]
