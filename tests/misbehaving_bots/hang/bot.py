"""Never answers: its first act sleeps for ever."""
import time

from arena.sdk import Bot


class Hang(Bot):
    name = "hang"

    def act(self, observation, legal_moves):
        while True:
            time.sleep(60)


if __name__ == "__main__":
    Hang().run()
