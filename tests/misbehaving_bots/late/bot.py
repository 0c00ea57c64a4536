"""Answers every act with a legal move, but half a second after the time it was allowed."""
import time

from arena.sdk import Bot


class Late(Bot):
    name = "late"

    def act(self, observation, legal_moves):
        time.sleep((self.clock.allowed or 0) + 0.5)
        return legal_moves[0]


if __name__ == "__main__":
    Late().run()
