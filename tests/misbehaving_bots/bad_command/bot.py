"""Never runs: the manifest's command is `python9`, which no system has."""
from arena.sdk import Bot


class BadCommand(Bot):
    name = "bad_command"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    BadCommand().run()
