from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FlowersCell(_message.Message):
    __slots__ = ("x", "y", "cards")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    x: int
    y: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, x: _Optional[int] = ..., y: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class FlowersGarden(_message.Message):
    __slots__ = ("seat", "cells")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cells: _containers.RepeatedCompositeFieldContainer[FlowersCell]
    def __init__(self, seat: _Optional[int] = ..., cells: _Optional[_Iterable[_Union[FlowersCell, _Mapping]]] = ...) -> None: ...

class FlowersObservation(_message.Message):
    __slots__ = ("seat", "players", "to_move", "phase", "gardens", "pile_sizes", "pile_tops", "drawn_card", "drawn_from", "turns")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    GARDENS_FIELD_NUMBER: _ClassVar[int]
    PILE_SIZES_FIELD_NUMBER: _ClassVar[int]
    PILE_TOPS_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FROM_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    to_move: int
    phase: str
    gardens: _containers.RepeatedCompositeFieldContainer[FlowersGarden]
    pile_sizes: _containers.RepeatedScalarFieldContainer[int]
    pile_tops: _containers.RepeatedScalarFieldContainer[str]
    drawn_card: str
    drawn_from: int
    turns: int
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., to_move: _Optional[int] = ..., phase: _Optional[str] = ..., gardens: _Optional[_Iterable[_Union[FlowersGarden, _Mapping]]] = ..., pile_sizes: _Optional[_Iterable[int]] = ..., pile_tops: _Optional[_Iterable[str]] = ..., drawn_card: _Optional[str] = ..., drawn_from: _Optional[int] = ..., turns: _Optional[int] = ...) -> None: ...
