"""The ladder as a small static site: the ladder page links each bot to a page of its matches,
and each match to its replay.

    DIR/index.html          the ladder (`arena.render.ladder_page`), bot names linking to
    DIR/bots/NAME.html      a bot's matches: date, opponents, seat, score, result, forfeit,
    DIR/matches/ID.html     each match's replay (`arena.render.replay`), with every bot's
                            log lines at their plies, from the league's `logs/`

`arena ladder results/NAME --format html --output DIR` writes it. Bots choose their names and
match ids hold them, so no file name is taken from either as it is: `safe_name` keeps a few
plain characters and adds a hash of the whole name whenever it changed anything. The site is
built in a folder beside DIR and swapped in whole, so a reader never sees half a site and a
second run replaces the first; a folder that is not a site written here is never replaced.

The site is written from league folders on this machine for whoever may read them, so, as
`arena replay LEAGUE --format html` does, it shows every bot's log (the service shows a log to
its bot's author only): publish it only where every bot's author may read the others' logs.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from arena.actlogs import MatchLogs, logs_by_match
from arena.errors import ArenaError
from arena.league.store import MatchRow, read_match_rows, read_records
from arena.render import shown_time, templates
from arena.render.ladder_page import ladder_page
from arena.render.replay import render_replay_html
from arena.stats.botstats import BotStats
from arena.stats.ratings import Ladder, Outcome
from arena.stats.report import Grid, ladder_grid, shown_bot
from engine.core import EngineError

SITE_MARK = ".arena-ladder-site"
"""A file in every site written here: only a folder holding it is replaced by a new site."""

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,59}")
_HASHED_LOOK = re.compile(r".*-[0-9a-f]{12}")


def safe_name(text: str) -> str:
    """A file name (without extension) for `text`, a bot label or match id: `text` itself
    when it is plain (letters, digits, `_.@-`, not starting with a dot, at most 60), else its
    plain characters and 12 hex of its SHA-256. Different texts give different names: a
    plain name never ends like a hashed one."""
    if _PLAIN.fullmatch(text) and not _HASHED_LOOK.fullmatch(text):
        return text
    kept = re.sub(r"[^A-Za-z0-9_.@-]+", "-", text).strip("-._@")[:40]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{kept}-{digest}" if kept else digest


@dataclass(frozen=True)
class LeagueMatches:
    """One league folder of the site and the prefix its match ids get (merged leagues)."""

    prefix: str
    folder: str

    def rows(self) -> list[MatchRow]:
        return read_match_rows(self.folder)

    def logs(self) -> MatchLogs:
        """Its bots' log lines by match id (unprefixed, as the logs name them), each log read
        once for all matches (each log is capped, 1 MiB by default)."""
        return logs_by_match(sorted((Path(self.folder) / "logs").glob("*.log")))


@dataclass(frozen=True)
class SiteSummary:
    where: Path
    bots: int
    matches: int


def write_site(out: Path, leagues: Sequence[LeagueMatches], *, table: Ladder,
               outcomes: Sequence[Outcome], title: str, stats: Sequence[BotStats] | None,
               k: float = 16.0, done: Callable[[int], None] = lambda n: None) -> SiteSummary:
    """Writes the site into `out` (replacing a site written there before), calling `done(1)`
    after each match's replay. ArenaError when `out` cannot be (re)placed."""
    out = Path(os.path.abspath(out))   # "." has a parent to build beside; links stay links
    check_target(out)
    rows = [(league.prefix + row.match_id, row) for league in leagues for row in league.rows()]
    match_files = _unique_files({match_id for match_id, _ in rows}, "match ids")
    labels = [row.bot for row in table.rows]
    labels += sorted({bot for _, row in rows for bot in row.bots} - set(labels))
    bot_files = _unique_files(set(labels), "bot names")
    try:
        draft = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as error:
        raise ArenaError(f"cannot write the site to {out}: {error.strerror}") from None
    try:
        (draft / "bots").mkdir()
        (draft / "matches").mkdir()
        index = ladder_page(table, outcomes, title=title, k=k, stats=stats,
                            bot_pages={bot: f"bots/{bot_files[bot]}" for bot in labels})
        (draft / "index.html").write_text(index, encoding="utf-8")
        page = templates().get_template("ladder/bot.html")
        summaries = _summary_rows(ladder_grid(table))
        listed = _matches_by_bot(rows, bot_files, match_files)
        for bot in labels:
            html = page.render(title=shown_bot(bot), ladder_title=title,
                               summary=summaries.get(bot), matches=listed.get(bot, []))
            (draft / "bots" / bot_files[bot]).write_text(html, encoding="utf-8")
        for league in leagues:
            logs = league.logs()
            for stored_id, record in read_records(league.folder):
                match_id = league.prefix + stored_id
                if match_id not in match_files:   # stored since the rows were read
                    continue
                (draft / "matches" / match_files[match_id]).write_text(
                    _replay(match_id, record, logs.get(stored_id)), encoding="utf-8")
                done(1)
        (draft / SITE_MARK).write_text("written by `arena ladder --format html --output`\n")
        _swap_in(draft, out)
    except OSError as error:
        shutil.rmtree(draft, ignore_errors=True)
        raise ArenaError(f"cannot write the site to {out}: {error.strerror}") from None
    except BaseException:
        shutil.rmtree(draft, ignore_errors=True)
        raise
    return SiteSummary(out, len(labels), len(rows))


def check_target(out: Path) -> None:
    """ArenaError unless `out` is new, empty or a site written here before."""
    if not out.parent.is_dir():
        raise ArenaError(f"cannot write the site to {out}: folder {out.parent} does not exist")
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ArenaError(f"cannot write the site to {out}: it is a file or a link; give a "
                         "folder")
    if out.is_dir() and any(out.iterdir()) and not (out / SITE_MARK).is_file():
        raise ArenaError(f"{out} holds files not written by `arena ladder --output`: give a "
                         "new or empty folder (a site written before is replaced)")


def _swap_in(draft: Path, out: Path) -> None:
    """`draft` becomes `out`; an old site there is moved aside first, then removed."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
        out.rename(old / "site")
    draft.chmod(0o755)   # mkdtemp makes it private; a site is for reading
    draft.rename(out)
    if old is not None:
        shutil.rmtree(old)


def _unique_files(names: Iterable[str], what: str) -> dict[str, str]:
    files = {name: safe_name(name) + ".html" for name in names}
    if len(set(files.values())) != len(files):   # only a hash collision could do this
        raise ArenaError(f"two {what} give one file name; rename one of them")
    return files


def _summary_rows(grid: Grid) -> dict[str, Grid]:
    """Each bot's own line of the ladder, as a one-row Grid."""
    return {bot: Grid(grid.headers, (row,), grid.align, (bot,))
            for bot, row in zip(grid.bots, grid.rows)}


@dataclass(frozen=True)
class BotMatch:
    """One match as a bot's page lists it."""

    match_id: str
    href: str
    date: str
    opponents: tuple[tuple[str, str], ...]   # (shown name, address of its page)
    seat: int
    score: str
    result: str
    forfeit: str


def _matches_by_bot(rows: Sequence[tuple[str, MatchRow]], bot_files: Mapping[str, str],
                    match_files: Mapping[str, str]) -> dict[str, list[BotMatch]]:
    """Each bot label's matches, in schedule order, as its page lists them."""
    listed: dict[str, list[BotMatch]] = {}
    for match_id, row in rows:
        for seat, bot in enumerate(row.bots):
            opponents = tuple((f"seat {other}: {shown_bot(name)}", bot_files[name])
                              for other, name in enumerate(row.bots) if other != seat)
            listed.setdefault(bot, []).append(BotMatch(
                match_id, f"../matches/{match_files[match_id]}", shown_time(row.started),
                opponents, seat, f"{row.scores[seat]:g}", _result(row.ranks, seat),
                _forfeit(row, seat)))
    return listed




def _result(ranks: Sequence[int], seat: int) -> str:
    """won / drew / lost for two seats; rank of n (tied) for more; - alone (1-player games
    are compared per deal, on the ladder)."""
    mine, tied = ranks[seat], ranks.count(ranks[seat]) > 1
    if len(ranks) == 1:
        return "-"
    if len(ranks) == 2:
        return "drew" if tied else "won" if mine == 1 else "lost"
    return f"rank {mine} of {len(ranks)}" + (" (tied)" if tied else "")


def _forfeit(row: MatchRow, seat: int) -> str:
    if row.end != "forfeit":
        return ""
    who = "this bot" if row.forfeit_seat == seat else f"seat {row.forfeit_seat}"
    return f"by {who}: {row.forfeit_text}"


def _replay(match_id: str, record: dict, logs: dict | None) -> str:
    """The replay page (with `logs`, seat -> ply -> lines), or a page saying why this record
    cannot be replayed."""
    try:
        return render_replay_html(record, logs=logs)
    except (EngineError, KeyError, TypeError, ValueError) as error:
        return templates().get_template("ladder/unreadable.html").render(
            title=f"match {match_id}", error=str(error))
