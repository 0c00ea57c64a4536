"""Speaks a protocol version the arena does not."""
from arena.sdk import Bot, bot


class WrongVersion(Bot):
    name = "wrong_version"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    bot.PROTOCOL_VERSION = 99
    WrongVersion().run()
