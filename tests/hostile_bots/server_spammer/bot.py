"""At its third move, starts threads that call the arena's server with handshakes it refuses
(a wrong token), over and over, and spins until the deadline: the arena's own process then
works for it, and if the arena counted that as the host's load, a pinned worker's core
would look held by others and the timeout would be voided instead of charged. It logs how
many handshakes were refused, to show it did make the arena work."""
import os
import sys
import threading

import grpc

from arena.sdk import Bot
from arena.v1 import arena_pb2, arena_pb2_grpc

SPAMMERS = 8
refused = [0]


def spam() -> None:
    request = arena_pb2.HandshakeRequest(token="wrong", protocol_version=1, bot_name="spam")
    while True:
        with grpc.insecure_channel("unix:" + os.environ["ARENA_SOCKET"]) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            for _ in range(50):
                try:
                    stub.Handshake(request, timeout=1)
                except grpc.RpcError:
                    refused[0] += 1
                    if refused[0] % 500 == 0:
                        print(f"server_spammer: {refused[0]} handshakes refused",
                              file=sys.stderr, flush=True)


class ServerSpammer(Bot):
    name = "server_spammer"

    def new_match(self, match):
        self.moves = 0

    def act(self, observation, legal_moves):
        self.moves += 1
        if self.moves == 3:
            for _ in range(SPAMMERS):
                threading.Thread(target=spam, daemon=True).start()
            while True:   # on its own clock, to its deadline
                pass
        return legal_moves[0]


if __name__ == "__main__":
    ServerSpammer().run()
