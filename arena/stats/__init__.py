"""Numbers from stored matches: Elo ratings with intervals (ratings), the SPRT (sprt),
per-bot statistics (botstats) and the text tables that show them (report)."""
