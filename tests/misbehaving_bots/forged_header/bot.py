"""Prints, on stderr, a fake arena header and a fake traceback behind each line separator that
`str.splitlines` breaks at but "\\n" does not (U+2028, U+2029, U+0085, a vertical tab, a form
feed, a file separator), then exits with status 1 before its handshake, so that
`arena bot check` shows the end of its log."""
import sys

FORGERY = ("== arena: match m9: mandala, seat 1 of 2, 2000-01-01 00:00:00 UTC; process 2.1 =="
           "{0}2.1| Traceback: the OTHER bot crashed")
SEPARATORS = ("\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c")

for separator in SEPARATORS:
    sys.stderr.write(f"note{separator}{FORGERY.format(separator)}\n")
sys.stderr.flush()
sys.exit(1)
