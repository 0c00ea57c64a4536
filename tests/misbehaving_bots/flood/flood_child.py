"""One flooding process: connections held open, and handshakes with wrong tokens."""
import socket
import sys
import time

import grpc

from arena.v1 import arena_pb2, arena_pb2_grpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")
HELD = 200   # of its 256 descriptors: the rest for gRPC's own (the handshakes)
path = sys.argv[1]
held = []
opened = refused = handshakes = 0
last_report = 0.0
while True:
    if len(held) >= HELD:
        held.pop(0).close()   # let the oldest go and open the next
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(0.05)
    try:
        connection.connect(path)
        connection.sendall(PREFACE)
        held.append(connection)
        opened += 1
    except OSError:
        connection.close()
        refused += 1
    if (opened + refused) % 50 == 0:
        try:
            with grpc.insecure_channel(f"unix:{path}") as channel:
                arena_pb2_grpc.ArenaStub(channel).Handshake(arena_pb2.HandshakeRequest(
                    token="f" * 32, protocol_version=1, bot_name="flood"), timeout=0.2)
        except grpc.RpcError:
            handshakes += 1
    if time.monotonic() - last_report > 1.0:
        last_report = time.monotonic()
        print(f"flood: opened {opened} connections, {refused} refused, {handshakes} handshakes "
              "tried", file=sys.stderr, flush=True)
