"""batch_apply's params as plain data (``Batch``), read from their JSON form directly.

A 512-entry ``BatchApplyParams`` built field by field (``pbjson.parse``) cost the host ~1.4 ms of
a batch's ~4.5; its entries are only read again, as tuples. ``parse_batch`` and ``parse_many``
read the JSON form straight into tuples, taking only values of exactly the type and range
``pbjson.parse`` takes on its own fast path (an integer for a coordinate in the sint32 range, a
string UTF-8 can encode, no key but a field's name, no field named twice), so what they accept
is the same batch the message would hold. Anything else (a number as a string, ``null``, an
unknown field, a float, a lone surrogate, ...) makes them answer None, and the server parses the
params into the message as before: the same batch or the same structured error.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from mcb.world.v1 import world_pb2

# x, y, z, expected, desired: one BatchEntry (a dependency's desired is ignored)
Entry = tuple[int, int, int, str, str]

_SINT32_MIN, _SINT32_MAX = -(2**31), 2**31 - 1
_UINT32_MAX = 2**32 - 1
_ENTRY_KEYS = frozenset({"x", "y", "z", "expected", "desired"})  # their JSON names are their names
_ENTRY_FIELDS = itemgetter("x", "y", "z", "expected", "desired")
# BatchApplyParams' JSON names and field names -> the field
_BATCH_KEYS = {
    "batchId": "batch_id",
    "batch_id": "batch_id",
    "worldEpoch": "world_epoch",
    "world_epoch": "world_epoch",
    "entries": "entries",
    "dependencies": "dependencies",
    "operationId": "operation_id",
    "operation_id": "operation_id",
}


@dataclass(slots=True)
class Batch:
    """What a ``BatchApplyParams`` holds, its entries and dependencies as ``Entry`` tuples."""

    batch_id: str = ""
    world_epoch: int = 0
    entries: list[Entry] = field(default_factory=list)
    dependencies: list[Entry] = field(default_factory=list)
    operation_id: str = ""

    @classmethod
    def of(cls, p: world_pb2.BatchApplyParams) -> Batch:
        return cls(
            p.batch_id,
            p.world_epoch,
            [(e.x, e.y, e.z, e.expected, e.desired) for e in p.entries],
            [(d.x, d.y, d.z, d.expected, d.desired) for d in p.dependencies],
            p.operation_id,
        )

    def message(self) -> world_pb2.BatchApplyParams:
        def entry(e: Entry) -> world_pb2.BatchEntry:
            return world_pb2.BatchEntry(x=e[0], y=e[1], z=e[2], expected=e[3], desired=e[4])

        return world_pb2.BatchApplyParams(
            batch_id=self.batch_id,
            world_epoch=self.world_epoch,
            entries=[entry(e) for e in self.entries],
            dependencies=[entry(d) for d in self.dependencies],
            operation_id=self.operation_id,
        )

    def content_hash(self) -> str:
        """sha256 of the batch's content (everything but its id) as compact JSON:
        ``[world_epoch, operation_id, entries, dependencies]``, each entry ``[x, y, z, expected,
        desired]`` (a dependency's desired too, as the message holds it)."""
        text = json.dumps(
            [self.world_epoch, self.operation_id, self.entries, self.dependencies],
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return "j1:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _utf8(text: str) -> bool:
    """A string protobuf takes (it refuses what UTF-8 cannot encode: a lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _entries(raw: Any) -> list[Entry] | None:
    if type(raw) is not list:
        return None
    if not raw:
        return []
    if set(map(type, raw)) != {dict} or not all(map(_ENTRY_KEYS.issuperset, raw)):
        return None
    if set(map(len, raw)) == {5}:  # every field named (the usual form): no default to fill in
        out: list[Any] = list(map(_ENTRY_FIELDS, raw))
    else:
        out = [(e.get("x", 0), e.get("y", 0), e.get("z", 0), e.get("expected", ""), e.get("desired", "")) for e in raw]
    xs, ys, zs, expected, desired = zip(*out, strict=True)
    types = set(map(type, xs))
    types.update(map(type, ys))
    types.update(map(type, zs))
    if types != {int}:  # bool is not int here: pbjson takes exactly int
        return None
    if min(min(xs), min(ys), min(zs)) < _SINT32_MIN or max(max(xs), max(ys), max(zs)) > _SINT32_MAX:
        return None
    types = set(map(type, expected))
    types.update(map(type, desired))
    if types != {str}:
        return None
    texts = set(expected)
    texts.update(desired)
    if not all(map(_utf8, texts)):
        return None
    return out


def parse_batch(data: Any) -> Batch | None:
    """A ``BatchApplyParams`` JSON object as a ``Batch``, or None: parse it into the message."""
    if type(data) is not dict:
        return None
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _BATCH_KEYS.get(key)
        if name is None or name in values:  # unknown, or named twice: the message parser decides
            return None
        values[name] = value
    batch_id = values.get("batch_id", "")
    epoch = values.get("world_epoch", 0)
    operation_id = values.get("operation_id", "")
    if not (type(batch_id) is str and type(operation_id) is str and _utf8(batch_id) and _utf8(operation_id)):
        return None
    if type(epoch) is not int or not 0 <= epoch <= _UINT32_MAX:
        return None
    entries = _entries(values.get("entries", []))
    dependencies = _entries(values.get("dependencies", []))
    if entries is None or dependencies is None:
        return None
    return Batch(batch_id, epoch, entries, dependencies, operation_id)


def parse_many(data: Any) -> list[Batch] | None:
    """A ``BatchApplyManyParams`` JSON object as its batches, or None: parse it into the message."""
    if type(data) is not dict or not data.keys() <= {"batches"}:
        return None
    raw = data.get("batches", [])
    if type(raw) is not list:
        return None
    out = []
    for item in raw:
        b = parse_batch(item)
        if b is None:
            return None
        out.append(b)
    return out
