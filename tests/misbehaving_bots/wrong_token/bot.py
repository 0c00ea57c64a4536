"""Presents a token of its own making instead of the one the arena gave it."""
import os

from arena.sdk import Bot


class WrongToken(Bot):
    name = "wrong_token"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    os.environ["ARENA_TOKEN"] = "0" * 32
    WrongToken().run()
