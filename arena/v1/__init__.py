"""Generated protocol code (`python -m arena.protogen` from proto/arena/v1/); never edit."""
