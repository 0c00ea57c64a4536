"""The admission check of a new version: `arena bot check`'s compliance run, in the sandbox,
and whose fault a failure is.

The version is checked at its ladder's game, player count and time control (manifest,
sandboxed start-up and handshake, short matches against `random` and against itself, every
record replayed: `arena.botcheck`). It is admitted when every check passes; otherwise the
first failing check and its detail are the reason, and the end of its log is the excerpt
only its author sees.

Whose fault a failure is (`Verdict.fault`), which decides whether it is tried again:
- HOST: the arena could not run the bot at all: the check raised instead of reporting
  (check_bot reports every fault of a bot as a row; what it raises is ours, HostError
  above all: the sandbox, a cgroup or the bot's socket could not be made).
- TIMEOUT: no handshake or no move in time. The bot's fault, or a loaded host's: the same
  bot can pass a moment later.
- BOT: anything else (a crash, an illegal move, a protocol error, a bad manifest): the check
  plays fixed deals with fixed seeds, so it fails the same way again.

`sample_check` runs the same check on the sample bot `random`: the service's self-check at
start-up, and the test of whether a host fault is really the host's.

`checked_elsewhere` runs the check on a Ray actor of the service's, between its matches
(arena.league.ray_pool: the version shipped by content hash into the actor's node's cache),
and writes the check's logs, sent back with the verdict, into the server's folder; before any
actor is up it checks here.
"""
from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path
from typing import Callable

from arena.botcheck import CheckRow, check_bot
from arena.bots.manifest import folder_hash
from arena.clock import TimeControl
from arena.errors import HostError
from arena.league.nodelogs import append_logs
from arena.sandbox import log_text
from arena.serve.admission import BOT, HOST, TIMEOUT, Verdict
from arena.serve.db import Ladder, Version

log = logging.getLogger(__name__)

EXCERPT_CHARS = 4000
SAMPLE_BOT = "random"

_TIMED_OUT = re.compile(r"(timeout|forfeit \(timeout\)): ")


def compliance_check(version: Version, ladder: Ladder, log_dir: Path) -> Verdict:
    """Runs the compliance check of `version` on `ladder` (see the module docstring)."""
    return check_folder(Path(version.folder), ladder, log_dir)


def checked_elsewhere(run: Callable[..., tuple[Verdict, dict[str, bytes], str] | None]
                      ) -> tuple[Callable[[Version, Ladder, Path], Verdict],
                                 Callable[[Ladder, Path], Verdict]]:
    """The compliance check and the sample bot's, as `run(check_folder, folder, version,
    ladder)` runs them (a Ray actor: RayPool.check_on_worker, which answers the verdict, the
    check's logs and the node that ran it, or None while no actor is up: then they run here).
    The sample bot's check runs there too: it tells whether a failure there was the host's."""
    def check_at(folder: str, version: str, ladder: Ladder, log_dir: Path, label: str,
                 here: Callable[[], Verdict]) -> Verdict:
        try:
            done = run(check_folder, folder, version, ladder)
        except HostError as error:
            return Verdict(False, f"the check could not run: {error}", "", HOST)
        if done is None:
            return here()
        verdict, logs, node = done
        shutil.rmtree(log_dir, ignore_errors=True)
        append_logs(log_dir, logs)   # the server keeps every check's logs, as for its own
        log.info("%s: checked on Ray node %s", label, node[:12])
        return verdict

    def check(version: Version, ladder: Ladder, log_dir: Path) -> Verdict:
        return check_at(version.folder, version.version, ladder, log_dir, version.label,
                        lambda: compliance_check(version, ladder, log_dir))

    def sample(ladder: Ladder, log_dir: Path) -> Verdict:
        from sample_bots import sample_bot
        folder = sample_bot(SAMPLE_BOT)
        return check_at(str(folder), folder_hash(folder), ladder, log_dir,
                        f"the sample bot {SAMPLE_BOT}", lambda: sample_check(ladder, log_dir))

    return check, sample


def sample_check(ladder: Ladder, log_dir: Path) -> Verdict:
    """The compliance check of the sample bot `random` on `ladder`: it passes wherever the
    service can check bots at all."""
    from sample_bots import sample_bot
    return check_folder(sample_bot(SAMPLE_BOT), ladder, log_dir)


def check_folder(folder: Path, ladder: Ladder, log_dir: Path) -> Verdict:
    shutil.rmtree(log_dir, ignore_errors=True)   # a check run again after a restart
    log_dir.mkdir(parents=True)
    try:
        report = check_bot(folder, [ladder.game], log_dir=log_dir,
                           time_control=TimeControl(**ladder.time_control),
                           players=[ladder.players])
    except Exception as error:   # the bot's faults are rows of the report: this is ours
        text = " ".join(str(error).split()) or type(error).__name__
        return Verdict(False, f"the check could not run: {text}", "", HOST)
    failure = report.first_failure()
    if failure is not None:
        detail = failure.detail.replace(f"{log_dir}/", "")   # no server paths
        return Verdict(False, f"{failure.check}: {detail}", report.log_excerpt,
                       fault_of(failure))
    # Passed: the author still sees what the bot wrote during its check.
    log = "".join(log_text(path) for path in sorted(log_dir.glob("*.log")))
    return Verdict(True, "passed the compliance check: "
                   + "; ".join(f"{row.check} {row.result}" for row in report.rows),
                   log[-EXCERPT_CHARS:])


def fault_of(failure: CheckRow) -> str:
    """HOST, TIMEOUT or BOT for a failed row of the check (see the module docstring)."""
    if _TIMED_OUT.match(failure.detail):
        return TIMEOUT
    return BOT
