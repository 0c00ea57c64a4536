"""Arena bot `__BOT_NAME__` (made by `arena bot new`): plays a random legal move in every game.

Edit `act` to play better; README.md says how to try it.
"""
import random
import sys

from arena.sdk import Bot


class Starter(Bot):
    name = "__BOT_NAME__"
    version = "1"

    def new_match(self, match):
        # Seeded by the arena per match: the same match replays the same moves.
        self.rng = random.Random(match.rng_seed)
        print(f"{match.match_id}: {match.game}, seat {match.seat} of {match.players}",
              file=sys.stderr)   # stderr goes to the bot's log

    def act(self, observation, legal_moves):
        # observation: what this seat sees, as a dict (docs/observations.md); the game is
        # self.match.game. legal_moves: the sorted legal moves (docs/notation.md).
        # Return one of them, well within self.clock.allowed seconds.
        return self.rng.choice(legal_moves)

    def match_over(self, result):
        print(f"ranks {result['ranks']} ({result['end']})", file=sys.stderr)


if __name__ == "__main__":
    Starter().run()
