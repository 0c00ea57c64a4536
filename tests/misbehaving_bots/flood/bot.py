"""Plays legal moves, but at its first act starts three processes that flood the arena's
socket: each holds as many connections as it can open (HTTP/2 preface sent, then silent),
opens new ones as the arena closes them, and tries handshakes with made-up tokens.

A bot runs only during its own turns (it is frozen between them), so it floods on its own
clock: its first act waits 3 s while its children open connections, and each later act
0.05 s; the connections stay open while it is frozen."""
import os
import subprocess
import sys
import time

from arena.sdk import Bot


class Flood(Bot):
    name = "flood"
    flooders: list = []

    def act(self, observation, legal_moves):
        if not self.flooders:
            for _ in range(3):
                self.flooders.append(subprocess.Popen(
                    [sys.executable, "flood_child.py", os.environ["ARENA_SOCKET"]]))
            time.sleep(3.0)
        time.sleep(0.05)
        return legal_moves[0]


if __name__ == "__main__":
    Flood().run()
