"""mcb_rpc.pbjson gives json_format's answers: the same dict as MessageToDict, the same message
(or the same ParseError) as ParseDict, for random messages of every type in the mcb protocols and
for random damage to their JSON. Seeded: a failure prints the seed and the message type."""

from __future__ import annotations

import base64
import json
import random

import pytest
from google.protobuf import (
    any_pb2,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    json_format,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from mcb.camera.v1 import camera_pb2
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2
from mcb.planner.v1 import planner_pb2
from mcb.world.v1 import world_pb2
from mcb_rpc import pbjson

T = FieldDescriptor
MODULES = [common_pb2, world_pb2, journal_pb2, planner_pb2, camera_pb2]


def _all_types():
    out = []

    def walk(desc):
        if desc.GetOptions().map_entry:
            return
        out.append(desc)
        for nested in desc.nested_types:
            walk(nested)

    for mod in MODULES:
        for desc in mod.DESCRIPTOR.message_types_by_name.values():
            walk(desc)
    return out


TYPES = _all_types()
INT_RANGES = {
    T.TYPE_INT32: (-(2**31), 2**31 - 1),
    T.TYPE_SINT32: (-(2**31), 2**31 - 1),
    T.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    T.TYPE_UINT32: (0, 2**32 - 1),
    T.TYPE_FIXED32: (0, 2**32 - 1),
    T.TYPE_INT64: (-(2**63), 2**63 - 1),
    T.TYPE_SINT64: (-(2**63), 2**63 - 1),
    T.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    T.TYPE_UINT64: (0, 2**64 - 1),
    T.TYPE_FIXED64: (0, 2**64 - 1),
}
TEXTS = ["", "minecraft:stone", "minecraft:oak_door[facing=north,half=lower]", "дом 房子 🧱", 'a"b\\c\n', "x" * 300]


def _int(rng, t):
    lo, hi = INT_RANGES[t]
    return rng.choice([0, 1, lo, hi, rng.randint(lo, hi), rng.randint(-300, 300) if lo < 0 else rng.randint(0, 300)])


def _scalar(rng, f):
    t = f.type
    if t in INT_RANGES:
        return _int(rng, t)
    if t == T.TYPE_BOOL:
        return rng.random() < 0.5
    if t == T.TYPE_STRING:
        return rng.choice(TEXTS)
    if t == T.TYPE_BYTES:
        return rng.randbytes(rng.choice([0, 1, 2, 3, 17, 1000]))
    if t in (T.TYPE_FLOAT, T.TYPE_DOUBLE):
        return rng.choice([0.0, -0.0, 0.5, -2.25, 1e10, 3.0, float("nan"), float("inf")])
    if t == T.TYPE_ENUM:
        return rng.choice([v.number for v in f.enum_type.values])
    raise AssertionError(t)


def _fill(rng, msg: Message, depth: int) -> None:
    for f in msg.DESCRIPTOR.fields:
        if rng.random() < 0.25:
            continue
        if f.type == T.TYPE_MESSAGE:
            mt = f.message_type
            if mt.full_name.startswith("google.protobuf."):
                continue  # well-known types go to json_format whole; their generation is not the point
            if mt.GetOptions().map_entry:
                key_f, val_f = mt.fields_by_name["key"], mt.fields_by_name["value"]
                target = getattr(msg, f.name)
                for _ in range(rng.randint(0, 3)):
                    k = _scalar(rng, key_f)
                    if val_f.type == T.TYPE_MESSAGE:
                        if depth < 3:
                            _fill(rng, target[k], depth + 1)
                    else:
                        target[k] = _scalar(rng, val_f)
                continue
            if depth >= 3:
                continue
            if f.is_repeated:
                for _ in range(rng.randint(0, 3)):
                    _fill(rng, getattr(msg, f.name).add(), depth + 1)
            else:
                sub = getattr(msg, f.name)
                sub.SetInParent()
                _fill(rng, sub, depth + 1)
        elif f.is_repeated:
            getattr(msg, f.name).extend(_scalar(rng, f) for _ in range(rng.randint(0, 4)))
        elif f.containing_oneof is not None and any(
            msg.HasField(o.name) for o in f.containing_oneof.fields if o.name != f.name and o.has_presence
        ):
            continue
        else:
            setattr(msg, f.name, _scalar(rng, f))


def _random_message(rng, desc) -> Message:
    msg = GetMessageClass(desc)()
    _fill(rng, msg, 0)
    return msg


def _parse_dict(data, cls, ignore):
    try:
        return ("ok", json_format.ParseDict(data, cls(), ignore_unknown_fields=ignore))
    except Exception as exc:  # noqa: BLE001 - ParseDict's answer, whatever it is (a TypeError for a list)
        return (type(exc).__name__, str(exc))


def _fast(data, cls, ignore):
    try:
        return ("ok", pbjson.parse(data, cls, ignore_unknown_fields=ignore))
    except Exception as exc:  # noqa: BLE001
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("desc", TYPES, ids=lambda d: d.full_name)
def test_same_dict_and_same_message_as_json_format(desc):
    rng = random.Random(desc.full_name)
    cls = GetMessageClass(desc)
    for i in range(60):
        msg = _random_message(rng, desc)
        want = json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)
        got = pbjson.to_json(msg)
        assert got == want, f"{desc.full_name} #{i}"
        assert json.dumps(got) == json.dumps(want), "key order"  # the same text, not only an equal dict
        wire = json.loads(json.dumps(want))
        assert pbjson.parse(wire, cls) == msg, f"{desc.full_name} #{i}"
        assert pbjson.parse(wire, cls, ignore_unknown_fields=True) == msg


ODD_VALUES = [
    None,
    "12",
    "-3",
    "0x1F",
    " 7",
    "+5",
    "1e3",
    "٣",
    1.5,
    2.0,
    True,
    False,
    -1,
    2**31,
    2**32,
    2**63,
    2**64,
    -(2**63) - 1,
    "18446744073709551616",
    "abc",
    "",
    "QUJD",
    "QUJ",
    "QUJD-_==",
    "Q U J D",
    [],
    [1, "x"],
    {},
    {"x": 1},
    "UNKNOWN_ENUM_NAME",
    99999,
    float("inf"),
    float("-inf"),
    float("nan"),
    1e39,
    "NaN",
    "Infinity",
]


def _damage(rng, data, desc):
    """One random change somewhere in ``data`` (a dict of ``desc``): an odd value, an unknown key, the
    same field under both its names, a value of the wrong shape."""
    if not isinstance(data, dict) or not desc.fields:
        return rng.choice(ODD_VALUES)
    f = rng.choice(desc.fields)
    key = f.json_name if rng.random() < 0.8 else f.name
    roll = rng.random()
    if roll < 0.1:
        data["noSuchField"] = 1
    elif roll < 0.2:
        data[f.json_name] = data[f.name] = data.get(f.json_name, 0)
    elif roll < 0.45 and f.type == T.TYPE_MESSAGE and isinstance(data.get(f.json_name), (dict, list)):
        inner = data[f.json_name]
        if isinstance(inner, list):
            if inner:
                i = rng.randrange(len(inner))
                inner[i] = _damage(rng, inner[i], f.message_type)
            else:
                inner.append(rng.choice(ODD_VALUES))
        else:
            data[f.json_name] = _damage(rng, inner, f.message_type)
    elif roll < 0.6 and f.is_repeated:
        data[key] = [rng.choice(ODD_VALUES) for _ in range(rng.randint(1, 2))]
    else:
        data.pop(f.json_name, None)
        data[key] = rng.choice(ODD_VALUES)
    return data


@pytest.mark.parametrize("desc", TYPES, ids=lambda d: d.full_name)
def test_damaged_json_gets_parse_dicts_answer(desc):
    rng = random.Random("damage " + desc.full_name)
    cls = GetMessageClass(desc)
    for i in range(80):
        data = json.loads(
            json.dumps(json_format.MessageToDict(_random_message(rng, desc), always_print_fields_with_no_presence=True))
        )
        data = _damage(rng, data, desc)
        ignore = rng.random() < 0.5
        want = _parse_dict(json.loads(json.dumps(data)), cls, ignore)
        got = _fast(json.loads(json.dumps(data)), cls, ignore)
        assert got == want, f"{desc.full_name} #{i}: {json.dumps(data)[:300]}"


@pytest.mark.parametrize(
    "cls",
    [
        world_pb2.BatchApplyParams,
        world_pb2.BatchApplyResult,
        world_pb2.EventsSinceResult,
        world_pb2.EventsSinceParams,
        world_pb2.RegionReadResult,
    ],
)
def test_the_hot_messages_take_the_fast_path(cls, monkeypatch):
    """The apply path's messages never reach json_format (a float or map field added to one of
    them would silently give back the speed: this says so)."""
    rng = random.Random(cls.DESCRIPTOR.full_name)
    msg = _random_message(rng, cls.DESCRIPTOR)
    data = json.loads(json.dumps(json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)))

    def refuse(*_a, **_k):
        raise AssertionError("json_format was used")

    monkeypatch.setattr(json_format, "MessageToDict", refuse)
    monkeypatch.setattr(json_format, "ParseDict", refuse)
    assert pbjson.to_json(msg) == data
    assert pbjson.parse(data, cls) == msg


@pytest.mark.parametrize("data", [{"x": 1, 7: 2}, {None: 1}, {"x": 1, (1, 2): 3}])
@pytest.mark.parametrize("ignore", [False, True])
def test_keys_that_are_not_text_get_parse_dicts_error(data, ignore):
    assert _fast(data, common_pb2.Vec3, ignore) == _parse_dict(data, common_pb2.Vec3, ignore)


WELL_KNOWN = [
    (timestamp_pb2.Timestamp(seconds=1, nanos=5000), {"seconds": "1"}),
    (duration_pb2.Duration(seconds=3), {"seconds": "3"}),
    (wrappers_pb2.Int32Value(value=5), {"value": 5}),
    (wrappers_pb2.StringValue(value="a"), {"value": "a"}),
    (field_mask_pb2.FieldMask(paths=["a.b"]), {"paths": ["a.b"]}),
    (struct_pb2.Struct(fields={"k": struct_pb2.Value(number_value=1.5)}), {"fields": {}}),
    (any_pb2.Any(), {}),
    (empty_pb2.Empty(), {}),
]


@pytest.mark.parametrize(("msg", "plain"), WELL_KNOWN, ids=lambda v: type(v).__name__)
def test_well_known_types_keep_their_own_json(msg, plain):
    """A Timestamp is "1970-01-01T00:00:01.000005Z", not {"seconds": ...}: json_format does them all."""
    cls = type(msg)
    want = json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)
    assert pbjson.to_json(msg) == want
    for data in (json.loads(json.dumps(want)), plain):
        for ignore in (False, True):
            assert _fast(dict(data) if isinstance(data, dict) else data, cls, ignore) == _parse_dict(data, cls, ignore)


def test_standard_unpadded_and_urlsafe_bytes_all_decode():
    raw = bytes(range(256)) * 3
    for text in (
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
    ):
        assert pbjson.parse({"indices": text}, world_pb2.RegionReadResult).indices == raw
