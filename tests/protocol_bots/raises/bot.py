"""Its code raises at its third move of every match; otherwise it plays the first legal move."""
from arena.sdk import Bot


class Raises(Bot):
    name = "raises"

    def new_match(self, match):
        self.moves = 0

    def act(self, observation, legal_moves):
        self.moves += 1
        if self.moves == 3:
            raise RuntimeError("a bug in the bot")
        return legal_moves[0]


if __name__ == "__main__":
    Raises().run()
