"""Copies a bot's output from its pipe into its log, up to a cap, and discards the rest."""
from __future__ import annotations

import errno
import os
from pathlib import Path

MiB = 1 << 20
LOG_CHUNK = 64 * 1024
_TRUNCATION_NOTE = "\n[arena: log truncated at {cap} bytes; later output discarded]\n"


def drain(read_end: int, log_path: Path, cap: int) -> None:
    """Copies the bot's output into the log while the log holds less than `cap` bytes, adds
    one truncation note, then discards the rest until the pipe closes.

    Other processes of the same bot (the same bot in two seats, other league workers) may
    append to the same log at the same time, so its size is read again before every chunk:
    together they overshoot the cap by at most a chunk each, not by a cap each.
    """
    note = _TRUNCATION_NOTE.format(cap=cap).encode()
    try:
        with open(log_path, "ab") as log:
            size = os.fstat(log.fileno()).st_size
            already_noted = size > cap  # an earlier run of this bot filled the log
            while size < cap:
                chunk = os.read(read_end, min(cap - size, LOG_CHUNK))
                if not chunk:
                    return
                log.write(chunk)
                log.flush()
                size = os.fstat(log.fileno()).st_size
            if not already_noted and size < cap + len(note):   # nobody else noted it
                log.write(note)
                log.flush()
        _discard_all(read_end)
    finally:
        os.close(read_end)


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
