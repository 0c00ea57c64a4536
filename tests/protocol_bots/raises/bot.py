"""Its code raises at its third move of every match; otherwise it plays the first legal move.

Its error's text carries a terminal escape (clear the screen) and a line break before a forged
result line: the arena must show them as text, never send them to a terminal as they are."""
from arena.sdk import Bot


class Raises(Bot):
    name = "raises"

    def new_match(self, match):
        self.moves = 0

    def act(self, observation, legal_moves):
        self.moves += 1
        if self.moves == 3:
            raise RuntimeError("a bug in the bot\x1b[2J\r\nscores [99, 0] end normal")
        return legal_moves[0]


if __name__ == "__main__":
    Raises().run()
