"""Recipe v1 (language revision 3): parsing and validation into a small typed tree.

``parse_recipe`` accepts JSON text or an already-decoded object and returns a ``Recipe`` whose
operations are frozen dataclasses carrying their JSON path (``operations[3].operations[0]``),
so every later error can name the place a person has to fix. Shape errors (unknown operation,
unknown or missing key, wrong type, out-of-range number, bad expression, unknown palette
reference) are ``invalid_request`` with ``details.path``; the nesting budget is
``budget_exceeded``.

Revision 2 keeps ``version: 1`` — it is a strict superset: every recipe revision 1 accepted
is accepted and compiles to the same write set. It adds ``arch`` and ``transform``, numeric
expressions over ``params`` wherever an integer is expected (expr.py), and palette references
``"$name"`` wherever a block is expected, with weighted palette entries chosen per position
from ``seed``.

Expressions are evaluated here, so the tree holds plain ints; ``normalised()`` (the input of
the recipe hash) is the evaluated tree plus the resolved params, palette and seed.

The static bounds come from ``mcb_common.recipe_schema`` (the JSON Schema the bridge exposes);
a planner test checks that this parser and that schema accept and refuse the same inputs
(except what the schema cannot say: expression grammar and names, palette names, corner order).
Block states are only checked for being strings here: the registry check needs the target
version and happens in compile.py.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_schema import (
    MAX_BLOCK_TEXT,
    MAX_PALETTE,
    MAX_PALETTE_CHOICES,
    MAX_PALETTE_WEIGHT,
    MAX_PARAMS,
    MAX_RECIPE_BYTES,
    MAX_SEED,
    NAME_PATTERN,
    OPERATION_TYPES,
    RECIPE_VERSION,
    check_shape,
)

from . import expr
from .grammar import Parser, expr_text, int_literal, kind_of, obj_of
from .grammar import bad as _bad
from .ops import (
    KINDS,
    ArchOp,
    BoxOp,
    CylinderOp,
    FoundationOp,
    LineOp,
    Op,
    OverlayOp,
    PasteOp,
    RepeatOp,
    ReplaceOp,
    Shape,
    SolidOp,
    TransformOp,
)

__all__ = [
    "MAX_RECIPE_BYTES",
    "ArchOp",
    "BoxOp",
    "CylinderOp",
    "FoundationOp",
    "LineOp",
    "Operation",
    "OverlayOp",
    "PasteOp",
    "Recipe",
    "RepeatOp",
    "ReplaceOp",
    "Shape",
    "SolidOp",
    "TransformOp",
    "decode",
    "expanded_count",
    "parse_recipe",
]

# ops/ and the schema name the same operations (a shape file without its schema entry, or the
# reverse, fails here, at import)
if set(KINDS) != set(OPERATION_TYPES):
    raise ImportError(f"recipe operations in ops/ {sorted(KINDS)} differ from the schema's {sorted(OPERATION_TYPES)}")

_NAME = re.compile(NAME_PATTERN)
Operation = Op


@dataclass(frozen=True, slots=True)
class Recipe:
    version: int
    operations: tuple[Operation, ...]
    params: tuple[tuple[str, Fraction], ...] = ()
    # name -> ((block, weight), ...); a plain string entry is one choice of weight 1
    palette: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    seed: int | None = None

    def normalised(self, block: Callable[[str], str] = str) -> dict[str, Any]:
        """The recipe as plain JSON with defaults filled in and expressions evaluated;
        ``block`` maps each block text (the compiler passes the registry's canonical form,
        so ``stone`` and ``minecraft:stone`` normalise alike; ``$name`` references stay)."""

        def blk(text: str) -> str:
            return text if text.startswith("$") else block(text)

        out: dict[str, Any] = {
            "version": self.version,
            "operations": [op.to_json(blk) for op in self.operations],
        }
        if self.params:
            out["params"] = {k: expr.fraction_json(v) for k, v in self.params}
        if self.palette:
            out["palette"] = {
                k: (blk(v[0][0]) if len(v) == 1 and v[0][1] == 1 else [{"block": blk(b), "weight": w} for b, w in v])
                for k, v in self.palette
            }
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def expanded_count(ops: tuple[Operation, ...]) -> int:
    """How many shapes the operations produce once every repeat is expanded (exact, no expansion)."""
    return sum(op.expanded_count() for op in ops)


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


def _palette_entry(value: Any, path: str) -> tuple[tuple[str, int], ...]:
    def plain(v: Any, p: str) -> str:
        if not isinstance(v, str) or not v:
            raise _bad(p, f"must be a block state string, got {kind_of(v)}")
        if len(v) > MAX_BLOCK_TEXT:
            raise _bad(p, f"is {len(v)} characters long; at most {MAX_BLOCK_TEXT}")
        if v.startswith("$"):
            raise _bad(p, "a palette entry cannot refer to another palette entry", reason="palette_ref")
        return v

    if isinstance(value, str):
        return ((plain(value, path), 1),)
    if not isinstance(value, list):
        raise _bad(path, f"must be a block state or an array of {{block, weight}}, got {kind_of(value)}")
    if not 1 <= len(value) <= MAX_PALETTE_CHOICES:
        raise _bad(path, f"has {len(value)} choices; give 1 to {MAX_PALETTE_CHOICES}")
    out = []
    for i, item in enumerate(value):
        p = f"{path}[{i}]"
        obj = obj_of(item, p, ("block",), ("weight",), what="a palette choice {block, weight}")
        out.append(
            (plain(obj["block"], f"{p}.block"), int_literal(obj.get("weight", 1), f"{p}.weight", 1, MAX_PALETTE_WEIGHT))
        )
    return tuple(out)


def parse_recipe(data: Any, *, max_depth: int = 4) -> Recipe:
    """Validate a recipe (JSON text or a decoded object) and return its tree.

    ``max_depth`` bounds the nesting of ``repeat`` and ``transform`` (a top-level one is depth 1).
    """
    if isinstance(data, (str, bytes)):
        data = decode(data)
    check_shape(data, "recipe")  # structural limits (operations, depth, bytes) before any parsing
    obj = obj_of(data, "", ("version", "operations"), ("params", "palette", "seed"), what="a recipe")
    version = obj["version"]
    if isinstance(version, bool) or version != RECIPE_VERSION:
        raise _bad(
            "version",
            f"recipe version {version!r} is not supported; this planner reads version {RECIPE_VERSION}",
            supported=[RECIPE_VERSION],
        )
    env: dict[str, Fraction] = {}
    if "params" in obj:
        p = _named(obj["params"], "params", MAX_PARAMS, "named numbers or expressions")
        for k, v in p.items():
            if isinstance(v, str):
                expr_text(v, f"params.{k}")
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _bad(f"params.{k}", f"must be a number or an expression, got {kind_of(v)}")
            if abs(v) > expr.MAX_MAGNITUDE:
                raise _bad(f"params.{k}", f"must be at most {expr.MAX_MAGNITUDE:.0e} in size, got {v!r}")
        env = expr.resolve_params(p)
    palette: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    if "palette" in obj:
        p = _named(obj["palette"], "palette", MAX_PALETTE, "named block states")
        palette = tuple(sorted((k, _palette_entry(v, f"palette.{k}")) for k, v in p.items()))
    seed = int_literal(obj["seed"], "seed", 0, MAX_SEED) if "seed" in obj else None
    parser = Parser(env, dict(palette), max_depth, KINDS)
    ops = parser.operations(obj["operations"], "operations", 0)
    return Recipe(RECIPE_VERSION, ops, tuple(sorted(env.items())), palette, seed)


def _named(value: Any, path: str, limit: int, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, f"must be an object of {what}, got {kind_of(value)}")
    if len(value) > limit:
        raise _bad(path, f"has {len(value)} entries; at most {limit}")
    for k in value:
        if not isinstance(k, str) or not _NAME.fullmatch(k):
            raise _bad(f"{path}.{k}", f"{k!r} is not a name (letters, digits, _; ≤ 32; not starting with a digit)")
        if k in expr.FUNCTIONS and path == "params":
            raise _bad(f"{path}.{k}", f"{k!r} is a function name; pick another param name", reason="expression")
    return value
