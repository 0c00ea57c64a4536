"""Copies a bot's output from its pipe into its log, whole lines behind the process's prefix,
up to a cap, and discards the rest; `log_text` and `log_lines` read a log back.

A log's lines end at "\n" and nowhere else: every other character that Python's
`str.splitlines` (or a terminal, or a browser) breaks a line at is written as visible text, so
no bot can start a line of its own that passes for one the arena writes (`== arena: ... ==`).
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import time
from pathlib import Path
from typing import Iterator

MiB = 1 << 20
LOG_CHUNK = 64 * 1024
DRAIN_PAUSE = 0.02
"""Seconds the drain waits, once it has emptied the pipe, before it reads again: the arena
writes a line into the pipe at each act (`arena.actlogs`), and a drain woken for each would
cost every decision a thread's wake-up (~50 µs of CPU); in 20 ms many acts' lines are read
in one go (`arena bench protocol`, by thread: 44 µs of the drain's CPU a decision with 5 ms,
7 µs with 20 ms). The pipe (1 MiB, the log's cap) holds what a bot prints meanwhile; only a
bot that prints more than that in 20 ms waits for the drain."""
_TRUNCATION_NOTE = "\n[arena: log truncated at {cap} bytes; later output discarded]\n"


def drain(read_end: int, log_path: Path, cap: int, prefix: bytes = b"",
          nonce: bytes = b"") -> None:
    """Copies the bot's output into the log while the log holds less than `cap` bytes, adds
    one truncation note, then discards the rest until the pipe closes.

    The log gets whole lines only, each starting with `prefix`, one write per batch of lines
    (an unfinished line waits for its end, or is cut at LOG_CHUNK bytes), control bytes and
    the line separators U+0085, U+2028 and U+2029 shown as text. So lines the arena writes
    into the log (match headers, which never start with a prefix) stand on lines of their
    own, and nothing a bot prints can pass for one of them, not even on a terminal.

    The arena writes its own lines into the same pipe, in order with the bot's output (see
    `arena.actlogs`): `nonce` + kind + line + "\n", one write (atomic, under PIPE_BUF bytes).
    The drain writes such a line without the prefix (after, on a line of its own, what the
    bot left unfinished before it): at once (kind ALWAYS), or only before the bot's next line
    (kind BEFORE_OUTPUT: an act's line costs no log space while the bot prints nothing).
    `nonce` is the arena's secret (the bot cannot read the pipe or the arena's memory), so
    no bot can write an arena line.

    Other processes of the same bot (the same bot in two seats, other league workers) may
    append to the same log at the same time: each batch, and the note, is appended under the
    log's lock (`locked`), so together they fill it to the cap exactly and note it once.
    """
    note = _TRUNCATION_NOTE.format(cap=cap).encode()
    try:   # never through a link: one planted there would aim the bot's lines at any file
        log = os.open(log_path, LOG_FLAGS, 0o644)
    except OSError:   # the arena said so already (arena.bots.process): keep the bot unblocked
        try:
            _discard_all(read_end)
        finally:
            os.close(read_end)
        return
    try:
        size = os.fstat(log).st_size
        already_noted = size > cap  # an earlier run of this bot filled the log
        pending = b""
        lines_of = _LogLines(prefix, nonce)
        while size < cap:
            chunk = os.read(read_end, min(cap - size, LOG_CHUNK))
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if pending and (not chunk or len(pending) >= LOG_CHUNK):   # end, or too long
                lines.append(pending)
                pending = b""
            if lines:   # cut at the cap: prefixes must not let many short lines overshoot it
                size = _append(log, lines_of.logged(lines), cap)
            if not chunk:
                return
            if len(chunk) < LOG_CHUNK:   # the pipe is empty: let more gather
                time.sleep(DRAIN_PAUSE)
        if not already_noted:
            with locked(log) as size:
                if size <= cap:   # nobody else noted it: only a note passes the cap
                    os.write(log, note)
        _discard_all(read_end)
    finally:
        os.close(log)
        os.close(read_end)


def _append(log: int, data: bytes, cap: int) -> int:
    """Appends what of `data` fits under `cap`, under the log's lock. Returns the log's size
    after."""
    with locked(log) as size:
        return size + os.write(log, data[:max(0, cap - size)])


@contextlib.contextmanager
def locked(log: int) -> Iterator[int]:
    """Holds the lock of the open log `log`, giving its size: every writer of a bot's log
    (its drains, the arena's lines before the bot runs) reads the size and writes under it,
    as one step, so that together they keep the cap and note it once."""
    fcntl.flock(log, fcntl.LOCK_EX)
    try:
        yield os.fstat(log).st_size
    finally:
        fcntl.flock(log, fcntl.LOCK_UN)


LOG_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
"""How a bot's log is opened for writing, by the drain and by the arena's own lines."""
ALWAYS = b"="          # an arena line written at once
BEFORE_OUTPUT = b"?"   # an arena line written only before the bot's next line


class _LogLines:
    """Lines from the pipe as the log gets them: the bot's behind `prefix`, the arena's (after
    `nonce`) as they are, both with their control bytes shown as text."""

    def __init__(self, prefix: bytes, nonce: bytes):
        self.prefix = prefix
        self.nonce = nonce
        self.waiting = b""   # the last BEFORE_OUTPUT line, until the bot prints a line

    def logged(self, lines: list[bytes]) -> bytes:
        out = []
        for line in lines:
            if self.nonce and self.nonce in line:
                before, _, arena_line = line.partition(self.nonce)
                if before:
                    out.append(self.bot_line(before))
                kind, text = arena_line[:1], _CONTROL.sub(_shown_bytes, arena_line[1:]) + b"\n"
                self.waiting = text if kind == BEFORE_OUTPUT else b""
                if kind != BEFORE_OUTPUT:
                    out.append(text)
            else:
                out.append(self.bot_line(line))
        return b"".join(out)

    def bot_line(self, line: bytes) -> bytes:
        waiting, self.waiting = self.waiting, b""
        return waiting + self.prefix + _CONTROL.sub(_shown_bytes, line) + b"\n"


_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")
"""Control bytes but tab and newline, the UTF-8 of the C1 controls U+0080-U+009F (U+0085 a line
separator, U+009B and U+009D a terminal's CSI and OSC) and of the line separators U+2028 and
U+2029: a carriage return, a terminal escape or a separator in a bot's line could hide its
prefix on a screen or start a line of its own for a reader that splits on it, so they are
written as visible `\\xNN` or `\\uNNNN` text."""
_SEPARATORS = re.compile("[\r\x0b\x0c\x1c-\x1e\x80-\x9f\u2028\u2029]")
"""What `str.splitlines` breaks a line at, but "\\n", and the other C1 controls."""


def _shown(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _shown_bytes(match: re.Match) -> bytes:
    return _shown(match[0].decode("utf-8", "surrogateescape")).encode()


def log_text(path: str | os.PathLike) -> str:
    """A log's text as readers should show it: bad bytes replaced, no newline translated (a
    text-mode read would turn a lone carriage return into one), and every character that
    `str.splitlines` breaks at but "\\n" shown as text, like the drain's (for a log written
    before the drain escaped them all): so its lines are its "\\n" lines, however split."""
    text = Path(path).read_bytes().decode(errors="replace")
    return _SEPARATORS.sub(lambda match: _shown(match[0]), text)


def log_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a log (see `log_text`)."""
    return log_text(path).splitlines()


def _discard_all(read_end: int) -> None:
    """Throws away the pipe's input until it closes."""
    with open(os.devnull, "wb") as sink:
        try:
            # splice moves pipe pages to /dev/null without copying them through Python.
            while os.splice(read_end, sink.fileno(), MiB):
                pass
        except OSError as error:
            if error.errno not in (errno.EINVAL, errno.ENOSYS):
                raise
            while os.read(read_end, MiB):
                pass
