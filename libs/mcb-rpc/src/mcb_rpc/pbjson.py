"""The world protocol's JSON form of protobuf messages, fast on its hot messages.

``json_format.MessageToDict``/``ParseDict`` walk every field in Python with every check; on a
100,000-block apply they cost the stack ~10 s of CPU (the host parsing 196 ``batch_apply``
requests and writing 1,000 ``events_since`` pages, the journal parsing them back). This module
gives the **same** dicts and messages for messages made only of plain fields (integers, bool,
string, bytes, enums, floats, nested and repeated messages of the same) from a plan built once per
message type, and hands everything else to ``json_format`` unchanged:

* a message type with a map, a real oneof, extensions, a closed enum or an enum value with a JSON
  name, or a ``google.protobuf`` well-known type (or a message holding one) is always done by
  ``json_format``;
* ``parse`` takes its fast path only for values of exactly the expected JSON type and range; any
  other value (a number as a string, ``null``, a float, an unknown enum name, URL-safe base64, ...)
  re-parses the whole message with ``ParseDict``, which accepts it or raises its own
  ``ParseError``. So the fast path can only agree with ``json_format``; a property test over
  every message of the five mcb protocols holds it to that.

Output matches ``MessageToDict(msg, always_print_fields_with_no_presence=True)``, key order
included; input matches ``ParseDict(data, cls(), ignore_unknown_fields=...)``.

It is also the project's one conversion between protobuf messages and plain data: the same plan of
a message type (built once for every type, maps and oneofs included) prints the two plain forms
people read, both with the proto's own snake_case field names, 64-bit integers as numbers, enums
by name, bytes as standard base64 and map keys sorted:

* ``plain``: every field; an unset ``optional`` scalar is ``None``, an unset message field left
  out (the admin CLI, the dashboard);
* ``compact``: numbers and bools always, strings, lists and maps only when non-empty, an unset
  message field left out (what the model reads, through the bridge's ``render``);

and it holds the one converter of ``mcb.common.v1.Vec3``/``Box`` to and from
``mcb_common.geometry`` values, ``{x, y, z}`` dicts and tuples (``vec3_pb``, ``box_pb``,
``vec3_of``, ``box_of``, ``vec3_dict``, ``box_dict``). It imports no transport (grpc, httpx,
redis), so the journal's pure core may use it (the import contracts in pyproject.toml).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.internal import type_checkers
from google.protobuf.message import Message
from mcb.common.v1 import common_pb2
from mcb_common.geometry import Box, Vec3

M = TypeVar("M", bound=Message)

_T = FieldDescriptor
_INT32 = {
    _T.TYPE_INT32: (-(2**31), 2**31 - 1),
    _T.TYPE_SINT32: (-(2**31), 2**31 - 1),
    _T.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    _T.TYPE_UINT32: (0, 2**32 - 1),
    _T.TYPE_FIXED32: (0, 2**32 - 1),
}
_INT64 = {
    _T.TYPE_INT64: (-(2**63), 2**63 - 1),
    _T.TYPE_SINT64: (-(2**63), 2**63 - 1),
    _T.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    _T.TYPE_UINT64: (0, 2**64 - 1),
    _T.TYPE_FIXED64: (0, 2**64 - 1),
}

_FLOAT_MAX = float.fromhex("0x1.fffffep+127")  # ParseDict's bounds of a float (32-bit) field
_FLOAT_MIN = -_FLOAT_MAX

# field kinds of a plan
_K_INT, _K_INT64, _K_BOOL, _K_STR, _K_BYTES, _K_ENUM, _K_MSG, _K_DOUBLE, _K_FLOAT, _K_MAP = range(10)


class _Slow(Exception):
    """This value is not for the fast path: parse the whole message with ParseDict."""


class _Field:
    __slots__ = (
        "name",
        "json_name",
        "kind",
        "repeated",
        "presence",
        "lo",
        "hi",
        "sub",
        "enum_names",
        "enum_numbers",
        "default",
        "number",
        "plain",
        "map_value",
    )

    def __init__(self, f: FieldDescriptor, sub: _Plan | None):
        self.name = f.name
        self.number = f.number
        self.json_name = f.json_name
        self.repeated = f.is_repeated
        self.presence = (not self.repeated) and f.has_presence
        self.sub = sub
        self.map_value: _Field | None = None  # a map's value field (its entry's "value")
        self.lo = self.hi = 0
        self.enum_names: dict[int, str] = {}
        self.enum_numbers: dict[str, int] = {}
        t = f.type
        if t in _INT32:
            self.kind = _K_INT
            self.lo, self.hi = _INT32[t]
        elif t in _INT64:
            self.kind = _K_INT64
            self.lo, self.hi = _INT64[t]
        elif t == _T.TYPE_BOOL:
            self.kind = _K_BOOL
        elif t == _T.TYPE_DOUBLE:
            self.kind = _K_DOUBLE
        elif t == _T.TYPE_FLOAT:
            self.kind = _K_FLOAT
        elif t == _T.TYPE_STRING:
            self.kind = _K_STR
        elif t == _T.TYPE_BYTES:
            self.kind = _K_BYTES
        elif t == _T.TYPE_ENUM:
            self.kind = _K_ENUM
            # the name MessageToDict prints for a number (with allow_alias, the descriptor's choice)
            self.enum_names = {n: v.name for n, v in f.enum_type.values_by_number.items()}
            self.enum_numbers = {v.name: v.number for v in f.enum_type.values}
        elif sub is not None and f.message_type.GetOptions().map_entry:
            self.kind = _K_MAP
            self.repeated = False
            self.map_value = sub.by_key["value"]
        else:
            self.kind = _K_MSG
        self.plain = not self.repeated and self.kind in (_K_INT, _K_BOOL, _K_STR)  # printed as it is
        # what MessageToDict prints for an unset field without presence (a repeated one: a new [])
        self.default = (
            None if self.repeated or self.presence or self.kind in (_K_MSG, _K_MAP) else _value(self, f.default_value)
        )


def _simple_enum(e: EnumDescriptor) -> bool:
    """An open enum whose values print as their names (no json_name option on any value)."""
    return not e.is_closed and not any(v.GetOptions().ListFields() for v in e.values)


class _Plan:
    __slots__ = ("by_key", "defaults", "numbered", "fields", "wire")

    def __init__(self) -> None:
        self.by_key: dict[str, _Field] = {}
        self.defaults: list[_Field] = []  # fields without presence, in declaration order
        self.numbered: list[_Field] = []  # every field by field number
        self.fields: list[_Field] = []  # every field in declaration order
        self.wire = False  # the fast JSON path may do it (else json_format must)


_plans: dict[str, _Plan] = {}


def _plan(desc: Descriptor) -> _Plan:
    """The plan of a message type; ``wire`` False when json_format must do its JSON form."""
    if desc.full_name in _plans:
        return _plans[desc.full_name]
    plan = _Plan()
    _plans[desc.full_name] = plan  # a recursive type stays with json_format (wire still False below)
    # well-known types have JSON forms of their own; extensions print as "[name]"; a real oneof:
    # ParseDict checks that one member is set at most
    wire = not (
        desc.full_name.startswith("google.protobuf.")
        or desc.extension_ranges
        or desc.GetOptions().map_entry
        or any(len(o.fields) > 1 or o.name != "_" + o.fields[0].name for o in desc.oneofs)
    )
    for f in desc.fields:
        sub = None
        if f.type == _T.TYPE_GROUP or (f.type == _T.TYPE_ENUM and not _simple_enum(f.enum_type)):
            wire = False
        if f.message_type is not None:
            sub = _plan(f.message_type)
            wire = wire and sub.wire
        field = _Field(f, sub)
        plan.fields.append(field)
        plan.by_key[f.json_name] = field
        plan.by_key.setdefault(f.name, field)
        if not field.presence:
            plan.defaults.append(field)
    plan.numbered = sorted(plan.fields, key=lambda x: x.number)
    plan.wire = wire
    return plan


def _plan_of(cls: type[Message]) -> _Plan:
    return _plan(cls.DESCRIPTOR)


# ---------------------------------------------------------------------------- encode


def _one(f: _Field, v: Any) -> Any:
    """One value of field ``f`` (an element, for a repeated field) as MessageToDict prints it."""
    k = f.kind
    if k == _K_MSG:
        assert f.sub is not None
        return _encode(f.sub, v)
    if k == _K_INT64:
        return str(v)
    if k == _K_BYTES:
        return base64.b64encode(v).decode("ascii")
    if k == _K_ENUM:
        return f.enum_names.get(v, v)
    if k == _K_DOUBLE or k == _K_FLOAT:
        return _float_out(k, v)
    return v


def _value(f: _Field, v: Any) -> Any:
    if not f.repeated:
        return _one(f, v)
    if f.kind in (_K_INT, _K_BOOL, _K_STR):
        return list(v)
    return [_one(f, x) for x in v]


def _encode(plan: _Plan, msg: Message) -> dict[str, Any]:
    """MessageToDict's walk: the fields that are set, in field-number order (its ListFields), then
    the defaults of unset fields without presence in declaration order, so even the key order is its."""
    out: dict[str, Any] = {}
    unset = False
    for f in plan.numbered:
        if f.presence:
            if not msg.HasField(f.name):
                continue
            v = getattr(msg, f.name)
        else:
            v = getattr(msg, f.name)
            if not v and (f.kind < _K_DOUBLE or f.repeated or math.copysign(1.0, v) > 0):  # -0.0 is set
                unset = True
                continue
        out[f.json_name] = v if f.plain else _value(f, v)
    if unset:
        for f in plan.defaults:
            if f.json_name not in out:
                out[f.json_name] = [] if f.repeated else f.default
    return out


def _float_out(kind: int, v: float) -> float | str:
    if math.isinf(v):
        return "-Infinity" if v < 0 else "Infinity"
    if math.isnan(v):
        return "NaN"
    return type_checkers.ToShortestFloat(v) if kind == _K_FLOAT else v


def to_json(msg: Message) -> dict[str, Any]:
    """``MessageToDict(msg, always_print_fields_with_no_presence=True)``, faster."""
    plan = _plan_of(type(msg))
    if not plan.wire:
        return json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)
    return _encode(plan, msg)


# ---------------------------------------------------------------------------- decode


def _scalar(f: _Field, v: Any) -> Any:
    k = f.kind
    tv = type(v)
    if k == _K_INT:
        if tv is not int or not f.lo <= v <= f.hi:
            raise _Slow
        return v
    if k == _K_STR:
        if tv is not str:
            raise _Slow
        return v
    if k == _K_BOOL:
        if tv is not bool:
            raise _Slow
        return v
    if k == _K_INT64:
        if tv is str:
            if not (v.isdigit() or (v[:1] == "-" and v[1:].isdigit())) or not v.isascii():
                raise _Slow
            n = int(v)
        elif tv is int:
            n = v
        else:
            raise _Slow
        if not f.lo <= n <= f.hi:
            raise _Slow
        return n
    if k == _K_ENUM:
        if tv is str and v in f.enum_numbers:
            return f.enum_numbers[v]
        raise _Slow
    if k == _K_DOUBLE or k == _K_FLOAT:
        if tv is float:
            if not math.isfinite(v):
                raise _Slow
        elif tv is not int or not -(2**53) <= v <= 2**53:
            raise _Slow
        if k == _K_FLOAT and not _FLOAT_MIN <= v <= _FLOAT_MAX:
            raise _Slow
        return float(v)
    if k == _K_BYTES:  # standard alphabet only (validate=True): URL-safe text goes to ParseDict
        if tv is not str:
            raise _Slow
        try:
            return base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise _Slow from None
    raise _Slow


def _fill(plan: _Plan, data: Any, msg: Message, ignore_unknown: bool) -> None:
    if type(data) is not dict:
        raise _Slow
    by_key = plan.by_key
    seen: set[str] = set()
    for key, v in data.items():
        f = by_key.get(key)
        if f is None:
            if ignore_unknown and type(key) is str and not key.startswith("["):
                continue
            raise _Slow
        if f.name in seen:  # both the json name and the proto name: ParseDict decides (the last one wins)
            raise _Slow
        seen.add(f.name)
        if f.repeated:
            if type(v) is not list:
                raise _Slow
            target = getattr(msg, f.name)
            if f.kind == _K_MSG:
                sub = f.sub
                assert sub is not None
                for item in v:
                    _fill(sub, item, target.add(), ignore_unknown)
            else:
                target.extend([_scalar(f, x) for x in v])
        elif f.kind == _K_MSG:
            assert f.sub is not None
            sub_msg = getattr(msg, f.name)
            sub_msg.SetInParent()
            _fill(f.sub, v, sub_msg, ignore_unknown)
        else:
            setattr(msg, f.name, _scalar(f, v))


def parse(data: Any, cls: type[M], ignore_unknown_fields: bool = False) -> M:
    """``ParseDict(data, cls(), ignore_unknown_fields=...)``, faster; raises ``json_format.ParseError``
    exactly where ParseDict does (by letting ParseDict parse what the fast path does not take)."""
    plan = _plan_of(cls)
    if plan.wire:
        msg = cls()
        try:
            _fill(plan, data, msg, ignore_unknown_fields)
            return msg
        except (_Slow, ValueError, TypeError):  # e.g. a string protobuf refuses: ParseDict's answer
            pass
    return json_format.ParseDict(data, cls(), ignore_unknown_fields=ignore_unknown_fields)


# ---------------------------------------------------------------------------- plain data

Special = Mapping[str, Callable[[Message], Any]]


def _plain_one(f: _Field, v: Any, compact_form: bool, special: Special) -> Any:
    k = f.kind
    if k == _K_MSG:
        assert f.sub is not None
        return _plain(f.sub, v, compact_form, special)
    if k == _K_BYTES:
        return base64.b64encode(v).decode("ascii")
    if k == _K_ENUM:
        return f.enum_names.get(v, v)
    return v


def _plain(plan: _Plan, msg: Message, compact_form: bool, special: Special) -> Any:
    if special:
        fn = special.get(msg.DESCRIPTOR.full_name)
        if fn is not None:
            return fn(msg)
    out: dict[str, Any] = {}
    for f in plan.fields:
        v = getattr(msg, f.name)
        if f.kind == _K_MAP:
            if v or not compact_form:
                vf = f.map_value
                assert vf is not None
                out[f.name] = {key: _plain_one(vf, v[key], compact_form, special) for key in sorted(v)}
        elif f.repeated:
            if v or not compact_form:
                out[f.name] = [_plain_one(f, x, compact_form, special) for x in v]
        elif f.kind == _K_MSG:
            if msg.HasField(f.name):
                out[f.name] = _plain_one(f, v, compact_form, special)
        elif compact_form:
            if v or f.kind != _K_STR:
                out[f.name] = _plain_one(f, v, compact_form, special)
        elif f.presence and not msg.HasField(f.name):
            out[f.name] = None
        else:
            out[f.name] = _plain_one(f, v, compact_form, special)
    return out


def plain(msg: Message) -> dict[str, Any]:
    """Every field by its proto name: an unset ``optional`` scalar as ``None``, an unset message
    field left out (for answers people read: the admin CLI, the dashboard)."""
    out: dict[str, Any] = _plain(_plan_of(type(msg)), msg, False, {})
    return out


def compact(msg: Message, special: Special | None = None) -> Any:
    """By proto name: numbers and bools always, strings, lists and maps only when non-empty, an
    unset message field left out. ``special`` maps a message type's full name to its own form
    (for that type wherever it occurs)."""
    return _plain(_plan_of(type(msg)), msg, True, special or {})


# ---------------------------------------------------------------------------- Vec3 and Box


def vec3_pb(p: Vec3 | tuple[int, int, int] | list[int] | Mapping[str, Any]) -> common_pb2.Vec3:
    """A ``mcb.common.v1.Vec3`` from a ``Vec3``, an ``(x, y, z)`` tuple or an ``{x, y, z}`` dict."""
    if isinstance(p, Vec3):
        return common_pb2.Vec3(x=p.x, y=p.y, z=p.z)
    if isinstance(p, Mapping):
        return common_pb2.Vec3(x=int(p["x"]), y=int(p["y"]), z=int(p["z"]))
    return common_pb2.Vec3(x=int(p[0]), y=int(p[1]), z=int(p[2]))


def box_pb(b: Box | Mapping[str, Any]) -> common_pb2.Box:
    """A ``mcb.common.v1.Box`` from a ``Box`` or a ``{min, max}`` dict (corners as they are)."""
    if isinstance(b, Box):
        return common_pb2.Box(min=vec3_pb(b.min), max=vec3_pb(b.max))
    return common_pb2.Box(min=vec3_pb(b["min"]), max=vec3_pb(b["max"]))


def vec3_of(v: common_pb2.Vec3) -> Vec3:
    return Vec3(v.x, v.y, v.z)


def box_of(b: common_pb2.Box) -> Box:
    """The ``Box`` of a message's corners, sorted (``Box.of``)."""
    return Box.of(vec3_of(b.min), vec3_of(b.max))


def vec3_dict(v: common_pb2.Vec3) -> dict[str, int]:
    return {"x": int(v.x), "y": int(v.y), "z": int(v.z)}


def box_dict(b: common_pb2.Box) -> dict[str, dict[str, int]]:
    """``{min, max}`` of a message's corners as they are (not sorted)."""
    return {"min": vec3_dict(b.min), "max": vec3_dict(b.max)}
