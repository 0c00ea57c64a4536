"""Arena: a bot-tournament platform. Kept import-light: bots import arena.sdk and arena.v1."""
