"""Submissions: storing an upload as a new version, checking it, and admitting or rejecting it.

`submit` (called by the web app) takes an author's upload for one ladder: it first counts
and reserves the submission against the author's hourly limit in one write transaction
(refused uploads stay counted), then unpacks the upload safely into a staging folder, reads
its manifest, and moves it to `bots/<author>/<name>/<content hash>/` (read-only) as a new
version waiting for its check. The `Admission` thread checks waiting versions one at a time
in the sandbox, then in one transaction admits the version (retiring the author's previous
version of that bot on that ladder: its matches and history stay) or rejects it with the
reason and the bot's log excerpt, which only its author sees. A restart checks again
whatever was waiting.

A check is fair to its author: one that fails for the host's reasons or for a timeout (which
load can cause) is tried again, up to `ATTEMPTS` times, before it counts (`checked`); and a
failure counts only if the sample bot passes the same check right after it, else the
version waits, unjudged, and the service says why (`Admission.judge`). An author may ask for
one re-check of a rejected version (`recheck`).
"""
from __future__ import annotations

import logging
import math
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from arena.errors import ArenaError
from arena.serve.authors import Author, check_name
from arena.serve.db import Ladder, ServiceDB, Version
from arena.serve.uploads import UploadLimits, remove_version_folder, unpack

log = logging.getLogger(__name__)

LOG_EXCERPT_CHARS = 4000
ATTEMPTS = 3
"""Checks of one submission that fail for the host or a timeout, before the failure counts."""
RETRY_PAUSE = 5.0
"""Seconds before the second attempt, doubled before each next: a loaded host calms down."""
HOST_PAUSE = 60.0
"""Seconds the admission thread waits when the host cannot run checks, before trying again."""
BOT, TIMEOUT, HOST = "bot", "timeout", "host"
"""Whose fault a failed check is (compliance.py says how each is told): the bot's, a timeout
(the bot's or a loaded host's: tried again), the host's (tried again, and a rejection only
if the sample bot passes the same check: `Admission.judge`)."""


class SubmissionError(ArenaError):
    """A submission refused before it is stored; `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str
    log_excerpt: str
    fault: str = BOT   # of a failure: BOT, TIMEOUT or HOST


Check = Callable[[], Verdict]


def submit(db: ServiceDB, author: Author, ladder: Ladder, data: bytes, *,
           limits: UploadLimits, per_hour: int) -> int:
    """Stores an upload as a version waiting for its check; returns the submission id.

    The submission is counted against the author's hourly limit before anything is
    unpacked, and stays counted if the upload is refused (as status `refused`, with the
    reason): refused uploads cost the service work too."""
    submission_id = reserve(db, author, ladder.id, per_hour)
    staging = db.folder / "staging" / secrets.token_hex(8)
    try:
        unpack(data, staging, limits)
        spec = _manifest(staging, ladder)
        folder = db.folder / "bots" / author.name / spec.name / spec.version
        _record(db, submission_id, author, ladder, spec, staging, folder)
        return submission_id
    except BaseException as error:
        _refuse(db, submission_id, str(error) if isinstance(error, ArenaError)
                else "the service failed while storing it (not the upload's fault)")
        raise
    finally:
        if staging.exists():
            remove_version_folder(staging)


def reserve(db: ServiceDB, author: Author, ladder_id: str, per_hour: int) -> int:
    """Counts the author's submissions of the last hour and, under the limit, takes one (a
    row `receiving`) in the same write transaction: concurrent uploads are counted one after
    another, so no more than `per_hour` get through however many arrive at once."""
    now = time.time()
    with db.transaction() as conn:   # BEGIN IMMEDIATE: one counter at a time
        _within_hourly_limit(conn, author, per_hour, now)
        return conn.execute(
            "INSERT INTO submissions (author_id, ladder, status, created) "
            "VALUES (?, ?, 'receiving', ?)", (author.id, ladder_id, now)).lastrowid


def _within_hourly_limit(conn: sqlite3.Connection, author: Author, per_hour: int,
                         now: float) -> None:
    """SubmissionError (429) when the author has used the hour's submissions; call it in
    the write transaction that then adds the new one."""
    recent, oldest = conn.execute(
        "SELECT COUNT(*), MIN(created) FROM submissions WHERE author_id = ? AND "
        "created > ?", (author.id, now - 3600)).fetchone()
    if recent >= per_hour:
        minutes = max(1, math.ceil((oldest + 3600 - now) / 60))
        raise SubmissionError(f"author {author.name} made {recent} submissions in the last "
                              f"hour (refused ones and re-checks count), the most allowed: "
                              f"try again in {minutes} min", status=429)


def recheck(db: ServiceDB, author: Author, submission_id: int, per_hour: int) -> int:
    """Asks for the one re-check a rejected version may have: a new submission of the same
    version, waiting for its check (counted against the hourly limit like any); returns its
    id. SubmissionError, one line, for anything else."""
    with db.transaction() as conn:   # two requests at once: the second sees the first
        row = conn.execute("SELECT author_id, ladder, bot_name, version_id, status FROM "
                           "submissions WHERE id = ?", (submission_id,)).fetchone()
        if row is None:
            raise SubmissionError(f"no submission {submission_id}", status=404)
        owner, ladder_id, bot_name, version_id, status = row
        if owner != author.id:
            raise SubmissionError(f"submission {submission_id} belongs to another author",
                                  status=403)
        if status != "rejected":
            raise SubmissionError(f"submission {submission_id} is {status}: only a rejected "
                                  "version can be re-checked", status=409)
        checks = conn.execute("SELECT id FROM submissions WHERE version_id = ? ORDER BY id",
                              (version_id,)).fetchall()
        if len(checks) > 1:
            raise SubmissionError(
                f"this version of {bot_name} was re-checked already (submissions "
                f"{' and '.join(str(check[0]) for check in checks)}): a version gets one "
                "re-check; change the bot to submit a new version", status=409)
        newer = conn.execute(
            "SELECT s.id FROM versions v JOIN versions n ON n.bot_id = v.bot_id AND "
            "n.ladder = v.ladder AND n.id > v.id JOIN submissions s ON s.version_id = n.id "
            "WHERE v.id = ? ORDER BY s.id DESC", (version_id,)).fetchone()
        if newer is not None:   # admitted, it would replace the newer one: not what was meant
            raise SubmissionError(f"{bot_name} has a newer version on {ladder_id} (submission "
                                  f"{newer[0]}): only a bot's latest version can be "
                                  "re-checked", status=409)
        now = time.time()
        _within_hourly_limit(conn, author, per_hour, now)
        conn.execute("UPDATE versions SET status = 'checking' WHERE id = ?", (version_id,))
        return conn.execute(
            "INSERT INTO submissions (author_id, ladder, bot_name, version_id, status, reason, "
            "created) VALUES (?, ?, ?, ?, 'checking', ?, ?)",
            (author.id, ladder_id, bot_name, version_id,
             f"re-check of submission {submission_id}", now)).lastrowid


def _refuse(db: ServiceDB, submission_id: int, reason: str) -> None:
    with db.transaction() as conn:
        conn.execute("UPDATE submissions SET status = 'refused', reason = ?, decided = ? "
                     "WHERE id = ?", (reason, time.time(), submission_id))


def refuse_unfinished(db: ServiceDB) -> None:
    """At start-up: uploads a stopped service was still receiving are refused (they stay
    counted), so none is left `receiving` for ever."""
    with db.transaction() as conn:
        conn.execute("UPDATE submissions SET status = 'refused', reason = 'the service "
                     "stopped while receiving it: submit again', decided = ? WHERE "
                     "status = 'receiving'", (time.time(),))


def _manifest(folder: Path, ladder: Ladder):
    from arena.bots import BotSpec   # the manifest reader; reads files, runs nothing
    try:
        spec = BotSpec.load(folder)
    except ArenaError as error:   # its messages name our staging path: name the file only
        raise SubmissionError(str(error).replace(str(folder.resolve()), "the upload")) from None
    try:
        check_name(spec.name, "bot name")
    except ArenaError as error:
        raise SubmissionError(f"{error} (the `name` in bot.toml)") from None
    if ladder.game not in spec.games:
        raise SubmissionError(f"bot {spec.name} does not play {ladder.game} (its bot.toml lists "
                              f"{', '.join(spec.games)}): add it to `games` or choose another "
                              "ladder")
    return spec


def _record(db: ServiceDB, submission_id: int, author: Author, ladder: Ladder, spec,
            staging: Path, folder: Path) -> None:
    now = time.time()
    with db.transaction() as conn:
        bot = conn.execute("SELECT id, retired FROM bots WHERE author_id = ? AND name = ?",
                           (author.id, spec.name)).fetchone()
        if bot and bot[1] is not None:   # a retired bot stays retired: its name is taken
            raise SubmissionError(f"{author.name}/{spec.name} is retired: give the bot another "
                                  "name in its bot.toml to submit it again", status=409)
        bot_id = bot[0] if bot else conn.execute(
            "INSERT INTO bots (author_id, name) VALUES (?, ?)", (author.id, spec.name)).lastrowid
        old = conn.execute("SELECT s.id, s.status FROM versions v JOIN submissions s ON "
                           "s.version_id = v.id WHERE v.bot_id = ? AND v.ladder = ? AND "
                           "v.version = ? ORDER BY s.id DESC",
                           (bot_id, ladder.id, spec.version)).fetchone()
        if old is not None:
            raise SubmissionError(f"this version of {spec.name} ({spec.version[:8]}) was "
                                  f"already submitted to {ladder.id} (submission {old[0]}, "
                                  f"{old[1]}): change the bot to submit a new version",
                                  status=409)
        if not folder.exists():   # the same content on another ladder shares the folder
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.rename(staging, folder)
        try:
            version_id = conn.execute(
                "INSERT INTO versions (bot_id, ladder, version, folder, status, submitted) "
                "VALUES (?, ?, ?, ?, 'checking', ?)",
                (bot_id, ladder.id, spec.version, str(folder), now)).lastrowid
        except sqlite3.IntegrityError:
            raise SubmissionError("this version is being submitted twice at once", 409) from None
        conn.execute("UPDATE submissions SET bot_name = ?, version_id = ?, status = "
                     "'checking' WHERE id = ?", (spec.name, version_id, submission_id))


def decide(db: ServiceDB, submission_id: int, version: Version, verdict: Verdict) -> None:
    """Records a check's verdict; an admitted version replaces its bot's previous one."""
    status = version_status = "admitted" if verdict.passed else "rejected"
    with db.transaction() as conn:
        if conn.execute("SELECT retired FROM bots WHERE id = ?",
                        (version.bot_id,)).fetchone()[0] is not None:
            version_status = "retired"   # retired while it was checked: it plays no more
        if version_status == "admitted":
            conn.execute("UPDATE versions SET status = 'retired' WHERE bot_id = ? AND "
                         "ladder = ? AND status = 'admitted'", (version.bot_id, version.ladder))
        conn.execute("UPDATE versions SET status = ? WHERE id = ?", (version_status, version.id))
        conn.execute("UPDATE submissions SET status = ?, reason = ?, log = ?, decided = ? "
                     "WHERE id = ?", (status, verdict.reason,
                                      verdict.log_excerpt[-LOG_EXCERPT_CHARS:], time.time(),
                                      submission_id))


def checked(check: Check, *, attempts: int = ATTEMPTS, pause: float = RETRY_PAUSE,
            stopping: threading.Event | None = None,
            note: Callable[[str], None] = lambda line: None) -> Verdict:
    """The verdict of `check`, tried again (after `pause`, doubled each time) while it fails
    for a timeout or the host's reasons, up to `attempts` times; a verdict reached after a
    failed attempt says so. Stops early (returning the last verdict) once `stopping` is set.
    `note` gets one line per failed attempt that is tried again."""
    failed: list[Verdict] = []
    for attempt in range(1, attempts + 1):
        verdict = check()
        if verdict.passed or verdict.fault == BOT or attempt == attempts:
            break
        failed.append(verdict)
        wait = pause * 2 ** (attempt - 1)
        note(f"attempt {attempt} of {attempts} failed ({verdict.fault}: {verdict.reason}); "
             f"trying again in {wait:g} s")
        if stopping is None:
            time.sleep(wait)
        elif stopping.wait(wait):
            return verdict
    if not failed:
        return verdict
    history = "; ".join(f"attempt {index}: {earlier.reason}"
                        for index, earlier in enumerate(failed, start=1))
    return Verdict(verdict.passed, f"{verdict.reason} (attempt {len(failed) + 1} of "
                   f"{attempts}; {history})", verdict.log_excerpt, verdict.fault)


class Admission(threading.Thread):
    """The thread that checks waiting submissions, oldest first.

    `check(version, ladder, log_dir)` runs one check; `sample_check(ladder, log_dir)` runs it
    on the sample bot, to tell a host that cannot run checks from a bot that cannot be run.
    """

    def __init__(self, db: ServiceDB, ladders: dict[str, Ladder],
                 check: Callable[[Version, Ladder, Path], Verdict],
                 sample_check: Callable[[Ladder, Path], Verdict],
                 on_admitted: Callable[[], None], *, retry_pause: float = RETRY_PAUSE,
                 host_pause: float = HOST_PAUSE):
        super().__init__(name="arena-serve-admission", daemon=True)
        self.db = db
        self.ladders = ladders
        self.check = check
        self.sample_check = sample_check
        self.on_admitted = on_admitted
        self.retry_pause = retry_pause
        self.host_pause = host_pause
        self.news = threading.Event()
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()
        self.news.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            waiting = self.db.query("SELECT id, version_id, ladder FROM submissions WHERE "
                                    "status = 'checking' ORDER BY id LIMIT 1")
            if not waiting:
                self.news.wait(1.0)
                self.news.clear()
                continue
            submission_id, version_id, ladder_id = waiting[0]
            version = self.db.version(version_id)
            ladder = self.ladders.get(ladder_id)
            if ladder is None:   # a ladder this run does not serve: it waits for one that does
                self.news.wait(5.0)
                continue
            verdict = self.judge(submission_id, version, ladder)
            if self.stopping.is_set():
                return   # a check cut short by the stop: the next start checks it again
            if verdict is None:   # the host cannot run checks: nobody is judged meanwhile
                self.stopping.wait(self.host_pause)
                continue
            decide(self.db, submission_id, version, verdict)
            log.info("submission %d (%s on %s) %s", submission_id, version.label, ladder.id,
                     "admitted" if verdict.passed else "rejected: " + verdict.reason)
            if verdict.passed:
                self.on_admitted()

    def judge(self, submission_id: int, version: Version, ladder: Ladder) -> Verdict | None:
        """The verdict on one submission, with its retries; None when the host cannot run
        checks now (the sample bot fails the same check): the submission waits, unjudged.

        A failure counts against the bot only when the sample bot passes the same check
        right after it: whatever the failure looked like (a bot that cannot start, a crash
        because the sandbox cannot see the interpreter), if the sample bot cannot pass
        either, it is the host's."""
        log_dir = self.db.folder / "checks" / str(submission_id)
        log.info("submission %d (%s on %s): checking", submission_id, version.label, ladder.id)
        verdict = checked(lambda: self._run(self.check, version, ladder, log_dir),
                          pause=self.retry_pause, stopping=self.stopping,
                          note=lambda line: log.info("submission %d: %s", submission_id, line))
        if verdict.passed or self.stopping.is_set():
            return verdict
        sample = self._run(self.sample_check, ladder, self.db.folder / "checks" / "sample")
        if not sample.passed:
            log.warning("submission %d waits: the host cannot run checks (the sample bot fails "
                        "too: %s); trying again in %g s", submission_id, sample.reason,
                        self.host_pause)
            return None
        if verdict.fault == HOST:   # the sample bot runs here: this bot is what cannot
            return Verdict(False, f"{verdict.reason} (the sample bot passes the same check)",
                           verdict.log_excerpt, BOT)
        return verdict

    @staticmethod
    def _run(check: Callable[..., Verdict], *args) -> Verdict:
        try:
            return check(*args)
        except Exception:   # a bug of ours: logged, and never the bot's fault
            log.exception("a check failed inside the arena")
            return Verdict(False, "the check failed inside the arena", "", HOST)

