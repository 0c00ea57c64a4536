"""Protocol messages to plain dicts, fast: what a bot's `act` receives as its observation.

`message_to_dict(m)` equals `json_format.MessageToDict(m, preserving_proto_field_name=True,
always_print_fields_with_no_presence=True)` (tests/test_proto_observations.py checks it on
every observation of every game) but runs several times faster, because it is compiled once
per message type from the descriptor into the source of one function (as `dataclasses` and
`namedtuple` do) instead of interpreting the descriptor on every call: one dict display of
the fields' values, reading each attribute once. Field types it does not handle itself
(floats, bytes, 64-bit integers, maps, well-known types) send the whole message to
json_format, so the result is the same either way.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from google.protobuf.descriptor import Descriptor, FieldDescriptor

_PLAIN = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32,
          FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_BOOL,
          FieldDescriptor.TYPE_STRING}
_WELL_KNOWN_PREFIX = "google.protobuf."


def message_to_dict(message) -> dict:
    converter = _converter(message.DESCRIPTOR)
    if converter is None:
        # imported here: it costs a bot ~10 ms at start-up, and no arena message needs it
        from google.protobuf import json_format
        return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    return converter(message)


@functools.cache
def _converter(descriptor: Descriptor) -> Callable[[Any], dict] | None:
    """A function message -> dict for this type, or None when json_format must do it.

    Its source, for a message with fields `a` (int) and `b` (repeated Inner):
        def convert(m):
            return {"a": m.a, "b": [convert_0(x) for x in m.b]}
    and with a field `c` that can be unset (a message, optional, a oneof's) after them:
        def convert(m):
            out = {}
            out.update({"a": m.a, "b": [convert_0(x) for x in m.b]})
            if m.HasField("c"):
                out["c"] = m.c
            return out
    so the dict keeps the fields' order."""
    if descriptor.full_name.startswith(_WELL_KNOWN_PREFIX):
        return None
    names: dict[str, Any] = {}   # what the source refers to: inner converters, enum tables
    lines = ["def convert(m):", "    out = {}"]
    pending: list[str] = []      # "key": value entries not yet written out

    def flush() -> None:
        if pending:
            lines.append(f"    out.update({{{', '.join(pending)}}})")
            pending.clear()
    for field in descriptor.fields:
        value = _value_source(field, names)
        if value is None:
            return None
        if field.has_presence:
            flush()
            lines.append(f"    if m.HasField({field.name!r}):")
            lines.append(f"        out[{field.name!r}] = {value}")
        else:
            pending.append(f"{field.name!r}: {value}")
    if len(lines) == 2:   # no field can be unset: one dict display
        lines[1] = f"    return {{{', '.join(pending)}}}"
    else:
        flush()
        lines.append("    return out")
    namespace: dict[str, Any] = dict(names)
    exec("\n".join(lines), namespace)   # the source is built from descriptor names only
    return namespace["convert"]


def _value_source(field: FieldDescriptor, names: dict[str, Any]) -> str | None:
    """The expression of `field`'s value in a converter's source (`m` the message), with the
    objects it names added to `names`; None when json_format must convert the message."""
    read = f"m.{field.name}"
    # `is_repeated` replaced `label` in protobuf 6/7; either says the same.
    repeated = (field.is_repeated if hasattr(field, "is_repeated")
                else field.label == FieldDescriptor.LABEL_REPEATED)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.GetOptions().map_entry:
            return None
        inner = _converter(field.message_type)
        if inner is None:
            return None
        name = f"convert_{len(names)}"
        names[name] = inner
        return f"[{name}(x) for x in {read}]" if repeated else f"{name}({read})"
    if field.type == FieldDescriptor.TYPE_ENUM:
        name = f"enum_{len(names)}"
        value_names = {number: value.name
                       for number, value in field.enum_type.values_by_number.items()}
        # an unknown number (a newer sender) stays a number, as json_format gives it
        names[name] = lambda number: value_names.get(number, number)
        return f"[{name}(x) for x in {read}]" if repeated else f"{name}({read})"
    if field.type in _PLAIN:
        return f"list({read})" if repeated else read
    return None
