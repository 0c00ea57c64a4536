"""Tries to allocate 4 GiB at its first act (the sandbox allows 1 GiB)."""
import sys

from arena.sdk import Bot


class MemoryHog(Bot):
    name = "memory_hog"

    def act(self, observation, legal_moves):
        hoard = bytearray(4 << 30)  # MemoryError under the sandbox's limit
        print(f"memory_hog: allocated {len(hoard)} bytes", file=sys.stderr)
        return legal_moves[0]


if __name__ == "__main__":
    MemoryHog().run()
