"""Does a proper handshake, then answers its first act with bytes that are no protobuf message.

It talks gRPC itself (no SDK `Bot`): the Play stream is opened with no serializer, so what it
sends goes on the wire as is, as from a bot in another language with a broken encoder.
"""
import os
import queue

import grpc

from arena.v1 import arena_pb2, arena_pb2_grpc

GARBAGE = b"\xff\xfe\xfd this is not a MoveReply \x00\x01\x02" * 8

with grpc.insecure_channel(f"unix:{os.environ['ARENA_SOCKET']}") as channel:
    welcome = arena_pb2_grpc.ArenaStub(channel).Handshake(arena_pb2.HandshakeRequest(
        token=os.environ["ARENA_TOKEN"], protocol_version=arena_pb2.PROTOCOL_VERSION_1,
        bot_name="garbage"), timeout=10, wait_for_ready=True)
    play = channel.stream_stream("/arena.v1.Arena/Play", request_serializer=None,
                                 response_deserializer=arena_pb2.ArenaMessage.FromString)
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    stream = play(iter(outbox.get, None), metadata=(("arena-session", welcome.session),))
    for message in stream:
        if message.WhichOneof("kind") == "act":
            outbox.put(GARBAGE)
