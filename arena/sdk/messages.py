"""Protocol messages to plain dicts, fast: what a bot's `act` receives as its observation.

`message_to_dict(m)` equals `json_format.MessageToDict(m, preserving_proto_field_name=True,
always_print_fields_with_no_presence=True)` (tests/test_proto_observations.py checks it on
every observation of every game) but runs several times faster, because it is compiled once
per message type from the descriptor instead of interpreting it on every call. Field types
it does not handle itself (floats, bytes, 64-bit integers, maps, well-known types) send the
whole message to json_format, so the result is the same either way.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

_PLAIN = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32,
          FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_BOOL,
          FieldDescriptor.TYPE_STRING}
_WELL_KNOWN_PREFIX = "google.protobuf."


def message_to_dict(message) -> dict:
    converter = _converter(message.DESCRIPTOR)
    if converter is None:
        return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    return converter(message)


@functools.cache
def _converter(descriptor: Descriptor) -> Callable[[Any], dict] | None:
    """A function message -> dict for this type, or None when json_format must do it."""
    if descriptor.full_name.startswith(_WELL_KNOWN_PREFIX):
        return None
    steps: list[Callable[[Any, dict], None]] = []
    for field in descriptor.fields:
        step = _step(field)
        if step is None:
            return None
        steps.append(step)

    def convert(message) -> dict:
        out: dict = {}
        for step in steps:
            step(message, out)
        return out
    return convert


def _step(field: FieldDescriptor) -> Callable[[Any, dict], None] | None:
    name = field.name
    # `is_repeated` replaced `label` in protobuf 6/7; either says the same.
    repeated = (field.is_repeated if hasattr(field, "is_repeated")
                else field.label == FieldDescriptor.LABEL_REPEATED)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.GetOptions().map_entry:
            return None
        inner = _converter(field.message_type)
        if inner is None:
            return None
        if repeated:
            return lambda message, out: out.__setitem__(
                name, [inner(item) for item in getattr(message, name)])
        return _with_presence(name, lambda message: inner(getattr(message, name)))
    if field.type == FieldDescriptor.TYPE_ENUM:
        values = field.enum_type.values_by_number

        def enum_name(number: int):
            value = values.get(number)
            return value.name if value is not None else number
        if repeated:
            return lambda message, out: out.__setitem__(
                name, [enum_name(number) for number in getattr(message, name)])
        value_of = lambda message: enum_name(getattr(message, name))  # noqa: E731
    elif field.type in _PLAIN:
        if repeated:
            return lambda message, out: out.__setitem__(name, list(getattr(message, name)))
        value_of = lambda message: getattr(message, name)  # noqa: E731
    else:
        return None
    if field.has_presence:
        return _with_presence(name, value_of)
    return lambda message, out: out.__setitem__(name, value_of(message))


def _with_presence(name: str, value_of: Callable[[Any], Any]) -> Callable[[Any, dict], None]:
    """A field that can be unset (message, optional, oneof member): left out when unset."""
    def step(message, out: dict) -> None:
        if message.HasField(name):
            out[name] = value_of(message)
    return step
