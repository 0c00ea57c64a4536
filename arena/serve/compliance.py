"""The admission check of a new version: `arena bot check`'s compliance run, in the sandbox.

The version is checked at its ladder's game, player count and time control (manifest,
sandboxed start-up and handshake, short matches against `random` and against itself, every
record replayed: `arena.botcheck`). It is admitted when every check passes; otherwise the
first failing check and its detail are the reason, and the end of its log is the excerpt
only its author sees.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from arena.botcheck import check_bot
from arena.clock import TimeControl
from arena.sandbox import log_text
from arena.serve.admission import Verdict
from arena.serve.db import Ladder, Version

EXCERPT_CHARS = 4000


def compliance_check(version: Version, ladder: Ladder, log_dir: Path) -> Verdict:
    """Runs the compliance check of `version` on `ladder` (see the module docstring)."""
    shutil.rmtree(log_dir, ignore_errors=True)   # a check run again after a restart
    log_dir.mkdir(parents=True)
    report = check_bot(version.folder, [ladder.game], log_dir=log_dir,
                       time_control=TimeControl(**ladder.time_control),
                       players=[ladder.players])
    failure = report.first_failure()
    if failure is not None:
        detail = failure.detail.replace(f"{log_dir}/", "")   # no server paths
        return Verdict(False, f"{failure.check}: {detail}", report.log_excerpt)
    # Passed: the author still sees what the bot wrote during its check.
    log = "".join(log_text(path) for path in sorted(log_dir.glob("*.log")))
    return Verdict(True, "passed the compliance check: "
                   + "; ".join(f"{row.check} {row.result}" for row in report.rows),
                   log[-EXCERPT_CHARS:])
