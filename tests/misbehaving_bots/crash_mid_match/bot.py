"""Plays two legal moves, then its process dies (exit status 1) at its third act."""
import os

from arena.sdk import Bot


class CrashMidMatch(Bot):
    name = "crash_mid_match"

    def new_match(self, match):
        self.moves = 0

    def act(self, observation, legal_moves):
        self.moves += 1
        if self.moves == 3:
            os._exit(1)
        return legal_moves[0]


if __name__ == "__main__":
    CrashMidMatch().run()
