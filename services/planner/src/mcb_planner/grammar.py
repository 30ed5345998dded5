"""The recipe grammar's building blocks: what every operation's ``parse`` uses.

The grammar has one definition, the JSON Schema ``mcb_common.recipe_schema.RECIPE_SCHEMA`` (the
bridge serves it and generates the agent's guides from it). Its syntax is read from it in
``mcb_common.recipe_syntax``, shared with the journal (which lists the parts a recipe pastes with
the same walk): each operation's required and optional keys (``KEYS``, in the schema's order, so
refusals list them as the schema does), the operation types, and the keys that hold child
operations. The ``Parser`` below finds each operation's type (``recipe_syntax.operation_type``) and
its children (``recipe_syntax.children``) there; ops/ holds one class per operation, each parsing
its own keys with the ``Parser``, so the parser has no list of operations of its own
(``recipe.parse_recipe`` checks that ops/ and the schema name the same ones).
"""

from __future__ import annotations

import builtins
import difflib
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3
from mcb_common.recipe_schema import (
    COORD_LIMIT,
    FILTER_ENTRY_PATTERN,
    MAX_BLOCK_TEXT,
    MAX_FILTER_ENTRIES,
    MAX_THICKNESS,
    OPERATION_TYPES,
)
from mcb_common.recipe_syntax import KEYS, children, operation_type

from . import expr

if TYPE_CHECKING:
    from .ops import Op


_FILTER_ENTRY = re.compile(FILTER_ENTRY_PATTERN)


# -- errors ----------------------------------------------------------------------------------
def bad(path: str, message: str, **details: Any) -> McbError:
    where = path or "recipe"
    return McbError(ErrorCode.INVALID_REQUEST, f"{where}: {message}", details={"path": where, **details})


def kind_of(value: Any) -> str:
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


def obj_of(value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(path, f"must be {what}, got {kind_of(value)}")
    allowed = (*required, *optional)
    for key in value:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise bad(
                _join(path, key),
                f"unknown key {key!r}{hint}; {what} takes {', '.join(allowed)}",
                allowed=list(allowed),
            )
    for key in required:
        if key not in value:
            raise bad(_join(path, key), f"missing; {what} requires {', '.join(required)}")
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise bad(path, f"must be true or false, got {kind_of(value)}")
    return value


def int_literal(value: Any, path: str, lo: int, hi: int) -> int:
    # JSON has one number type: 64.0 is the integer 64 (as JSON Schema's "integer" says).
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad(path, f"must be an integer, got {kind_of(value)}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise bad(path, f"must be an integer, got {value!r}")
        value = int(value)
    if not lo <= value <= hi:
        raise bad(path, f"must be between {lo} and {hi}, got {value}", minimum=lo, maximum=hi)
    return value


def expr_text(value: str, path: str) -> None:
    """Expression text uses only the characters of ``EXPR_PATTERN`` (as the schema says)."""
    if not re.fullmatch(expr.EXPR_PATTERN, value):
        expr.tokenize(value, path)  # names the offending character, or the length
        raise bad(
            path,
            f"{value[:40]!r} is not an expression (letters, digits, _ + - * / % ( ) , . "
            "and spaces; at most 256 characters)",
            reason="expression",
        )


class Parser:
    """Reads one recipe's operations: ``kinds`` maps each operation type to its class (ops/)."""

    def __init__(
        self,
        env: dict[str, Fraction],
        palette: dict[str, tuple[tuple[str, int], ...]],
        max_depth: int,
        kinds: Mapping[str, type[Op]],
    ):
        self.env = env
        self.palette = palette
        self.max_depth = max_depth
        self.kinds = kinds

    def corners(self, obj: dict[str, Any], path: str) -> tuple[Vec3, Vec3]:
        lo, hi = self.vec(obj["min"], f"{path}.min"), self.vec(obj["max"], f"{path}.max")
        for axis in "xyz":
            a, b = getattr(lo, axis), getattr(hi, axis)
            if b < a:
                raise bad(
                    f"{path}.max.{axis}",
                    f"is {b}, below min.{axis}={a}; a box needs min ≤ max on every axis",
                    reason="corner_order",
                )
        return lo, hi

    def filter(self, value: Any, path: str) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items or len(items) > MAX_FILTER_ENTRIES:
            raise bad(
                path,
                f"must be a filter entry or an array of 1 to {MAX_FILTER_ENTRIES} entries "
                f'("*", a block id, a block with properties, "!" to exclude), '
                f"got {kind_of(value)}",
            )
        out = []
        for i, item in enumerate(items):
            p = path if isinstance(value, str) else f"{path}[{i}]"
            if not isinstance(item, str) or not 1 <= len(item) <= MAX_BLOCK_TEXT + 1 or not _FILTER_ENTRY.match(item):
                raise bad(
                    p,
                    f'must be "*", a block id or a block state, optionally after one '
                    f'"!" (at most {MAX_BLOCK_TEXT + 1} characters), got {kind_of(item)}',
                )
            out.append(item)
        return tuple(out)

    # -- scalars (integers may be expressions over params)
    def int(self, value: Any, path: str, lo: int, hi: int) -> int:
        if isinstance(value, str):
            expr_text(value, path)
            v = expr.evaluate(value, self.env, path)
            if v.denominator != 1:
                raise bad(
                    path,
                    f"{value!r} evaluates to {float(v):g}, not an integer; wrap it in floor(), ceil() or round()",
                    reason="expression",
                )
            iv = int(v)
            if not lo <= iv <= hi:
                raise bad(
                    path,
                    f"{value!r} evaluates to {iv}; it must be between {lo} and {hi}",
                    minimum=lo,
                    maximum=hi,
                    reason="expression",
                )
            return iv
        return int_literal(value, path, lo, hi)

    def quarter_turns(self, value: Any, path: str) -> builtins.int:
        """Degrees clockwise seen from above (0, 90, 180 or 270) → quarter turns."""
        if isinstance(value, float) and value.is_integer():
            value = builtins.int(value)
        if isinstance(value, bool) or value not in (0, 90, 180, 270):
            raise bad(path, f"must be 0, 90, 180 or 270 (degrees clockwise seen from above), got {kind_of(value)}")
        return builtins.int(value) // 90

    def vec(self, value: Any, path: str) -> Vec3:
        obj = obj_of(value, path, required=("x", "y", "z"), optional=(), what="a position {x, y, z}")
        return Vec3(*(self.int(obj[a], f"{path}.{a}", -COORD_LIMIT, COORD_LIMIT) for a in "xyz"))

    def block(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise bad(
                path,
                f"must be a block state string like minecraft:stone or a palette "
                f"reference like $wall, got {kind_of(value)}",
            )
        if len(value) > MAX_BLOCK_TEXT:
            raise bad(path, f"is {len(value)} characters long; at most {MAX_BLOCK_TEXT}")
        if value.startswith("$"):
            name = value[1:]
            if name not in self.palette:
                near = difflib.get_close_matches(name, sorted(self.palette), n=1)
                hint = f" (did you mean ${near[0]}?)" if near else ""
                known = ", ".join(f"${n}" for n in sorted(self.palette)) or "none"
                raise bad(path, f"unknown palette entry {value!r}{hint}; the palette has {known}", reason="palette_ref")
        return value

    def thickness(self, obj: dict[str, Any], path: str) -> builtins.int:
        hollow = boolean(obj.get("hollow", False), f"{path}.hollow")
        if "thickness" not in obj:
            return 1 if hollow else 0
        if "hollow" in obj and not hollow:
            raise bad(
                f"{path}.thickness", 'a wall thickness needs a hollow shape; drop "hollow": false or the thickness'
            )
        return self.int(obj["thickness"], f"{path}.thickness", 1, MAX_THICKNESS)

    def axis(self, obj: dict[str, Any], path: str, choices: tuple[str, ...], default: str) -> str:
        axis = obj.get("axis", default)
        if not isinstance(axis, str) or axis not in choices:
            raise bad(f"{path}.axis", f"must be one of {', '.join(repr(c) for c in choices)}, got {kind_of(axis)}")
        return axis

    # -- operations
    def operations(self, value: Any, path: str, depth: builtins.int) -> tuple[Op, ...]:
        if not isinstance(value, list):
            raise bad(path, f"must be an array of operations, got {kind_of(value)}")
        if not value:
            raise bad(path, "is empty; give at least one operation")
        return tuple(self.operation(item, f"{path}[{i}]", depth) for i, item in enumerate(value))

    def children(self, kind: str, obj: dict[str, Any], path: str, depth: builtins.int) -> tuple[Op, ...]:
        """The child operations of container ``obj`` (within the nesting budget), from the keys the
        schema gives them (``recipe_syntax.children``)."""
        self.nest(path, depth)
        return tuple(
            op for key_path, value in children(kind, obj, path) for op in self.operations(value, key_path, depth + 1)
        )

    def nest(self, path: str, depth: builtins.int) -> None:
        if depth + 1 > self.max_depth:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"{path}: repeat/transform nested {depth + 1} deep; the limit is {self.max_depth}",
                details={"path": path, "limit": "max_depth", "value": depth + 1, "max": self.max_depth},
            )

    def operation(self, value: Any, path: str, depth: builtins.int) -> Op:
        kind = operation_type(value)
        if kind is None or kind not in self.kinds:
            if not isinstance(value, dict):
                raise bad(path, f'must be an operation object with a "type", got {kind_of(value)}')
            if "type" not in value:
                raise bad(f"{path}.type", f"missing; one of {', '.join(OPERATION_TYPES)}")
            given = value["type"]
            near = difflib.get_close_matches(str(given), OPERATION_TYPES, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            msg = f"unknown operation {kind_of(given)}{hint}; recipes have {', '.join(OPERATION_TYPES)}"
            raise bad(f"{path}.type", msg, supported=list(OPERATION_TYPES))
        required, optional = KEYS[kind]
        obj = obj_of(value, path, required, optional, what=f"a {kind} operation")
        return self.kinds[kind].parse(self, kind, obj, path, depth)
