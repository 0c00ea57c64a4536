"""Write a bot: subclass `Bot`, implement `act`, call `run()`.

    from arena.sdk import Bot

    class First(Bot):
        name = "first"
        def act(self, observation, legal_moves):
            return legal_moves[0]

    if __name__ == "__main__":
        First().run()

`run()` reads ARENA_SOCKET and ARENA_TOKEN from the environment (the arena sets both when it
starts the bot), does the handshake and serves the arena's stream until the arena closes it.
`act` gets the observation as the same plain dict an in-process strategy gets, and the legal
moves in notation; it returns one of them. During `act`, `self.clock` holds the seat's clock,
`self.match` the current match and `self.ply` the act's ply (its index in the match record,
as `arena replay` and `arena debug --ply` number it). An `act` that declares a parameter
`ply` also gets it as that argument: `def act(self, observation, legal_moves, ply)`.

If the bot's own code raises (in `act` or a hook), the traceback goes to stderr and the bot
keeps serving: for `act` it tells the arena it has no move (a MoveReply with `error`), which
forfeits that match at once with reason "error" instead of waiting for the deadline; the
next match is played normally.

This module imports only grpc, protobuf, arena.v1 and arena.sdk: a bot runs in a sandbox that holds
nothing else of the arena.
"""
from __future__ import annotations

import asyncio
import inspect
import os
import sys
import traceback
from dataclasses import dataclass

import grpc

from arena.sdk.messages import message_to_dict
from arena.v1 import arena_pb2, arena_pb2_grpc

PROTOCOL_VERSION = arena_pb2.PROTOCOL_VERSION_1
HANDSHAKE_TIMEOUT = 30.0   # seconds; the arena's own start-up budget is what really counts
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Clock:
    """The seat's clock for the current decision, in seconds; None where there is no limit."""

    remaining: float | None   # left in the bank
    move_limit: float | None  # the per-move limit
    allowed: float | None     # what this decision may take


@dataclass(frozen=True)
class Match:
    """The facts of the current match (arena.v1.NewMatch, times in seconds)."""

    match_id: str
    game: str
    options: dict            # option key -> value text
    seat: int
    players: int
    move_time: float | None
    bank: float | None
    increment: float
    rng_seed: int            # for the bot's own random choices; same match, same seed


def _takes_ply(act) -> bool:
    """True when a bot's `act` declares a parameter `ply` (or takes **keywords)."""
    try:
        parameters = inspect.signature(act).parameters.values()
    except (TypeError, ValueError):   # a callable without a signature: the classic call
        return False
    return any(p.name == "ply" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _seconds(millis: int) -> float | None:
    return millis / 1000 if millis else None


def observation_dict(act: arena_pb2.ActRequest) -> dict:
    """The act's typed observation as the engine's plain dict (all fields, even empty ones):
    what json_format.MessageToDict(preserving_proto_field_name=True,
    always_print_fields_with_no_presence=True) gives, computed faster."""
    field = act.WhichOneof("observation")
    if field is None:
        return {}
    return message_to_dict(getattr(act, field))


class Bot:
    """Base class of a bot. Override `act`; the hooks are optional."""

    name = "bot"
    version = ""
    games: tuple[str, ...] = ()   # game ids this bot plays; empty means any

    def __init__(self) -> None:
        self.match: Match | None = None
        self.clock: Clock | None = None
        self.ply: int | None = None
        """The ply of the act being answered (None outside `act`)."""
        self.games_played = 0
        self._act_takes_ply: bool | None = None

    # -- what a bot author writes ------------------------------------------------------------
    def act(self, observation: dict, legal_moves: list[str]) -> str:
        """One move, equal to one of `legal_moves` (sorted, never empty). An override may
        add a parameter `ply` to be given the act's ply (also in `self.ply`)."""
        raise NotImplementedError("a bot must implement act(observation, legal_moves)")

    def new_match(self, match: Match) -> None:
        """Called when a match starts, before its first act."""

    def match_over(self, result: dict) -> None:
        """Called when a match ends: {"scores", "ranks", "end", and "forfeit" if any}."""

    # -- serving -----------------------------------------------------------------------------
    def run(self) -> None:
        """Connects to the arena named by the environment and serves until it is done."""
        socket_path, token = os.environ.get("ARENA_SOCKET"), os.environ.get("ARENA_TOKEN")
        if not socket_path or not token:
            sys.exit("bot: ARENA_SOCKET and ARENA_TOKEN are not set; the arena starts bots "
                     "(e.g. `arena play GAME --bot path/to/this/bot --bot random`)")
        asyncio.run(self._run(socket_path, token))

    async def _run(self, socket_path: str, token: str) -> None:
        # One thread does it all: read a message, answer it, write the reply. (gRPC's sync
        # client would send from a thread of its own, one more hand-over per move.)
        # No bandwidth-delay probing: on a local socket it only wakes gRPC's threads between
        # moves (its pings' timers took a held bot 1-5 ms of CPU in a gap, measured).
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.http2.bdp_probe", 0)]
        async with grpc.aio.insecure_channel(f"unix:{socket_path}", options=options) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            try:
                welcome = await stub.Handshake(arena_pb2.HandshakeRequest(
                    token=token, protocol_version=PROTOCOL_VERSION, bot_name=self.name,
                    bot_version=self.version, games=list(self.games),
                    games_played=self.games_played), timeout=HANDSHAKE_TIMEOUT,
                    wait_for_ready=True)
            except grpc.aio.AioRpcError as error:
                sys.exit(f"bot {self.name}: handshake refused: {error.code().name}: "
                         f"{error.details()}")
            stream = stub.Play(metadata=(("arena-session", welcome.session),))
            try:
                while (message := await stream.read()) is not grpc.aio.EOF:
                    kind = message.WhichOneof("kind")
                    if kind == "act":
                        await stream.write(self._answer(message.act))
                    elif kind == "new_match":
                        self._start(message.new_match)
                    elif kind == "match_over":
                        self._finish(message.match_over)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.CANCELLED:
                    print(f"bot {self.name}: stream ended: {error.code().name}: "
                          f"{error.details()}", file=sys.stderr)

    def _answer(self, act: arena_pb2.ActRequest) -> arena_pb2.MoveReply:
        self.clock = Clock(_seconds(act.clock.remaining_ms), _seconds(act.clock.move_limit_ms),
                           _seconds(act.clock.allowed_ms))
        self.ply = act.ply
        try:
            if self._act_takes_ply is None:   # asked once: a signature costs microseconds
                self._act_takes_ply = _takes_ply(self.act)
            if self._act_takes_ply:
                move = self.act(observation_dict(act), list(act.legal_moves), ply=act.ply)
            else:   # the two-argument act every bot had before the ply was given
                move = self.act(observation_dict(act), list(act.legal_moves))
            if not isinstance(move, str):
                raise TypeError(f"act returned {type(move).__name__} {move!r}, not a move string")
            return arena_pb2.MoveReply(act_id=act.act_id, move=move)
        except Exception as error:  # the bot's own bug: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            return arena_pb2.MoveReply(act_id=act.act_id,
                                       error=f"{type(error).__name__}: {error}"[:1000] or "error")
        finally:
            self.ply = None

    def _start(self, new: arena_pb2.NewMatch) -> None:
        tc = new.time_control
        self.match = Match(match_id=new.match_id, game=new.game, options=dict(new.options),
                           seat=new.seat, players=new.players,
                           move_time=_seconds(tc.move_time_ms), bank=_seconds(tc.bank_ms),
                           increment=tc.increment_ms / 1000, rng_seed=new.rng_seed)
        self._hook(self.new_match, self.match)

    def _finish(self, over: arena_pb2.MatchOver) -> None:
        result = {"scores": list(over.scores), "ranks": list(over.ranks), "end": over.end}
        if over.end == "forfeit":
            result["forfeit"] = {"seat": over.forfeit_seat, "reason": over.forfeit_reason}
        self.games_played += 1
        self._hook(self.match_over, result)

    def _hook(self, hook, argument) -> None:
        try:
            hook(argument)
        except Exception:  # a failing optional hook costs nothing but its log lines
            traceback.print_exc(file=sys.stderr)
