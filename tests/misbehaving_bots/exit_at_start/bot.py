"""Exits with status 1 before it even connects to the arena."""
import sys

sys.exit("exit_at_start: giving up before the handshake")
