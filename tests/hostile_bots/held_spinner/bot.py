"""Takes CPU between its moves: at its first act it starts two threads that spin forever, so
whatever the arena lets it run while another bot thinks, it uses. It logs
`held_spinner: spinning` once they run."""
import random
import sys
import threading

from arena.sdk import Bot


def spin() -> None:
    while True:
        pass


class HeldSpinner(Bot):
    name = "held_spinner"
    spinning = False

    def act(self, observation, legal_moves):
        if not self.spinning:
            for _ in range(2):
                threading.Thread(target=spin, daemon=True).start()
            self.spinning = True
            print("held_spinner: spinning", file=sys.stderr, flush=True)
        return random.choice(legal_moves)


if __name__ == "__main__":
    HeldSpinner().run()
