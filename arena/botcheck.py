"""`arena bot check`: does a bot folder work, before it meets a league?

The compliance run: reads the manifest, starts the bot in the real sandbox and times its
handshake, then plays short matches in every game and player count it declares, against
the built-in `random` bot and (with two or more players) against itself, and replays every
record through the engine. Every step is one row of the report: check, result, detail.

    report = check_bot("sample_bots/greedy")
    report.passed            # True only when every row passed
    report.rows              # [CheckRow("manifest", "pass", "greedy, plays mandala, ..."), ...]
    report.log_excerpt       # the end of the bot's stderr log when something failed

Leagues call `check_league_bots` before their first match: one short match per bot at the
league's game and player count, each bot version checked once.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from arena.bot_errors import BotError
from arena.clock import TimeControl
from arena.errors import ArenaError, HostError
from arena.match import StrategySeat, play_match
from arena.sandbox import log_lines
from engine import records, registry

PASS, FAIL, SKIP = "pass", "FAIL", "skip"
CHECK_SEED = 20261201
"""Seed of the check's first deal (and its bots' seeds): a check is a function of the bot
alone, so a failure shows again when the author runs it again."""
EXCERPT_LINES = 20
OPPONENT = "random"
NOT_KEPT = "a temporary log, not kept: `arena bot check --keep DIR` keeps it"
"""Named instead of a log file that is removed with the check (a message names no path that
will not exist when the author reads it)."""


@dataclass(frozen=True)
class CheckRow:
    check: str
    result: str     # PASS, FAIL or SKIP
    detail: str


@dataclass
class CheckReport:
    folder: Path
    bot: str = ""
    rows: list[CheckRow] = field(default_factory=list)
    log_excerpt: str = ""
    on_row: Callable[[CheckRow], None] | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(row.result != FAIL for row in self.rows)

    def first_failure(self) -> CheckRow | None:
        return next((row for row in self.rows if row.result == FAIL), None)

    def add(self, check: str, result: str, detail: str) -> None:
        self.rows.append(CheckRow(check, result, detail))
        if self.on_row is not None:
            self.on_row(self.rows[-1])


@dataclass(frozen=True)
class _Match:
    """One check match: the game, its player count and which seats the bot plays."""

    game: str
    players: int
    bot_seats: tuple[int, ...]

    @property
    def name(self) -> str:
        against = ("alone" if self.players == 1
                   else "vs itself" if len(self.bot_seats) == self.players
                   else f"vs {OPPONENT}, seat {self.bot_seats[0]}")
        return f"{self.game} {self.players}p {against}"


def check_bot(folder: str | Path, games: Sequence[str] | None = None, *,
              unsafe_no_sandbox: bool = False, log_dir: str | Path | None = None,
              time_control: TimeControl | None = None,
              players: Sequence[int] | None = None, self_play: bool = True,
              on_row: Callable[[CheckRow], None] | None = None,
              keep: str | Path | None = None,
              warn_slow_start: bool = False) -> CheckReport:
    """Checks the bot in `folder` in `games` (default: every game it declares), at every
    player count (or only `players`); never raises for the bot's faults, only reports them.

    Bot logs go to `log_dir` (kept), else to a temporary folder removed afterwards (the
    report keeps the end of the log when a check failed). `keep` is a folder that keeps
    both the logs and every match's record (`MATCH.json`, named in its row).
    `warn_slow_start` warns of a start-up over a third of its budget (see BotHost).
    `on_row` sees each row as soon as its check is done (for progress).
    """
    report = CheckReport(Path(folder), on_row=on_row)
    spec = _manifest(report, folder, games)
    if spec is None:
        return report
    time_control = time_control or TimeControl()
    plan = _plan(spec.games if games is None else games, players, self_play)
    if not plan:
        report.add("matches", FAIL, f"no player count of {', '.join(games or spec.games)} "
                                    f"in {list(players or [])}")
        return report
    from arena.bots import BotHost   # gRPC only when a bot is really started

    if keep is not None:
        keep = Path(keep)
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ArenaError(f"cannot make the folder {keep}: {error.strerror}") from None
        log_dir = keep
    with BotHost(unsafe_no_sandbox=unsafe_no_sandbox, log_dir=log_dir,
                 warn_slow_start=warn_slow_start) as host:
        try:
            if _startup(report, host, spec, time_control):
                for index, match in enumerate(plan):
                    _play(report, host, spec, match, CHECK_SEED + index, time_control, keep)
            else:
                report.add("matches", SKIP, "not played: the bot did not start")
        except HostError as error:   # the same error (a league tells its kinds apart)
            error.args = (_kept_paths_only(str(error), host),)
            raise
        if not report.passed:
            report.log_excerpt = _excerpt(host.log_dir, named_in_full=not host.temporary_logs)
        report.rows = [CheckRow(row.check, row.result, _kept_paths_only(row.detail, host))
                       for row in report.rows]
    return report


def _kept_paths_only(text: str, host) -> str:
    """`text` with each log file of a temporary log folder, gone once the check ends, named
    as NOT_KEPT instead."""
    if not host.temporary_logs:
        return text
    return re.sub(re.escape(f"{host.log_dir}/") + r"[^\s);]+", NOT_KEPT, text)


def _manifest(report: CheckReport, folder: str | Path, games: Sequence[str] | None):
    from arena.bots import BotSpec
    try:
        spec = BotSpec.load(folder)
        for game in games or ():
            registry.get(game)   # an unknown game is the user's error, not the bot's
            if game not in spec.games:
                raise ArenaError(f"bot {spec.name} does not declare {game} "
                                 f"(its games: {', '.join(spec.games)})")
    except ArenaError as error:
        report.add("manifest", FAIL, str(error))
        return None
    report.bot = spec.name
    report.add("manifest", PASS, f"{spec.name} (version {spec.version[:8]}): "
                                 f"{' '.join(spec.command)}; plays {', '.join(spec.games)}")
    return spec


def _plan(games: Iterable[str], players: Sequence[int] | None, self_play: bool) -> list[_Match]:
    """Per game: at each player count one match against `random` with the bot in the last
    seat, and at the smallest multi-player count one with the bot in every seat (so it plays
    first and later seats, and against itself)."""
    plan = []
    for game_id in games:
        game = registry.get(game_id)
        counts = [n for n in range(game.min_players, game.max_players + 1)
                  if players is None or n in players]
        for n in counts:
            plan.append(_Match(game_id, n, (n - 1,)))
        multi = [n for n in counts if n >= 2]
        if self_play and multi:
            plan.append(_Match(game_id, multi[0], tuple(range(multi[0]))))
    return plan


def _startup(report: CheckReport, host, spec, time_control: TimeControl) -> bool:
    started = time.monotonic()
    try:
        process = host._start(spec, time_control.startup, header="bot check: start-up")
    except BotError as error:
        report.add("start-up", FAIL, f"{error.reason}: {error.problem}")
        return False
    took = time.monotonic() - started
    host._release(process)   # into the pool: the first match plays with this very process
    report.add("start-up", PASS, f"handshake after {took:.2f} s "
                                 f"(limit {time_control.startup:g} s)")
    return True


def _play(report: CheckReport, host, spec, match: _Match, seed: int,
          time_control: TimeControl, keep: Path | None = None) -> None:
    seats = [host.seat(spec) if index in match.bot_seats else StrategySeat(OPPONENT, match.game)
             for index in range(match.players)]
    try:
        record = play_match(match.game, match.players, None, seed, seats, time_control,
                            bot_seeds=[seed + seat for seat in range(match.players)],
                            label=f"bot check ({match.name})")
    except HostError:
        raise   # the host could not play it: no verdict on the bot
    except ArenaError as error:
        report.add(match.name, FAIL, str(error))
        return
    finally:
        for seat in seats:
            seat.close()
    kept = "" if keep is None else f"; record {_keep_record(keep, match, record)}"
    result = record["result"]
    if result["end"] == "forfeit":
        forfeit = result["forfeit"]
        report.add(match.name, FAIL, f"forfeit ({forfeit['reason']}): "
                                     f"{forfeit.get('detail', '')}{kept}")
        return
    verdict = records.verify(record)
    if not verdict["ok"]:
        report.add(match.name, FAIL, f"the record does not replay: ply {verdict['ply']}: "
                                     f"{verdict['error']}{kept}")
        return
    own = [time_ for (seat, _), time_ in zip(record["moves"], record["times"])
           if seat in match.bot_seats and time_ is not None]
    slowest = max(own, default=0.0)
    limit = time_control.move_time
    report.add(match.name, PASS,
               f"{len(own)} legal moves, slowest {slowest * 1000:.0f} ms"
               + (f" (limit {limit * 1000:.0f} ms)" if limit else "")
               + f"; scores {result['scores']}{kept}")


def _keep_record(keep: Path, match: _Match, record: dict) -> Path:
    """Writes a check match's record into `keep`, named after the match; its path."""
    path = keep / (re.sub(r"[^A-Za-z0-9]+", "-", match.name).strip("-") + ".json")
    try:
        path.write_text(records.to_json(record))
    except OSError as error:
        raise ArenaError(f"cannot keep the record {path}: {error.strerror}") from None
    return path


def _excerpt(logs: Path, named_in_full: bool = False) -> str:
    """The last lines of every log in `logs` (the bot's stderr), each under its file's whole
    path when the logs are kept (a path the author can open), else naming no file."""
    parts = []
    for path in sorted(logs.glob("*.log")):
        lines = log_lines(path)[-EXCERPT_LINES:]
        if lines:
            name = path if named_in_full else "the bot's log, temporary and not kept"
            parts.append(f"--- {name} (last {len(lines)} lines)\n" + "\n".join(lines))
    return "\n".join(parts) or "(the bot wrote nothing to stderr)"


# -- leagues -------------------------------------------------------------------------------

def check_league_bots(folders: Sequence[str], game: str, players: int,
                      time_control: TimeControl, *, unsafe_no_sandbox: bool = False,
                      ) -> list[str]:
    """Checks each bot folder of a league with one short match at the league's game and
    player count (and time control); one line per failing bot, none when all pass. A
    version (folder content) is checked once, however often it is given."""
    from arena.bots import folder_hash
    failures, seen = [], {}
    for folder in folders:
        version = folder_hash(Path(folder).resolve())
        if version not in seen:
            seen[version] = check_bot(folder, [game], unsafe_no_sandbox=unsafe_no_sandbox,
                                      time_control=time_control, players=[players],
                                      self_play=False)
        report = seen[version]
        failure = report.first_failure()
        if failure is not None:
            failures.append(f"bot {report.bot or folder} ({folder}) fails its check, "
                            f"{failure.check}: {failure.detail}")
    return failures
