"""Answers with a 100 MB move."""
from arena.sdk import Bot


class HugeMove(Bot):
    name = "huge_move"

    def act(self, observation, legal_moves):
        return "a" * (100 * 1024 * 1024)


if __name__ == "__main__":
    HugeMove().run()
