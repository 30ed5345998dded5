"""A protobuf message as a plain JSON-ready dict, for answers people read (the admin CLI, the
dashboard): the proto's own (snake_case) field names, every field, 64-bit integers as numbers
(protobuf's JSON mapping would make them strings), map keys sorted, an unset ``optional``
scalar as ``None`` and an unset message field left out."""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message


def _value(fd: FieldDescriptor, v: Any) -> Any:
    if fd.message_type is not None:
        return plain(v)
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(v).decode()
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return fd.enum_type.values_by_number[v].name if v in fd.enum_type.values_by_number else v
    return v


def plain(msg: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fd in msg.DESCRIPTOR.fields:
        v = getattr(msg, fd.name)
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            vf = fd.message_type.fields_by_name["value"]
            out[fd.name] = {k: _value(vf, v[k]) for k in sorted(v)}
        elif fd.is_repeated:
            out[fd.name] = [_value(fd, x) for x in v]
        elif fd.message_type is not None:
            if msg.HasField(fd.name):
                out[fd.name] = plain(v)
        elif fd.has_presence and not msg.HasField(fd.name):
            out[fd.name] = None
        else:
            out[fd.name] = _value(fd, v)
    return out
