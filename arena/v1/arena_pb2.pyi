from arena.v1 import flowers_pb2 as _flowers_pb2
from arena.v1 import flowers_mandala_pb2 as _flowers_mandala_pb2
from arena.v1 import mandala_pb2 as _mandala_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProtocolVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROTOCOL_VERSION_UNSPECIFIED: _ClassVar[ProtocolVersion]
    PROTOCOL_VERSION_1: _ClassVar[ProtocolVersion]
PROTOCOL_VERSION_UNSPECIFIED: ProtocolVersion
PROTOCOL_VERSION_1: ProtocolVersion

class HandshakeRequest(_message.Message):
    __slots__ = ("token", "protocol_version", "bot_name", "bot_version", "games", "games_played")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    GAMES_PLAYED_FIELD_NUMBER: _ClassVar[int]
    token: str
    protocol_version: int
    bot_name: str
    bot_version: str
    games: _containers.RepeatedScalarFieldContainer[str]
    games_played: int
    def __init__(self, token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., games_played: _Optional[int] = ...) -> None: ...

class HandshakeReply(_message.Message):
    __slots__ = ("session", "protocol_version")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    session: str
    protocol_version: int
    def __init__(self, session: _Optional[str] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class ArenaMessage(_message.Message):
    __slots__ = ("new_match", "act", "match_over")
    NEW_MATCH_FIELD_NUMBER: _ClassVar[int]
    ACT_FIELD_NUMBER: _ClassVar[int]
    MATCH_OVER_FIELD_NUMBER: _ClassVar[int]
    new_match: NewMatch
    act: ActRequest
    match_over: MatchOver
    def __init__(self, new_match: _Optional[_Union[NewMatch, _Mapping]] = ..., act: _Optional[_Union[ActRequest, _Mapping]] = ..., match_over: _Optional[_Union[MatchOver, _Mapping]] = ...) -> None: ...

class NewMatch(_message.Message):
    __slots__ = ("match_id", "game", "options", "seat", "players", "time_control", "rng_seed")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    RNG_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    options: _containers.ScalarMap[str, str]
    seat: int
    players: int
    time_control: TimeControl
    rng_seed: int
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seat: _Optional[int] = ..., players: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., rng_seed: _Optional[int] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("move_time_ms", "bank_ms", "increment_ms")
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_MS_FIELD_NUMBER: _ClassVar[int]
    move_time_ms: int
    bank_ms: int
    increment_ms: int
    def __init__(self, move_time_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., increment_ms: _Optional[int] = ...) -> None: ...

class ActRequest(_message.Message):
    __slots__ = ("act_id", "match_id", "ply", "mandala", "flowers_mandala", "flowers", "legal_moves", "clock")
    ACT_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    MANDALA_FIELD_NUMBER: _ClassVar[int]
    FLOWERS_MANDALA_FIELD_NUMBER: _ClassVar[int]
    FLOWERS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_MOVES_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    act_id: int
    match_id: str
    ply: int
    mandala: _mandala_pb2.MandalaObservation
    flowers_mandala: _flowers_mandala_pb2.FlowersMandalaObservation
    flowers: _flowers_pb2.FlowersObservation
    legal_moves: _containers.RepeatedScalarFieldContainer[str]
    clock: Clock
    def __init__(self, act_id: _Optional[int] = ..., match_id: _Optional[str] = ..., ply: _Optional[int] = ..., mandala: _Optional[_Union[_mandala_pb2.MandalaObservation, _Mapping]] = ..., flowers_mandala: _Optional[_Union[_flowers_mandala_pb2.FlowersMandalaObservation, _Mapping]] = ..., flowers: _Optional[_Union[_flowers_pb2.FlowersObservation, _Mapping]] = ..., legal_moves: _Optional[_Iterable[str]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("remaining_ms", "move_limit_ms", "allowed_ms")
    REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    MOVE_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_MS_FIELD_NUMBER: _ClassVar[int]
    remaining_ms: int
    move_limit_ms: int
    allowed_ms: int
    def __init__(self, remaining_ms: _Optional[int] = ..., move_limit_ms: _Optional[int] = ..., allowed_ms: _Optional[int] = ...) -> None: ...

class MoveReply(_message.Message):
    __slots__ = ("act_id", "move", "error")
    ACT_ID_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    act_id: int
    move: str
    error: str
    def __init__(self, act_id: _Optional[int] = ..., move: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class MatchOver(_message.Message):
    __slots__ = ("match_id", "scores", "ranks", "end", "forfeit_seat", "forfeit_reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_SEAT_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    end: str
    forfeit_seat: int
    forfeit_reason: str
    def __init__(self, match_id: _Optional[str] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., end: _Optional[str] = ..., forfeit_seat: _Optional[int] = ..., forfeit_reason: _Optional[str] = ...) -> None: ...
