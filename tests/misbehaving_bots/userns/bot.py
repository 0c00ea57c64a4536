"""At start-up, tries to make a user namespace (see probe.py) and logs each outcome; then
plays the first legal move every time."""
import probe

from arena.sdk import Bot


class UserNamespaces(Bot):
    name = "userns"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    probe.tries()
    UserNamespaces().run()
