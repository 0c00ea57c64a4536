"""Plays one match (the first legal move), then cancels its stream and lingers for ten minutes.

It talks gRPC itself (no SDK `Bot`), as a bot in another language that hangs up between
matches without exiting.
"""
import os
import queue
import time

import grpc

from arena.v1 import arena_pb2, arena_pb2_grpc

with grpc.insecure_channel(f"unix:{os.environ['ARENA_SOCKET']}") as channel:
    stub = arena_pb2_grpc.ArenaStub(channel)
    welcome = stub.Handshake(arena_pb2.HandshakeRequest(
        token=os.environ["ARENA_TOKEN"], protocol_version=arena_pb2.PROTOCOL_VERSION_1,
        bot_name="hangs_up"), timeout=10, wait_for_ready=True)
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    stream = stub.Play(iter(outbox.get, None), metadata=(("arena-session", welcome.session),))
    for message in stream:
        kind = message.WhichOneof("kind")
        if kind == "act":
            outbox.put(arena_pb2.MoveReply(act_id=message.act.act_id,
                                           move=message.act.legal_moves[0]))
        elif kind == "match_over":
            stream.cancel()
            break
    time.sleep(600)
