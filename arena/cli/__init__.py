"""The `arena` command: a root click group; each sub-module adds its commands.

User errors (engine errors, ArenaError, click's usage errors) become one line on stderr and
exit status 2, never a traceback; commands with their own exit statuses (verify) set them
explicitly.
"""
from __future__ import annotations

from arena.cli.root import UserError, bench, main  # noqa: F401  (the entry point: arena.cli:main)

# Each module below registers its commands on `main` (or `bench`) when imported.
from arena.cli import play  # noqa: F401
from arena.cli import games_cmds  # noqa: F401
from arena.cli import bench_engine  # noqa: F401
from arena.cli import ladder  # noqa: F401
from arena.cli import bench_ratings  # noqa: F401
from arena.cli import league  # noqa: F401
from arena.cli import bench_protocol  # noqa: F401
from arena.cli import serve  # noqa: F401
from arena.cli import bench_serve  # noqa: F401
from arena.cli import bench_sandbox  # noqa: F401
from arena.cli import bench_fairness  # noqa: F401
from arena.cli import doctor  # noqa: F401
from arena.cli import bot_cmds  # noqa: F401
from arena.cli import replay  # noqa: F401
from arena.cli import bench_ismcts  # noqa: F401
from arena.cli import bench_sprt  # noqa: F401
from arena.cli import sprt  # noqa: F401
from arena.cli import bench_seating  # noqa: F401
from arena.cli import debug  # noqa: F401
