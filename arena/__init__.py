"""Arena: a bot-tournament platform. Kept import-light: bots import arena.sdk and arena.v1."""
import os

GRPC_ENVIRONMENT = {"GRPC_EXPERIMENTS": "-event_engine_client,-event_engine_listener",
                    "GRPC_ENABLE_FORK_SUPPORT": "0"}
"""gRPC's fastest settings, for the arena and its bots. The event engine off: it costs each
decision ~100 µs of CPU in threads of its own on each end of a stream (`arena bench
protocol` measures the floors with and without it). Fork support off, as the event engine
had it: with it, a bot's forked child (multiprocessing, or a fork bomb) resets the gRPC
connection it shares with its parent, which then loses its stream. gRPC reads both once, when
it is first imported: so here, before any arena module or the SDK imports it; the arena gives
them to its bots too. Values already set are kept."""
for _name, _value in GRPC_ENVIRONMENT.items():
    os.environ.setdefault(_name, _value)
