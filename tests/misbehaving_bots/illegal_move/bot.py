"""Answers with a move in the game's notation that is not in the legal-move list."""
from arena.sdk import Bot


class IllegalMove(Bot):
    name = "illegal_move"

    def act(self, observation, legal_moves):
        # A legal move with its numbers changed to 9 names no real mandala, slot or count.
        tokens = legal_moves[0].split()
        move = " ".join("9" if token.lstrip("-").isdigit() else token for token in tokens)
        return move if move not in legal_moves else "pass"


if __name__ == "__main__":
    IllegalMove().run()
