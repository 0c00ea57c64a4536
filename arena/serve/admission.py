"""Submissions: storing an upload as a new version, checking it, and admitting or rejecting it.

`submit` (called by the web app) takes an author's upload for one ladder: it first counts
and reserves the submission against the author's hourly limit in one write transaction
(refused uploads stay counted), then unpacks the upload safely into a staging folder, reads
its manifest, and moves it to `bots/<author>/<name>/<content hash>/` (read-only) as a new
version waiting for its check. The `Admission` thread checks waiting versions one at a time in the sandbox, then
in one transaction admits the version (retiring the author's previous version of that bot on
that ladder: its matches and history stay) or rejects it with the reason and the bot's log
excerpt, which only its author sees. A restart checks again whatever was waiting.
"""
from __future__ import annotations

import math
import os
import secrets
import sqlite3
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from arena.errors import ArenaError
from arena.serve.authors import Author, check_name
from arena.serve.db import Ladder, ServiceDB, Version
from arena.serve.uploads import UploadLimits, remove_version_folder, unpack

LOG_EXCERPT_CHARS = 4000


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
        recent, oldest = conn.execute(
            "SELECT COUNT(*), MIN(created) FROM submissions WHERE author_id = ? AND "
            "created > ?", (author.id, now - 3600)).fetchone()
        if recent >= per_hour:
            minutes = max(1, math.ceil((oldest + 3600 - now) / 60))
            raise SubmissionError(f"author {author.name} made {recent} submissions in the "
                                  f"last hour (refused ones count), the most allowed: try "
                                  f"again in {minutes} min", status=429)
        return conn.execute(
            "INSERT INTO submissions (author_id, ladder, status, created) "
            "VALUES (?, ?, 'receiving', ?)", (author.id, ladder_id, now)).lastrowid


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
        bot = conn.execute("SELECT id FROM bots WHERE author_id = ? AND name = ?",
                           (author.id, spec.name)).fetchone()
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
    status = "admitted" if verdict.passed else "rejected"
    with db.transaction() as conn:
        if verdict.passed:
            conn.execute("UPDATE versions SET status = 'retired' WHERE bot_id = ? AND "
                         "ladder = ? AND status = 'admitted'", (version.bot_id, version.ladder))
        conn.execute("UPDATE versions SET status = ? WHERE id = ?", (status, version.id))
        conn.execute("UPDATE submissions SET status = ?, reason = ?, log = ?, decided = ? "
                     "WHERE id = ?", (status, verdict.reason,
                                      verdict.log_excerpt[-LOG_EXCERPT_CHARS:], time.time(),
                                      submission_id))


class Admission(threading.Thread):
    """The thread that checks waiting submissions, oldest first."""

    def __init__(self, db: ServiceDB, ladders: dict[str, Ladder],
                 check: Callable[[Version, Ladder, Path], Verdict],
                 on_admitted: Callable[[], None]):
        super().__init__(name="arena-serve-admission", daemon=True)
        self.db = db
        self.ladders = ladders
        self.check = check
        self.on_admitted = on_admitted
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
            log_dir = self.db.folder / "checks" / str(submission_id)
            try:
                verdict = self.check(version, ladder, log_dir)
            except ArenaError as error:
                verdict = Verdict(False, f"the check could not run: {error}", "")
            except Exception:
                traceback.print_exc()
                verdict = Verdict(False, "the check failed inside the arena (not the bot's "
                                  "fault): submit again later", "")
            decide(self.db, submission_id, version, verdict)
            print(f"arena serve: submission {submission_id} ({version.label} on {ladder.id}) "
                  f"{'admitted' if verdict.passed else 'rejected: ' + verdict.reason}",
                  file=sys.stderr)
            if verdict.passed:
                self.on_admitted()
