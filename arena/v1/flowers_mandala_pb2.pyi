from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FlowersMandalaCards(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class FlowersMandalaSide(_message.Message):
    __slots__ = ("face_up", "face_down")
    FACE_UP_FIELD_NUMBER: _ClassVar[int]
    FACE_DOWN_FIELD_NUMBER: _ClassVar[int]
    face_up: _containers.RepeatedScalarFieldContainer[str]
    face_down: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, face_up: _Optional[_Iterable[str]] = ..., face_down: _Optional[_Iterable[str]] = ...) -> None: ...

class FlowersMandalaMandala(_message.Message):
    __slots__ = ("number", "dark_tile", "light_tile", "claim", "present", "sides")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    DARK_TILE_FIELD_NUMBER: _ClassVar[int]
    LIGHT_TILE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    PRESENT_FIELD_NUMBER: _ClassVar[int]
    SIDES_FIELD_NUMBER: _ClassVar[int]
    number: int
    dark_tile: str
    light_tile: str
    claim: int
    present: _containers.RepeatedScalarFieldContainer[str]
    sides: _containers.RepeatedCompositeFieldContainer[FlowersMandalaSide]
    def __init__(self, number: _Optional[int] = ..., dark_tile: _Optional[str] = ..., light_tile: _Optional[str] = ..., claim: _Optional[int] = ..., present: _Optional[_Iterable[str]] = ..., sides: _Optional[_Iterable[_Union[FlowersMandalaSide, _Mapping]]] = ...) -> None: ...

class FlowersMandalaFlower(_message.Message):
    __slots__ = ("tiles",)
    TILES_FIELD_NUMBER: _ClassVar[int]
    tiles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tiles: _Optional[_Iterable[str]] = ...) -> None: ...

class FlowersMandalaTableau(_message.Message):
    __slots__ = ("singles", "flowers", "points")
    SINGLES_FIELD_NUMBER: _ClassVar[int]
    FLOWERS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    singles: _containers.RepeatedScalarFieldContainer[str]
    flowers: _containers.RepeatedCompositeFieldContainer[FlowersMandalaFlower]
    points: int
    def __init__(self, singles: _Optional[_Iterable[str]] = ..., flowers: _Optional[_Iterable[_Union[FlowersMandalaFlower, _Mapping]]] = ..., points: _Optional[int] = ...) -> None: ...

class FlowersMandalaObservation(_message.Message):
    __slots__ = ("seat", "players", "draw_rule", "turn", "decision", "to_move", "destroying", "second", "hand", "hand_sizes", "known_hands", "deck_size", "discard", "dark_stack_size", "light_stack_size", "mandalas", "tableaus", "left_game", "passes", "end_order")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DRAW_RULE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    DESTROYING_FIELD_NUMBER: _ClassVar[int]
    SECOND_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    KNOWN_HANDS_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DARK_STACK_SIZE_FIELD_NUMBER: _ClassVar[int]
    LIGHT_STACK_SIZE_FIELD_NUMBER: _ClassVar[int]
    MANDALAS_FIELD_NUMBER: _ClassVar[int]
    TABLEAUS_FIELD_NUMBER: _ClassVar[int]
    LEFT_GAME_FIELD_NUMBER: _ClassVar[int]
    PASSES_FIELD_NUMBER: _ClassVar[int]
    END_ORDER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    draw_rule: str
    turn: int
    decision: str
    to_move: int
    destroying: int
    second: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    known_hands: _containers.RepeatedCompositeFieldContainer[FlowersMandalaCards]
    deck_size: int
    discard: _containers.RepeatedScalarFieldContainer[str]
    dark_stack_size: int
    light_stack_size: int
    mandalas: _containers.RepeatedCompositeFieldContainer[FlowersMandalaMandala]
    tableaus: _containers.RepeatedCompositeFieldContainer[FlowersMandalaTableau]
    left_game: _containers.RepeatedScalarFieldContainer[str]
    passes: int
    end_order: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., draw_rule: _Optional[str] = ..., turn: _Optional[int] = ..., decision: _Optional[str] = ..., to_move: _Optional[int] = ..., destroying: _Optional[int] = ..., second: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., known_hands: _Optional[_Iterable[_Union[FlowersMandalaCards, _Mapping]]] = ..., deck_size: _Optional[int] = ..., discard: _Optional[_Iterable[str]] = ..., dark_stack_size: _Optional[int] = ..., light_stack_size: _Optional[int] = ..., mandalas: _Optional[_Iterable[_Union[FlowersMandalaMandala, _Mapping]]] = ..., tableaus: _Optional[_Iterable[_Union[FlowersMandalaTableau, _Mapping]]] = ..., left_game: _Optional[_Iterable[str]] = ..., passes: _Optional[int] = ..., end_order: _Optional[_Iterable[int]] = ...) -> None: ...
