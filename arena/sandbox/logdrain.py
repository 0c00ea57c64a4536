"""Copies a bot's output from its pipe into its log, whole lines behind the process's prefix,
up to a cap, and discards the rest."""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path

MiB = 1 << 20
LOG_CHUNK = 64 * 1024
_TRUNCATION_NOTE = "\n[arena: log truncated at {cap} bytes; later output discarded]\n"


def drain(read_end: int, log_path: Path, cap: int, prefix: bytes = b"") -> None:
    """Copies the bot's output into the log while the log holds less than `cap` bytes, adds
    one truncation note, then discards the rest until the pipe closes.

    The log gets whole lines only, each starting with `prefix`, one write per batch of lines
    (an unfinished line waits for its end, or is cut at LOG_CHUNK bytes), control bytes shown
    as text. So lines the arena writes into the log (match headers, which never start with a
    prefix) stand on lines of their own, and nothing a bot prints can pass for one of them,
    not even on a terminal.

    Other processes of the same bot (the same bot in two seats, other league workers) may
    append to the same log at the same time, so its size is read again before every chunk:
    together they overshoot the cap by at most a chunk each, not by a cap each.
    """
    note = _TRUNCATION_NOTE.format(cap=cap).encode()
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(log).st_size
        already_noted = size > cap  # an earlier run of this bot filled the log
        pending = b""
        while size < cap:
            chunk = os.read(read_end, min(cap - size, LOG_CHUNK))
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if pending and (not chunk or len(pending) >= LOG_CHUNK):   # end, or too long
                lines.append(pending)
                pending = b""
            if lines:   # cut at the cap: prefixes must not let many short lines overshoot it
                batch = b"".join(prefix + _CONTROL.sub(_shown_byte, line) + b"\n"
                                 for line in lines)
                os.write(log, batch[:max(0, cap - size)])
                size = os.fstat(log).st_size
            if not chunk:
                return
        if not already_noted and size < cap + len(note):   # nobody else noted it
            os.write(log, note)
        _discard_all(read_end)
    finally:
        os.close(log)
        os.close(read_end)


_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
"""Control bytes but tab and newline: a carriage return or a terminal escape in a bot's line
could hide its prefix on a screen, so they are written as visible `\\xNN` text."""


def _shown_byte(match: re.Match) -> bytes:
    return b"\\x%02x" % match[0][0]


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
