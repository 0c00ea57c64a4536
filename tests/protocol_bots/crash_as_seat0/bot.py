"""Dies at its first move whenever it sits in seat 0; plays the first legal move in seat 1."""
import os

from arena.sdk import Bot


class CrashAsSeat0(Bot):
    name = "crash_as_seat0"

    def act(self, observation, legal_moves):
        if self.match.seat == 0:
            os._exit(3)
        return legal_moves[0]


if __name__ == "__main__":
    CrashAsSeat0().run()
