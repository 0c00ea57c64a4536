"""Computes only in long gaps: from its first act on, a thread spins whenever 0.2 s have
passed since its last answer (between matches, when it rests for a second or more), and
sleeps otherwise, so the short gaps between two moves of a match see nothing of it. It logs
`gap_spinner: spinning` once the thread runs."""
import random
import sys
import threading
import time

from arena.sdk import Bot

QUIET = 0.2   # seconds after an answer before it spins


class GapSpinner(Bot):
    name = "gap_spinner"
    answered = 0.0
    thread = None

    def spin(self) -> None:
        while True:
            if time.monotonic() - self.answered > QUIET:
                pass   # spin: whatever the arena lets it run while it rests
            else:
                time.sleep(0.01)

    def act(self, observation, legal_moves):
        if self.thread is None:
            self.thread = threading.Thread(target=self.spin, daemon=True)
            self.thread.start()
            print("gap_spinner: spinning", file=sys.stderr, flush=True)
        self.answered = time.monotonic()
        return random.choice(legal_moves)


if __name__ == "__main__":
    GapSpinner().run()
