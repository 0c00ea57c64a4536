"""Sends itself SIGKILL at its first act (as the kernel would for memory or CPU)."""
import os
import signal

from arena.sdk import Bot


class SigkillSelf(Bot):
    name = "sigkill_self"

    def act(self, observation, legal_moves):
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    SigkillSelf().run()
