"""Numbers from stored matches: Elo ratings with intervals (ratings), the SPRT (sprt),
per-bot statistics (botstats) and the text tables that show them (report)."""
import os

# The rating fit solves systems of a few hundred unknowns at most: OpenBLAS's pool of one
# thread per core makes it no faster (`arena bench ratings`, measured) but costs every process
# that imports numpy ~70 ms of CPU, and its threads spin beside the bots after each call.
# OpenBLAS reads this once, when numpy loads: so every arena module that imports numpy
# imports arena.stats first. A value already set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
