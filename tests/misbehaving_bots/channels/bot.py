"""At start-up, tries every channel between processes of bots (see probe.py) and logs each
outcome; then plays the first legal move every time."""
import signal

import probe

from arena.sdk import Bot


class Channels(Bot):
    name = "channels"

    def act(self, observation, legal_moves):
        return legal_moves[0]


if __name__ == "__main__":
    signal.signal(signal.SIGIO, signal.SIG_IGN)   # what F_NOTIFY sends when SHARED is read
    probe.tries()
    Channels().run()
