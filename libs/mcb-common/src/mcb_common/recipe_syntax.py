"""The recipe's syntax, read from its schema: each operation's type, its keys, which keys hold child
operations and which name a paste source; and one walk over a decoded recipe.

Syntax only (no geometry, no expressions, no numpy): the recipe's structure is defined once, in
``recipe_schema.RECIPE_SCHEMA``, and read here. The planner's parser (``mcb_planner.grammar``)
finds each operation's type with ``operation_type`` and its children with ``children`` and adds
the meaning, strictly; the journal lists the parts a recipe pastes with ``walk``, leniently,
before the planner sees the recipe (``mcb_journal.recipeparts``).

From the schema's ``$defs``, for each operation type:
  * ``KEYS``: its required keys (``type`` first) and optional keys, in the schema's order;
  * ``CHILD_KEYS``: the keys whose value is an array of operations (``$ref: #/$defs/operations``):
    ``operations`` of repeat, transform and foundation;
  * ``SOURCE_KEYS``: the keys that name what the operation pastes, found by their id pattern
    (``ASSET_ID_PATTERN``: a library asset, ``PART_ID_PATTERN``: a defined part): ``asset`` and
    ``part`` of paste.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .recipe_schema import ASSET_ID_PATTERN, OPERATION_TYPES, PART_ID_PATTERN, RECIPE_SCHEMA

_OPERATIONS_REF = {"$ref": "#/$defs/operations"}
_SOURCE_KINDS = {ASSET_ID_PATTERN: "asset", PART_ID_PATTERN: "part"}


def _body(kind: str) -> dict[str, Any]:
    return RECIPE_SCHEMA["$defs"][kind]


def _keys(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    body = _body(kind)
    required = tuple(body["required"])
    return required, tuple(k for k in body["properties"] if k not in required)


# operation type → (required keys, optional keys), in the schema's order
KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {t: _keys(t) for t in OPERATION_TYPES}
# operation type → the keys that hold child operations (empty for a shape)
CHILD_KEYS: dict[str, tuple[str, ...]] = {
    t: tuple(k for k, v in _body(t)["properties"].items() if v == _OPERATIONS_REF) for t in OPERATION_TYPES
}
# the recipe's own keys that hold operations: ("operations",)
RECIPE_CHILD_KEYS: tuple[str, ...] = tuple(k for k, v in RECIPE_SCHEMA["properties"].items() if v == _OPERATIONS_REF)
# operation type → {key: "asset" | "part"} for each key naming what it pastes (empty unless it pastes)
SOURCE_KEYS: dict[str, dict[str, str]] = {
    t: {
        k: _SOURCE_KINDS[v["pattern"]]
        for k, v in _body(t)["properties"].items()
        if isinstance(v, dict) and v.get("pattern") in _SOURCE_KINDS
    }
    for t in OPERATION_TYPES
}


def operation_type(value: Any) -> str | None:
    """The type of one item of an ``operations`` array: its ``"type"`` when it is an object whose
    type the schema names, else None (the caller decides what that is: an error, or nothing)."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    return kind if isinstance(kind, str) and kind in KEYS else None


def children(kind: str, obj: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """``(path, value)`` of each key of operation ``obj`` (of type ``kind``) that holds child
    operations, in the schema's order; the value is as given (the caller checks it is an array)."""
    for key in CHILD_KEYS[kind]:
        if key in obj:
            yield f"{path}.{key}", obj[key]


@dataclass(frozen=True, slots=True)
class Node:
    """One operation found by ``walk``: its type, its object as given, its JSON path and how many
    operations hold it (0 at the top)."""

    type: str
    obj: Mapping[str, Any]
    path: str
    depth: int

    def sources(self) -> dict[str, Any]:
        """What it pastes: ``{"asset" | "part": value}`` for each source key present (``{}`` for an
        operation that pastes nothing); values as given, unchecked."""
        return {kind: self.obj[k] for k, kind in SOURCE_KEYS[self.type].items() if k in self.obj}


def walk(doc: Any) -> Iterator[Node]:
    """Every operation of a decoded recipe, each before its children, in document order.

    Lenient: what is not an operation (a recipe that is not an object, an ``operations`` value that
    is not an array, an item that is not an object or has no known ``type``) is passed over, and
    nothing else is checked; the planner's parser refuses such recipes with the path. Iterative, so
    any nesting depth is safe."""
    if not isinstance(doc, dict):
        return
    stack: list[tuple[str, Any, int]] = []  # (path, item of an operations array, depth)

    def push(path: str, items: Any, depth: int) -> None:
        if isinstance(items, list):
            stack.extend((f"{path}[{i}]", items[i], depth) for i in reversed(range(len(items))))

    for key in reversed(RECIPE_CHILD_KEYS):
        push(key, doc.get(key), 0)
    while stack:
        path, item, depth = stack.pop()
        kind = operation_type(item)
        if kind is None:
            continue
        yield Node(kind, item, path, depth)
        for child_path, items in reversed(list(children(kind, item, path))):
            push(child_path, items, depth + 1)
