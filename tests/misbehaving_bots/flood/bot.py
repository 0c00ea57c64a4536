"""Plays legal moves, but at its first act starts three processes that flood the arena's
socket: each holds as many connections as it can open (HTTP/2 preface sent, then silent),
opens new ones as the arena closes them, and tries handshakes with made-up tokens."""
import os
import subprocess
import sys

from arena.sdk import Bot


class Flood(Bot):
    name = "flood"
    flooders: list = []

    def act(self, observation, legal_moves):
        if not self.flooders:
            for _ in range(3):
                self.flooders.append(subprocess.Popen(
                    [sys.executable, "flood_child.py", os.environ["ARENA_SOCKET"]]))
        return legal_moves[0]


if __name__ == "__main__":
    Flood().run()
