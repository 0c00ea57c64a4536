"""The `arena` command: a root click group; each sub-module adds its commands, imported when
one of them runs (`root.COMMAND_MODULES`).

User errors (engine errors, ArenaError, click's usage errors) become one line on stderr and
exit status 2, never a traceback; commands with their own exit statuses (verify) set them
explicitly.
"""
from __future__ import annotations

from arena.cli.root import UserError, bench, main  # noqa: F401  (the entry point: arena.cli:main)
