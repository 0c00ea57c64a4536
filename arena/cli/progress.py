"""The progress of a long run (a league's matches, an A/B test's pairs, a ladder site's
replays) on one line, and the one way such a run is interrupted.

`Progress` wraps click's progress bar: `[####....] 5/24  1.2 matches/s  ETA 00:00:16`, after
a label and before a status the command gives (a league's leader, a test's LLR). On a
terminal click redraws the line in place (at most 5 times a second); elsewhere (logs, CI) a
line is printed at every tenth of the run and at least every LOG_SECONDS, and the last one
at the end.

`stopped_cleanly` makes `kill` (SIGTERM) stop a run as Ctrl-C does: what is stored stays,
the command says what it kept and how to go on, and exits with status 130.
"""
from __future__ import annotations

import math
import signal
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TextIO

import click

LOG_SECONDS = 60.0


class Progress:
    """`done` of `total` units done so far; `advance()` as each one comes in. `label` says
    what the run does, before the bar."""

    WIDTH = 24

    def __init__(self, total: int, done: int, *, unit: str, stream: TextIO | None,
                 status: Callable[[], str] | None = None, label: str = ""):
        self.unit, self.stream, self.status = unit, stream, status
        self.bar = click.progressbar(
            length=total, label=f"{label} " if label else "", width=self.WIDTH, fill_char="#",
            empty_char=".", bar_template="%(label)s[%(bar)s] %(info)s", show_pos=True,
            show_percent=False,
            show_eta=False,   # click's ETA counts the units done before this run as its own
            item_show_func=lambda _: self._info(), file=stream or sys.stderr)
        self.bar.pos = self.start_done = done
        self.live = bool(stream is not None and stream.isatty())
        self.started = self.last_at = time.monotonic()
        self.drawn_at, self.logged_pos, self.logged_at = 0.0, done, self.started
        self.tenth = self._tenth()

    def advance(self, units: int = 1) -> None:
        self.bar.make_step(units)
        now = self.last_at = time.monotonic()
        if self.stream is None:
            return
        if self.live and (now - self.drawn_at >= 0.2 or self.bar.finished):
            self.drawn_at = now
            self.bar.render_progress()
        elif not self.live and (self._tenth() > self.tenth or now - self.logged_at
                                >= LOG_SECONDS):
            self.tenth = self._tenth()
            self._log()

    def line(self) -> str:
        return self.bar.format_progress_line()

    def finish(self) -> None:
        if self.stream is None:
            return
        if self.live:
            self.bar.render_progress()
            self.bar.render_finish()
        elif self.bar.pos != self.logged_pos:
            self._log()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finish()

    def _info(self) -> str:
        elapsed = self.last_at - self.started
        rate = (self.bar.pos - self.start_done) / elapsed if elapsed > 0 else 0.0
        left = (self.bar.length - self.bar.pos) / rate if rate > 0 else math.inf
        eta = "--:--" if math.isinf(left) else time.strftime("%H:%M:%S", time.gmtime(left))
        status = f"  {self.status()}" if self.status is not None else ""
        return f"{rate:.1f} {self.unit}/s  ETA {eta}{status}"

    def _tenth(self) -> int:
        return self.bar.pos * 10 // max(self.bar.length, 1)

    def _log(self) -> None:
        self.logged_pos, self.logged_at = self.bar.pos, time.monotonic()
        self.stream.write(self.line() + "\n")
        self.stream.flush()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextmanager
def stopped_cleanly(kept: Callable[[], str]) -> Iterator[None]:
    """Runs the block with SIGTERM turned into Ctrl-C; on either, prints `kept()` (what is
    stored and how to go on) and exits with status 130, no traceback."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    except KeyboardInterrupt:
        click.echo(kept(), err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
