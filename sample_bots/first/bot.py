"""Sample bot `first`: plays the first of the legal moves (they come sorted), in every game."""
from arena.sdk import Bot


class FirstBot(Bot):
    name = "first"
    version = "1"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    FirstBot().run()
