"""The admission check of a new version: one real, sandboxed, short match on its ladder.

The version plays one match at the ladder's time control against the built-in `random`
strategy (the random sample bot's play) in the other seats, in the sandbox like every match.
It is admitted when it finishes that match without forfeiting (it started, shook hands,
answered every move legally and in time); otherwise the forfeit's reason and detail are the
rejection's reason, and the tail of its log (its stderr) is the excerpt its author sees.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from arena.clock import TimeControl
from arena.keys import LeagueKey
from arena.match import StrategySeat, play_match
from arena.serve.admission import Verdict
from arena.serve.db import Ladder, Version

EXCERPT_CHARS = 4000


def trial_match_check(version: Version, ladder: Ladder, log_dir: Path,
                      key: LeagueKey) -> Verdict:
    """Plays the trial match and judges it (see the module docstring)."""
    from arena.bots import BotHost, BotSpec   # gRPC only where bots run
    shutil.rmtree(log_dir, ignore_errors=True)   # a check run again after a restart
    log_dir.mkdir(parents=True)
    spec = BotSpec.load(version.folder, ladder.game)
    if spec.version != version.version:
        return Verdict(False, f"the stored folder changed (version {spec.version[:8]}, "
                              f"submitted {version.version[:8]}): submit it again", "")
    with BotHost(log_dir=log_dir, fresh_per_match=True) as host:
        seats = [host.seat(spec)] + [StrategySeat("random", ladder.game)
                                     for _ in range(ladder.players - 1)]
        try:
            seeds = key.match_seeds(f"check/{version.id}", ladder.players)
            record = play_match(ladder.game, ladder.players, {}, seeds.deal, seats,
                                TimeControl(**ladder.time_control), bot_seeds=seeds.bots)
        finally:
            for seat in seats:
                seat.close()
    log = "".join(path.read_text(errors="replace") for path in sorted(log_dir.glob("*.log")))
    forfeit = record["result"].get("forfeit")
    if forfeit and forfeit.get("seat") == 0:
        reason = forfeit.get("reason", "forfeit")
        detail = forfeit.get("detail", "").replace(f"{log_dir}/", "")   # no server paths
        return Verdict(False, f"forfeited its trial match ({reason}): {detail}".rstrip(": "),
                       log[-EXCERPT_CHARS:])
    return Verdict(True, f"finished its trial match against random "
                         f"({len(record['moves'])} moves)", log[-EXCERPT_CHARS:])
