from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MandalaArea(_message.Message):
    __slots__ = ("mountain", "fields")
    MOUNTAIN_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    mountain: _containers.RepeatedScalarFieldContainer[str]
    fields: _containers.RepeatedCompositeFieldContainer[MandalaCards]
    def __init__(self, mountain: _Optional[_Iterable[str]] = ..., fields: _Optional[_Iterable[_Union[MandalaCards, _Mapping]]] = ...) -> None: ...

class MandalaCards(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class MandalaPlayer(_message.Message):
    __slots__ = ("river", "hand_size", "cup_size", "cup_taken")
    RIVER_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    CUP_SIZE_FIELD_NUMBER: _ClassVar[int]
    CUP_TAKEN_FIELD_NUMBER: _ClassVar[int]
    river: _containers.RepeatedScalarFieldContainer[str]
    hand_size: int
    cup_size: int
    cup_taken: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, river: _Optional[_Iterable[str]] = ..., hand_size: _Optional[int] = ..., cup_size: _Optional[int] = ..., cup_taken: _Optional[_Iterable[str]] = ...) -> None: ...

class MandalaObservation(_message.Message):
    __slots__ = ("seat", "to_move", "phase", "destroying", "completed_by", "hand", "mandalas", "players", "discard", "deck_size", "passes", "end")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DESTROYING_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_BY_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    MANDALAS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    PASSES_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    seat: int
    to_move: int
    phase: str
    destroying: int
    completed_by: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    mandalas: _containers.RepeatedCompositeFieldContainer[MandalaArea]
    players: _containers.RepeatedCompositeFieldContainer[MandalaPlayer]
    discard: _containers.RepeatedScalarFieldContainer[str]
    deck_size: int
    passes: int
    end: str
    def __init__(self, seat: _Optional[int] = ..., to_move: _Optional[int] = ..., phase: _Optional[str] = ..., destroying: _Optional[int] = ..., completed_by: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., mandalas: _Optional[_Iterable[_Union[MandalaArea, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[MandalaPlayer, _Mapping]]] = ..., discard: _Optional[_Iterable[str]] = ..., deck_size: _Optional[int] = ..., passes: _Optional[int] = ..., end: _Optional[str] = ...) -> None: ...
