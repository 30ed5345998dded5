"""Recipe v1: parsing and validation into a small typed tree.

``parse_recipe`` accepts JSON text or an already-decoded object and returns a ``Recipe`` whose
operations are frozen dataclasses carrying their JSON path (``operations[3].operations[0]``),
so every later error can name the place a person has to fix. Shape errors (unknown operation,
unknown or missing key, wrong type, out-of-range number) are ``invalid_request`` with
``details.path``; the repeat-nesting budget is ``budget_exceeded``.

The static bounds come from ``mcb_common.recipe_schema`` (the JSON Schema the bridge exposes);
a planner test checks that this parser and that schema accept and refuse the same inputs.
Block states are only checked for being strings here: the registry check needs the target
version and happens in compile.py.

Invariants of a parsed ``Recipe``: coordinates are ints within the world border; every box
has min ≤ max; counts, radii and heights are within the schema's bounds; ``normalised()``
is a plain JSON value with every default filled in (the input of the recipe hash).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3
from mcb_common.recipe_schema import (
    COORD_LIMIT,
    MAX_BLOCK_TEXT,
    MAX_HEIGHT,
    MAX_PALETTE,
    MAX_PARAMS,
    MAX_RADIUS,
    MAX_REPEAT_COUNT,
    MAX_SEED,
    NAME_PATTERN,
    OPERATION_TYPES,
    RECIPE_VERSION,
)

MAX_RECIPE_BYTES = 1024 * 1024
_NAME = re.compile(NAME_PATTERN)
# Operation types the language reserves for later versions (issue 4): a clearer refusal.
_LATER_TYPES = ("arch", "transform", "replace", "paste")


# -- the tree ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BoxOp:
    path: str
    min: Vec3
    max: Vec3
    block: str
    hollow: bool


@dataclass(frozen=True, slots=True)
class LineOp:
    path: str
    start: Vec3  # JSON "from"
    end: Vec3  # JSON "to"
    block: str


@dataclass(frozen=True, slots=True)
class CylinderOp:
    path: str
    center: Vec3
    radius: int
    height: int
    block: str
    hollow: bool


@dataclass(frozen=True, slots=True)
class RepeatOp:
    path: str
    count: int
    offset: Vec3
    operations: tuple[Operation, ...]


Operation = BoxOp | LineOp | CylinderOp | RepeatOp
Shape = BoxOp | LineOp | CylinderOp


@dataclass(frozen=True, slots=True)
class Recipe:
    version: int
    operations: tuple[Operation, ...]
    params: tuple[tuple[str, int | float], ...] = ()
    palette: tuple[tuple[str, str], ...] = ()
    seed: int | None = None

    def normalised(self, block: Callable[[str], str] = str) -> dict[str, Any]:
        """The recipe as plain JSON with defaults filled in; ``block`` maps each block text
        (the compiler passes the registry's canonical form, so ``stone`` and
        ``minecraft:stone`` normalise alike)."""
        out: dict[str, Any] = {
            "version": self.version,
            "operations": [_op_json(op, block) for op in self.operations],
        }
        if self.params:
            out["params"] = dict(self.params)
        if self.palette:
            out["palette"] = {k: block(v) for k, v in self.palette}
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def _op_json(op: Operation, block: Callable[[str], str]) -> dict[str, Any]:
    if isinstance(op, BoxOp):
        return {"type": "box", "min": op.min.as_dict(), "max": op.max.as_dict(),
                "block": block(op.block), "hollow": op.hollow}
    if isinstance(op, LineOp):
        return {"type": "line", "from": op.start.as_dict(), "to": op.end.as_dict(),
                "block": block(op.block)}
    if isinstance(op, CylinderOp):
        return {"type": "cylinder", "center": op.center.as_dict(), "radius": op.radius,
                "height": op.height, "block": block(op.block), "hollow": op.hollow}
    return {"type": "repeat", "count": op.count, "offset": op.offset.as_dict(),
            "operations": [_op_json(o, block) for o in op.operations]}


def expanded_count(ops: tuple[Operation, ...]) -> int:
    """How many shapes the operations produce once every repeat is expanded (exact, no expansion)."""
    total = 0
    for op in ops:
        total += op.count * expanded_count(op.operations) if isinstance(op, RepeatOp) else 1
    return total


# -- errors ----------------------------------------------------------------------------------
def _bad(path: str, message: str, **details: Any) -> McbError:
    where = path or "recipe"
    return McbError(ErrorCode.INVALID_REQUEST, f"{where}: {message}", details={"path": where, **details})


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# -- scalar readers --------------------------------------------------------------------------
def _int(value: Any, path: str, lo: int, hi: int) -> int:
    # JSON has one number type: 64.0 is the integer 64 (as JSON Schema's "integer" says).
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(path, f"must be an integer, got {_kind(value)}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise _bad(path, f"must be an integer, got {value!r}")
        value = int(value)
    if not lo <= value <= hi:
        raise _bad(path, f"must be between {lo} and {hi}, got {value}", minimum=lo, maximum=hi)
    return value


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(path, f"must be true or false, got {_kind(value)}")
    return value


def _block(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(path, f"must be a block state string like minecraft:stone, got {_kind(value)}")
    if len(value) > MAX_BLOCK_TEXT:
        raise _bad(path, f"is {len(value)} characters long; at most {MAX_BLOCK_TEXT}")
    return value


def _vec(value: Any, path: str) -> Vec3:
    obj = _object(value, path, required=("x", "y", "z"), optional=(), what="a position {x, y, z}")
    return Vec3(*(_int(obj[a], f"{path}.{a}", -COORD_LIMIT, COORD_LIMIT) for a in "xyz"))


def _object(
    value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...], what: str
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, f"must be {what}, got {_kind(value)}")
    allowed = (*required, *optional)
    for key in value:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise _bad(
                _join(path, key),
                f"unknown key {key!r}{hint}; {what} takes {', '.join(allowed)}",
                allowed=list(allowed),
            )
    for key in required:
        if key not in value:
            raise _bad(_join(path, key), f"missing; {what} requires {', '.join(required)}")
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


# -- operations ------------------------------------------------------------------------------
_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "box": (("type", "min", "max", "block"), ("hollow",)),
    "line": (("type", "from", "to", "block"), ()),
    "cylinder": (("type", "center", "radius", "height", "block"), ("hollow",)),
    "repeat": (("type", "count", "offset", "operations"), ()),
}
assert tuple(_KEYS) == OPERATION_TYPES


def _operations(value: Any, path: str, depth: int, max_depth: int) -> tuple[Operation, ...]:
    if not isinstance(value, list):
        raise _bad(path, f"must be an array of operations, got {_kind(value)}")
    if not value:
        raise _bad(path, "is empty; give at least one operation")
    return tuple(_operation(item, f"{path}[{i}]", depth, max_depth) for i, item in enumerate(value))


def _operation(value: Any, path: str, depth: int, max_depth: int) -> Operation:
    if not isinstance(value, dict):
        raise _bad(path, f"must be an operation object with a \"type\", got {_kind(value)}")
    if "type" not in value:
        raise _bad(f"{path}.type", f"missing; one of {', '.join(OPERATION_TYPES)}")
    kind = value["type"]
    if not isinstance(kind, str) or kind not in _KEYS:
        if isinstance(kind, str) and kind in _LATER_TYPES:
            msg = f"operation {kind!r} is not supported by recipe v1 yet; use {', '.join(OPERATION_TYPES)}"
        else:
            near = difflib.get_close_matches(str(kind), OPERATION_TYPES, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            msg = f"unknown operation {_kind(kind)}{hint}; v1 has {', '.join(OPERATION_TYPES)}"
        raise _bad(f"{path}.type", msg, supported=list(OPERATION_TYPES))
    required, optional = _KEYS[kind]
    obj = _object(value, path, required, optional, what=f"a {kind} operation")
    if kind == "box":
        lo, hi = _vec(obj["min"], f"{path}.min"), _vec(obj["max"], f"{path}.max")
        for axis in "xyz":
            a, b = getattr(lo, axis), getattr(hi, axis)
            if b < a:
                raise _bad(
                    f"{path}.max.{axis}",
                    f"is {b}, below min.{axis}={a}; a box needs min ≤ max on every axis",
                    reason="corner_order",
                )
        return BoxOp(path, lo, hi, _block(obj["block"], f"{path}.block"),
                     _bool(obj.get("hollow", False), f"{path}.hollow"))
    if kind == "line":
        return LineOp(path, _vec(obj["from"], f"{path}.from"), _vec(obj["to"], f"{path}.to"),
                      _block(obj["block"], f"{path}.block"))
    if kind == "cylinder":
        return CylinderOp(
            path,
            _vec(obj["center"], f"{path}.center"),
            _int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS),
            _int(obj["height"], f"{path}.height", 1, MAX_HEIGHT),
            _block(obj["block"], f"{path}.block"),
            _bool(obj.get("hollow", False), f"{path}.hollow"),
        )
    # repeat
    count = _int(obj["count"], f"{path}.count", 1, MAX_REPEAT_COUNT)
    offset = _vec(obj["offset"], f"{path}.offset")
    if depth + 1 > max_depth:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"{path}: repeat nested {depth + 1} deep; the limit is {max_depth}",
            details={"path": path, "limit": "max_depth", "value": depth + 1, "max": max_depth},
        )
    inner = _operations(obj["operations"], f"{path}.operations", depth + 1, max_depth)
    return RepeatOp(path, count, offset, inner)


# -- the recipe ------------------------------------------------------------------------------
def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r} in one object")
        out[k] = v
    return out


def decode(text: str | bytes) -> Any:
    """Strict JSON: no NaN/Infinity, no duplicate keys, bounded size."""
    size = len(text.encode() if isinstance(text, str) else text)
    if size > MAX_RECIPE_BYTES:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"the recipe is {size} bytes; the limit is {MAX_RECIPE_BYTES}",
            details={"limit": "recipe_bytes", "value": size, "max": MAX_RECIPE_BYTES},
        )
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise _bad("recipe", "JSON is nested too deeply") from None
    except ValueError as e:  # JSONDecodeError is a ValueError
        raise _bad("recipe", f"is not valid JSON: {e}") from None


def parse_recipe(data: Any, *, max_depth: int = 4) -> Recipe:
    """Validate a recipe (JSON text or a decoded object) and return its tree.

    ``max_depth`` bounds the nesting of ``repeat`` (a top-level repeat is depth 1).
    """
    if isinstance(data, (str, bytes)):
        data = decode(data)
    obj = _object(data, "", ("version", "operations"), ("params", "palette", "seed"), what="a recipe")
    version = obj["version"]
    if isinstance(version, bool) or version != RECIPE_VERSION:
        raise _bad("version", f"recipe version {version!r} is not supported; this planner reads version {RECIPE_VERSION}",
                   supported=[RECIPE_VERSION])
    params: tuple[tuple[str, int | float], ...] = ()
    if "params" in obj:
        p = _named(obj["params"], "params", MAX_PARAMS, "named numbers")
        for k, v in p.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _bad(f"params.{k}", f"must be a number, got {_kind(v)}")
        params = tuple(sorted(p.items()))
    palette: tuple[tuple[str, str], ...] = ()
    if "palette" in obj:
        p = _named(obj["palette"], "palette", MAX_PALETTE, "named block states")
        palette = tuple(sorted((k, _block(v, f"palette.{k}")) for k, v in p.items()))
    seed = _int(obj["seed"], "seed", 0, MAX_SEED) if "seed" in obj else None
    ops = _operations(obj["operations"], "operations", 0, max_depth)
    return Recipe(RECIPE_VERSION, ops, params, palette, seed)


def _named(value: Any, path: str, limit: int, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, f"must be an object of {what}, got {_kind(value)}")
    if len(value) > limit:
        raise _bad(path, f"has {len(value)} entries; at most {limit}")
    for k in value:
        if not isinstance(k, str) or not _NAME.fullmatch(k):
            raise _bad(f"{path}.{k}", f"{k!r} is not a name (letters, digits, _; ≤ 32; not starting with a digit)")
    return value
