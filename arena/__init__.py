"""Arena: a bot-tournament platform. Kept import-light: bots import arena.sdk and arena.v1."""
import os

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
"""gRPC's event engine off: it costs each decision ~100 µs of CPU in threads of its own on
each end of a stream (`arena bench protocol` measures the floors with and without it). gRPC
reads the setting once, when it is first imported: so here, before any arena module or the
SDK imports it; the arena gives it to its bots too. A value already set is kept."""
os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)
