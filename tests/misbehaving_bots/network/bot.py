"""At its first act, tries to connect to TCP port argv[1] on 127.0.0.1; then plays on."""
import socket
import sys

from arena.sdk import Bot


class Network(Bot):
    name = "network"
    tried = False

    def act(self, observation, legal_moves):
        if not self.tried:
            self.tried = True
            try:
                with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2) as c:
                    c.sendall(b"escaped")
                print("network: connected", file=sys.stderr)
            except OSError as error:
                print(f"network: no connection: {error}", file=sys.stderr)
        return legal_moves[0]


if __name__ == "__main__":
    Network().run()
