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

import builtins
import difflib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3
from mcb_common.recipe_schema import (
    ASSET_ID_PATTERN,
    AXES,
    COORD_LIMIT,
    FILTER_ENTRY_PATTERN,
    MAX_ARCH_DEPTH,
    MAX_BLOCK_TEXT,
    MAX_FILTER_ENTRIES,
    MAX_FOUNDATION_DEPTH,
    MAX_HEIGHT,
    MAX_OVERLAY_DEPTH,
    MAX_PALETTE,
    MAX_PALETTE_CHOICES,
    MAX_PALETTE_WEIGHT,
    MAX_PARAMS,
    MAX_POLYGON_POINTS,
    MAX_RADIUS,
    MAX_RECIPE_BYTES,
    MAX_REPEAT_COUNT,
    MAX_SEED,
    MAX_SOLID_RADIUS,
    MAX_THICKNESS,
    NAME_PATTERN,
    OPERATION_TYPES,
    PART_ID_PATTERN,
    RECIPE_VERSION,
    check_shape,
)

from . import expr, furniture

_NAME = re.compile(NAME_PATTERN)
# Operation types the language reserves for later revisions: a clearer refusal.
_LATER_TYPES: tuple[str, ...] = ()


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
class ArchOp:
    """A half ring (or half disc when ``filled``) standing in a vertical plane.

    ``axis`` is the horizontal axis the arch spans along; ``depth`` layers go +1 along the
    other horizontal axis from ``center``.
    """

    path: str
    center: Vec3
    radius: int
    width: int
    axis: str  # "x" | "z"
    depth: int
    filled: bool
    block: str


@dataclass(frozen=True, slots=True)
class RepeatOp:
    path: str
    count: int
    offset: Vec3
    operations: tuple[Operation, ...]


@dataclass(frozen=True, slots=True)
class TransformOp:
    """Everything inside is mirrored about ``anchor`` (if ``mirror``), then turned
    ``rotate`` quarter turns clockwise seen from above about ``anchor``, then shifted by
    ``translate``. Block states are mirrored/rotated with mcb_common.transforms."""

    path: str
    rotate: int  # quarter turns 0..3
    mirror: str | None  # "x" | "z" | None
    anchor: Vec3
    translate: Vec3
    operations: tuple[Operation, ...]


@dataclass(frozen=True, slots=True)
class ReplaceOp:
    """Within ``min``..``max``: positions whose current state matches ``filter`` become ``to``.

    ``filter`` holds the entries as written (``"!..."`` negates, ``"*"`` is every non-air
    state); they are checked against the registry by the compiler. ``keep`` says, per choice
    of ``to`` (one for a block, one per palette choice), whether it was written without
    ``[properties]`` and so keeps the source's matching properties.
    """

    path: str
    min: Vec3
    max: Vec3
    filter: tuple[str, ...]
    to: str
    keep: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class PasteOp:
    """A library asset (``asset``) or a part (``part``) placed at ``at``, turned ``rotation``
    quarter turns clockwise seen from above about ``at``."""

    path: str
    asset: str | None
    part: str | None
    at: Vec3
    rotation: int  # quarter turns 0..3


@dataclass(frozen=True, slots=True)
class SolidOp:
    """Revision 4 solids (solids.py): ``kind`` is sphere, ellipsoid, dome, cone, pyramid,
    cylinder (any axis or a thick wall) or polygon. ``radii`` are (x, y, z) for
    sphere/ellipsoid/dome, (r, r, r) for cone/pyramid/cylinder; ``thickness`` 0 = solid."""

    path: str
    kind: str
    center: Vec3  # polygon: (0, y, 0)
    radii: tuple[int, int, int]
    height: int
    axis: str  # "+y" style for dome/cone/pyramid, "x"/"y"/"z" for cylinder, "" otherwise
    thickness: int
    block: str
    points: tuple[tuple[int, int], ...] = ()
    spelled: tuple[str, ...] = ()  # keys written in the recipe (normalised JSON keeps the form)


@dataclass(frozen=True, slots=True)
class OverlayOp:
    """``depth`` layers on top of the highest non-air block of each column of min..max (the
    search range; the world as earlier operations leave it)."""

    path: str
    min: Vec3
    max: Vec3
    block: str
    depth: int


@dataclass(frozen=True, slots=True)
class FoundationOp:
    """``operations`` as usual, then every column under their lowest cell filled with ``block``
    down to the ground (the first non-air position), at most ``max_depth`` blocks."""

    path: str
    block: str
    max_depth: int
    operations: tuple[Operation, ...]


Operation = (BoxOp | LineOp | CylinderOp | ArchOp | RepeatOp | TransformOp | ReplaceOp | PasteOp
             | SolidOp | OverlayOp | FoundationOp)
Shape = BoxOp | LineOp | CylinderOp | ArchOp | ReplaceOp | PasteOp | SolidOp | OverlayOp | FoundationOp


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
            "operations": [_op_json(op, blk) for op in self.operations],
        }
        if self.params:
            out["params"] = {k: expr.fraction_json(v) for k, v in self.params}
        if self.palette:
            out["palette"] = {
                k: (blk(v[0][0]) if len(v) == 1 and v[0][1] == 1
                    else [{"block": blk(b), "weight": w} for b, w in v])
                for k, v in self.palette
            }
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
    if isinstance(op, ArchOp):
        return {"type": "arch", "center": op.center.as_dict(), "radius": op.radius,
                "width": op.width, "axis": op.axis, "depth": op.depth, "filled": op.filled,
                "block": block(op.block)}
    if isinstance(op, ReplaceOp):
        return {"type": "replace", "min": op.min.as_dict(), "max": op.max.as_dict(),
                "from": list(op.filter), "to": block(op.to), "keep_properties": list(op.keep)}
    if isinstance(op, PasteOp):
        src = {"asset": op.asset} if op.asset is not None else {"part": op.part}
        return {"type": "paste", **src, "at": op.at.as_dict(), "rotation": op.rotation * 90}
    if isinstance(op, SolidOp):
        out: dict[str, Any] = {"type": op.kind}
        if op.kind == "polygon":
            out |= {"points": [{"x": x, "z": z} for x, z in op.points], "y": op.center.y,
                    "height": op.height}
        else:
            out["center"] = op.center.as_dict()
            if op.kind in ("ellipsoid", "dome") and "radii" in op.spelled:
                out["radii"] = dict(zip("xyz", op.radii, strict=True))
            else:
                out["radius"] = op.radii[0]
            if op.kind in ("cone", "pyramid", "cylinder"):
                out["height"] = op.height
            if op.axis:
                out["axis"] = op.axis
        out["block"] = block(op.block)
        out["hollow"] = op.thickness > 0
        if op.thickness > 1:
            out["thickness"] = op.thickness
        return out
    if isinstance(op, OverlayOp):
        return {"type": "overlay", "min": op.min.as_dict(), "max": op.max.as_dict(),
                "block": block(op.block), "depth": op.depth}
    if isinstance(op, FoundationOp):
        return {"type": "foundation", "block": block(op.block), "max_depth": op.max_depth,
                "operations": [_op_json(o, block) for o in op.operations]}
    if isinstance(op, TransformOp):
        return {"type": "transform", "rotate": op.rotate * 90, "mirror": op.mirror,
                "anchor": op.anchor.as_dict(), "translate": op.translate.as_dict(),
                "operations": [_op_json(o, block) for o in op.operations]}
    return {"type": "repeat", "count": op.count, "offset": op.offset.as_dict(),
            "operations": [_op_json(o, block) for o in op.operations]}


def expanded_count(ops: tuple[Operation, ...]) -> int:
    """How many shapes the operations produce once every repeat is expanded (exact, no expansion)."""
    total = 0
    for op in ops:
        if isinstance(op, RepeatOp):
            total += op.count * expanded_count(op.operations)
        elif isinstance(op, TransformOp):
            total += expanded_count(op.operations)
        elif isinstance(op, FoundationOp):
            total += expanded_count(op.operations) + 1
        else:
            total += 1
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


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(path, f"must be true or false, got {_kind(value)}")
    return value


def _int_literal(value: Any, path: str, lo: int, hi: int) -> int:
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


def _expr_text(value: str, path: str) -> None:
    """Expression text uses only the characters of ``EXPR_PATTERN`` (as the schema says)."""
    if not re.fullmatch(expr.EXPR_PATTERN, value):
        expr.tokenize(value, path)  # names the offending character, or the length
        raise _bad(path, f"{value[:40]!r} is not an expression (letters, digits, _ + - * / % ( ) , . "
                         "and spaces; at most 256 characters)", reason="expression")


# -- operations ------------------------------------------------------------------------------
_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "box": (("type", "min", "max", "block"), ("hollow", "block_entity")),
    "line": (("type", "from", "to", "block"), ()),
    "cylinder": (("type", "center", "radius", "height", "block"), ("hollow", "axis", "thickness")),
    "repeat": (("type", "count", "offset", "operations"), ()),
    "arch": (("type", "center", "radius", "axis", "block"), ("width", "depth", "filled")),
    "transform": (("type", "operations"), ("rotate", "mirror", "anchor", "translate")),
    "replace": (("type", "min", "max", "from", "to"), ()),
    "paste": (("type", "at"), ("asset", "part", "rotation")),
    "sphere": (("type", "center", "radius", "block"), ("hollow", "thickness")),
    "ellipsoid": (("type", "center", "radii", "block"), ("hollow", "thickness")),
    "dome": (("type", "center", "block"), ("radius", "radii", "axis", "hollow", "thickness")),
    "cone": (("type", "center", "radius", "height", "block"), ("axis", "hollow", "thickness")),
    "pyramid": (("type", "center", "radius", "block"), ("height", "axis", "hollow", "thickness")),
    "polygon": (("type", "points", "y", "height", "block"), ("hollow", "thickness")),
    "overlay": (("type", "min", "max", "block"), ("depth",)),
    "foundation": (("type", "block", "operations"), ("max_depth",)),
}
_SOLIDS = ("sphere", "ellipsoid", "dome", "cone", "pyramid", "polygon")
_FILTER_ENTRY = re.compile(FILTER_ENTRY_PATTERN)
_ASSET_ID = re.compile(ASSET_ID_PATTERN)
_PART_ID = re.compile(PART_ID_PATTERN)
assert tuple(_KEYS) == OPERATION_TYPES


class _Parser:
    def __init__(self, env: dict[str, Fraction], palette: dict[str, tuple[tuple[str, int], ...]],
                 max_depth: int):
        self.env = env
        self.palette = palette
        self.max_depth = max_depth

    def corners(self, obj: dict[str, Any], path: str) -> tuple[Vec3, Vec3]:
        lo, hi = self.vec(obj["min"], f"{path}.min"), self.vec(obj["max"], f"{path}.max")
        for axis in "xyz":
            a, b = getattr(lo, axis), getattr(hi, axis)
            if b < a:
                raise _bad(
                    f"{path}.max.{axis}",
                    f"is {b}, below min.{axis}={a}; a box needs min ≤ max on every axis",
                    reason="corner_order",
                )
        return lo, hi

    def filter(self, value: Any, path: str) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items or len(items) > MAX_FILTER_ENTRIES:
            raise _bad(path, f"must be a filter entry or an array of 1 to {MAX_FILTER_ENTRIES} entries "
                             f"(\"*\", a block id, a block with properties, \"!\" to exclude), "
                             f"got {_kind(value)}")
        out = []
        for i, item in enumerate(items):
            p = path if isinstance(value, str) else f"{path}[{i}]"
            if (not isinstance(item, str) or not 1 <= len(item) <= MAX_BLOCK_TEXT + 1
                    or not _FILTER_ENTRY.match(item)):
                raise _bad(p, f"must be \"*\", a block id or a block state, optionally after one "
                              f"\"!\" (at most {MAX_BLOCK_TEXT + 1} characters), got {_kind(item)}")
            out.append(item)
        return tuple(out)

    # -- scalars (integers may be expressions over params)
    def int(self, value: Any, path: str, lo: int, hi: int) -> int:
        if isinstance(value, str):
            _expr_text(value, path)
            v = expr.evaluate(value, self.env, path)
            if v.denominator != 1:
                raise _bad(path, f"{value!r} evaluates to {float(v):g}, not an integer; "
                                 "wrap it in floor(), ceil() or round()", reason="expression")
            iv = int(v)
            if not lo <= iv <= hi:
                raise _bad(path, f"{value!r} evaluates to {iv}; it must be between {lo} and {hi}",
                           minimum=lo, maximum=hi, reason="expression")
            return iv
        return _int_literal(value, path, lo, hi)

    def vec(self, value: Any, path: str) -> Vec3:
        obj = _object(value, path, required=("x", "y", "z"), optional=(), what="a position {x, y, z}")
        return Vec3(*(self.int(obj[a], f"{path}.{a}", -COORD_LIMIT, COORD_LIMIT) for a in "xyz"))

    def block(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise _bad(path, f"must be a block state string like minecraft:stone or a palette "
                             f"reference like $wall, got {_kind(value)}")
        if len(value) > MAX_BLOCK_TEXT:
            raise _bad(path, f"is {len(value)} characters long; at most {MAX_BLOCK_TEXT}")
        if value.startswith("$"):
            name = value[1:]
            if name not in self.palette:
                near = difflib.get_close_matches(name, sorted(self.palette), n=1)
                hint = f" (did you mean ${near[0]}?)" if near else ""
                known = ", ".join(f"${n}" for n in sorted(self.palette)) or "none"
                raise _bad(path, f"unknown palette entry {value!r}{hint}; the palette has {known}",
                           reason="palette_ref")
        return value

    def thickness(self, obj: dict[str, Any], path: str) -> builtins.int:
        hollow = _bool(obj.get("hollow", False), f"{path}.hollow")
        if "thickness" not in obj:
            return 1 if hollow else 0
        if "hollow" in obj and not hollow:
            raise _bad(f"{path}.thickness", "a wall thickness needs a hollow shape; drop "
                                            "\"hollow\": false or the thickness")
        return self.int(obj["thickness"], f"{path}.thickness", 1, MAX_THICKNESS)

    def axis(self, obj: dict[str, Any], path: str, choices: tuple[str, ...], default: str) -> str:
        axis = obj.get("axis", default)
        if not isinstance(axis, str) or axis not in choices:
            raise _bad(f"{path}.axis", f"must be one of {', '.join(repr(c) for c in choices)}, "
                                       f"got {_kind(axis)}")
        return axis

    def solid(self, kind: str, obj: dict[str, Any], path: str) -> SolidOp:
        thick = self.thickness(obj, path)
        blk = self.block(obj["block"], f"{path}.block")
        spelled = tuple(sorted(obj))
        radius = lambda: self.int(obj["radius"], f"{path}.radius", 0, MAX_SOLID_RADIUS)  # noqa: E731
        if kind == "polygon":
            pts = obj["points"]
            if not isinstance(pts, list) or not 3 <= len(pts) <= MAX_POLYGON_POINTS:
                raise _bad(f"{path}.points", f"must be an array of 3 to {MAX_POLYGON_POINTS} "
                                             f"points {{x, z}}, got {_kind(pts)}")
            points = []
            for i, pt in enumerate(pts):
                o = _object(pt, f"{path}.points[{i}]", ("x", "z"), (), what="a point {x, z}")
                points.append(tuple(self.int(o[a], f"{path}.points[{i}].{a}", -COORD_LIMIT, COORD_LIMIT)
                                    for a in "xz"))
            y = self.int(obj["y"], f"{path}.y", -COORD_LIMIT, COORD_LIMIT)
            h = self.int(obj["height"], f"{path}.height", 1, MAX_HEIGHT)
            return SolidOp(path, kind, Vec3(0, y, 0), (0, 0, 0), h, "", thick, blk,
                           tuple(points), spelled)  # type: ignore[arg-type]
        center = self.vec(obj["center"], f"{path}.center")
        if kind == "sphere":
            r = radius()
            return SolidOp(path, kind, center, (r, r, r), 0, "", thick, blk, (), spelled)
        if kind in ("ellipsoid", "dome"):
            if kind == "dome" and ("radius" in obj) == ("radii" in obj):
                raise _bad(f"{path}.radius", "a dome takes either \"radius\" (half sphere) or "
                                             "\"radii\" {x, y, z} (half ellipsoid)")
            if "radii" in obj:
                o = _object(obj["radii"], f"{path}.radii", ("x", "y", "z"), (), what="radii {x, y, z}")
                radii = tuple(self.int(o[a], f"{path}.radii.{a}", 0, MAX_SOLID_RADIUS) for a in "xyz")
            else:
                r = radius()
                radii = (r, r, r)
            axis = self.axis(obj, path, AXES, "+y") if kind == "dome" else ""
            return SolidOp(path, kind, center, radii, 0, axis, thick, blk, (), spelled)  # type: ignore[arg-type]
        if kind == "cylinder":
            r = self.int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS)
            h = self.int(obj["height"], f"{path}.height", 1, MAX_HEIGHT)
            return SolidOp(path, kind, center, (r, r, r), h, self.axis(obj, path, ("x", "y", "z"), "y"),
                           thick, blk, (), spelled)
        r = radius()
        default_h = r + 1 if kind == "pyramid" else None
        height = (self.int(obj["height"], f"{path}.height", 1, MAX_SOLID_RADIUS + 1) if "height" in obj
                  else default_h)
        assert height is not None
        return SolidOp(path, kind, center, (r, r, r), height, self.axis(obj, path, AXES, "+y"), thick, blk,
                       (), spelled)

    # -- operations
    def operations(self, value: Any, path: str, depth: builtins.int) -> tuple[Operation, ...]:
        if not isinstance(value, list):
            raise _bad(path, f"must be an array of operations, got {_kind(value)}")
        if not value:
            raise _bad(path, "is empty; give at least one operation")
        return tuple(self.operation(item, f"{path}[{i}]", depth) for i, item in enumerate(value))

    def nest(self, path: str, depth: builtins.int) -> None:
        if depth + 1 > self.max_depth:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"{path}: repeat/transform nested {depth + 1} deep; the limit is {self.max_depth}",
                details={"path": path, "limit": "max_depth", "value": depth + 1, "max": self.max_depth},
            )

    def operation(self, value: Any, path: str, depth: builtins.int) -> Operation:
        if not isinstance(value, dict):
            raise _bad(path, f"must be an operation object with a \"type\", got {_kind(value)}")
        if "type" not in value:
            raise _bad(f"{path}.type", f"missing; one of {', '.join(OPERATION_TYPES)}")
        kind = value["type"]
        if not isinstance(kind, str) or kind not in _KEYS:
            if isinstance(kind, str) and kind in _LATER_TYPES:
                msg = (f"operation {kind!r} is not supported by this planner yet; use "
                       f"{', '.join(OPERATION_TYPES)}")
            else:
                near = difflib.get_close_matches(str(kind), OPERATION_TYPES, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                msg = f"unknown operation {_kind(kind)}{hint}; recipes have {', '.join(OPERATION_TYPES)}"
            raise _bad(f"{path}.type", msg, supported=list(OPERATION_TYPES))
        required, optional = _KEYS[kind]
        obj = _object(value, path, required, optional, what=f"a {kind} operation")
        if kind == "replace":
            lo, hi = self.corners(obj, path)
            flt = self.filter(obj["from"], f"{path}.from")
            to = self.block(obj["to"], f"{path}.to")
            texts = [b for b, _ in self.palette[to[1:]]] if to.startswith("$") else [to]
            return ReplaceOp(path, lo, hi, flt, to, tuple("[" not in t for t in texts))
        if kind == "paste":
            has = [k for k in ("asset", "part") if k in obj]
            if len(has) != 1:
                raise _bad(f"{path}.asset" if not has else f"{path}.part",
                           "missing; a paste needs \"asset\" (a library id, see asset_list) or "
                           "\"part\" (a part id)" if not has else
                           "a paste takes either \"asset\" or \"part\", not both")
            src = obj[has[0]]
            pattern = _ASSET_ID if has[0] == "asset" else _PART_ID
            if not isinstance(src, str) or not pattern.match(src):
                raise _bad(f"{path}.{has[0]}", f"must be {'an asset id like tower or farm.nbt' if has[0] == 'asset' else 'a part id like pt_0123abcd4567'}, "
                                              f"got {_kind(src)}")
            rot = obj.get("rotation", 0)
            if isinstance(rot, float) and rot.is_integer():
                rot = int(rot)
            if isinstance(rot, bool) or rot not in (0, 90, 180, 270):
                raise _bad(f"{path}.rotation", f"must be 0, 90, 180 or 270 (degrees clockwise seen "
                                               f"from above), got {_kind(rot)}")
            at = self.vec(obj["at"], f"{path}.at")
            return PasteOp(path, src if has[0] == "asset" else None, src if has[0] == "part" else None,
                           at, rot // 90)
        if kind in _SOLIDS or (kind == "cylinder" and ("axis" in obj or "thickness" in obj)):
            return self.solid(kind, obj, path)
        if kind == "overlay":
            lo, hi = self.corners(obj, path)
            return OverlayOp(path, lo, hi, self.block(obj["block"], f"{path}.block"),
                             self.int(obj.get("depth", 1), f"{path}.depth", 1, MAX_OVERLAY_DEPTH))
        if kind == "foundation":
            self.nest(path, depth)
            inner = self.operations(obj["operations"], f"{path}.operations", depth + 1)
            for op in _flat(inner):
                if isinstance(op, (ReplaceOp, OverlayOp, FoundationOp)):
                    raise _bad(f"{op.path}.type", f"a foundation stands under shapes; "
                                                  f"{_KIND_OF[type(op)]} cannot be inside one")
            return FoundationOp(path, self.block(obj["block"], f"{path}.block"),
                                self.int(obj.get("max_depth", 64), f"{path}.max_depth", 1,
                                         MAX_FOUNDATION_DEPTH), inner)
        if kind == "box":
            lo, hi = self.corners(obj, path)
            block = self.block(obj["block"], f"{path}.block")
            if "block_entity" in obj:  # furniture: carried as the full state text (mcb_common.blockentity)
                block = furniture.attach(block, obj["block_entity"], f"{path}.block_entity")
            return BoxOp(path, lo, hi, block, _bool(obj.get("hollow", False), f"{path}.hollow"))
        if kind == "line":
            return LineOp(path, self.vec(obj["from"], f"{path}.from"), self.vec(obj["to"], f"{path}.to"),
                          self.block(obj["block"], f"{path}.block"))
        if kind == "cylinder":
            return CylinderOp(
                path,
                self.vec(obj["center"], f"{path}.center"),
                self.int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS),
                self.int(obj["height"], f"{path}.height", 1, MAX_HEIGHT),
                self.block(obj["block"], f"{path}.block"),
                _bool(obj.get("hollow", False), f"{path}.hollow"),
            )
        if kind == "arch":
            axis = obj["axis"]
            if axis not in ("x", "z"):
                raise _bad(f"{path}.axis", f"must be \"x\" or \"z\" (the axis the arch spans along), "
                                           f"got {_kind(axis)}")
            return ArchOp(
                path,
                self.vec(obj["center"], f"{path}.center"),
                self.int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS),
                self.int(obj.get("width", 1), f"{path}.width", 1, MAX_RADIUS),
                axis,
                self.int(obj.get("depth", 1), f"{path}.depth", 1, MAX_ARCH_DEPTH),
                _bool(obj.get("filled", False), f"{path}.filled"),
                self.block(obj["block"], f"{path}.block"),
            )
        if kind == "transform":
            rot = obj.get("rotate", 0)
            if isinstance(rot, float) and rot.is_integer():
                rot = int(rot)
            if isinstance(rot, bool) or rot not in (0, 90, 180, 270):
                raise _bad(f"{path}.rotate", f"must be 0, 90, 180 or 270 (degrees clockwise seen "
                                             f"from above), got {_kind(rot)}")
            mir = obj.get("mirror")
            if "mirror" in obj and (not isinstance(mir, str) or mir not in ("x", "z")):
                raise _bad(f"{path}.mirror", f"must be \"x\" (east ↔ west) or \"z\" (north ↔ south), "
                                             f"got {_kind(mir)}")
            for k in ("rotate", "mirror"):
                if k in obj and "anchor" not in obj:
                    raise _bad(f"{path}.anchor", f"missing; a transform with {k!r} needs the anchor "
                                                 "position it turns or mirrors about")
            anchor = self.vec(obj["anchor"], f"{path}.anchor") if "anchor" in obj else Vec3(0, 0, 0)
            translate = (self.vec(obj["translate"], f"{path}.translate") if "translate" in obj
                         else Vec3(0, 0, 0))
            self.nest(path, depth)
            inner = self.operations(obj["operations"], f"{path}.operations", depth + 1)
            return TransformOp(path, rot // 90, mir, anchor, translate, inner)
        # repeat
        count = self.int(obj["count"], f"{path}.count", 1, MAX_REPEAT_COUNT)
        offset = self.vec(obj["offset"], f"{path}.offset")
        self.nest(path, depth)
        inner = self.operations(obj["operations"], f"{path}.operations", depth + 1)
        return RepeatOp(path, count, offset, inner)


def _flat(ops: tuple[Operation, ...]):
    for op in ops:
        yield op
        if isinstance(op, (RepeatOp, TransformOp, FoundationOp)):
            yield from _flat(op.operations)


_KIND_OF = {ReplaceOp: "replace", OverlayOp: "overlay", FoundationOp: "foundation"}


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
            raise _bad(p, f"must be a block state string, got {_kind(v)}")
        if len(v) > MAX_BLOCK_TEXT:
            raise _bad(p, f"is {len(v)} characters long; at most {MAX_BLOCK_TEXT}")
        if v.startswith("$"):
            raise _bad(p, "a palette entry cannot refer to another palette entry", reason="palette_ref")
        return v

    if isinstance(value, str):
        return ((plain(value, path), 1),)
    if not isinstance(value, list):
        raise _bad(path, f"must be a block state or an array of {{block, weight}}, got {_kind(value)}")
    if not 1 <= len(value) <= MAX_PALETTE_CHOICES:
        raise _bad(path, f"has {len(value)} choices; give 1 to {MAX_PALETTE_CHOICES}")
    out = []
    for i, item in enumerate(value):
        p = f"{path}[{i}]"
        obj = _object(item, p, ("block",), ("weight",), what="a palette choice {block, weight}")
        out.append((plain(obj["block"], f"{p}.block"),
                    _int_literal(obj.get("weight", 1), f"{p}.weight", 1, MAX_PALETTE_WEIGHT)))
    return tuple(out)


def parse_recipe(data: Any, *, max_depth: int = 4) -> Recipe:
    """Validate a recipe (JSON text or a decoded object) and return its tree.

    ``max_depth`` bounds the nesting of ``repeat`` and ``transform`` (a top-level one is depth 1).
    """
    if isinstance(data, (str, bytes)):
        data = decode(data)
    check_shape(data, "recipe")  # structural limits (operations, depth, bytes) before any parsing
    obj = _object(data, "", ("version", "operations"), ("params", "palette", "seed"), what="a recipe")
    version = obj["version"]
    if isinstance(version, bool) or version != RECIPE_VERSION:
        raise _bad("version", f"recipe version {version!r} is not supported; this planner reads version {RECIPE_VERSION}",
                   supported=[RECIPE_VERSION])
    env: dict[str, Fraction] = {}
    if "params" in obj:
        p = _named(obj["params"], "params", MAX_PARAMS, "named numbers or expressions")
        for k, v in p.items():
            if isinstance(v, str):
                _expr_text(v, f"params.{k}")
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _bad(f"params.{k}", f"must be a number or an expression, got {_kind(v)}")
            if abs(v) > expr.MAX_MAGNITUDE:
                raise _bad(f"params.{k}", f"must be at most {expr.MAX_MAGNITUDE:.0e} in size, got {v!r}")
        env = expr.resolve_params(p)
    palette: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    if "palette" in obj:
        p = _named(obj["palette"], "palette", MAX_PALETTE, "named block states")
        palette = tuple(sorted((k, _palette_entry(v, f"palette.{k}")) for k, v in p.items()))
    seed = _int_literal(obj["seed"], "seed", 0, MAX_SEED) if "seed" in obj else None
    parser = _Parser(env, dict(palette), max_depth)
    ops = parser.operations(obj["operations"], "operations", 0)
    return Recipe(RECIPE_VERSION, ops, tuple(sorted(env.items())), palette, seed)


def _named(value: Any, path: str, limit: int, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, f"must be an object of {what}, got {_kind(value)}")
    if len(value) > limit:
        raise _bad(path, f"has {len(value)} entries; at most {limit}")
    for k in value:
        if not isinstance(k, str) or not _NAME.fullmatch(k):
            raise _bad(f"{path}.{k}", f"{k!r} is not a name (letters, digits, _; ≤ 32; not starting with a digit)")
        if k in expr.FUNCTIONS and path == "params":
            raise _bad(f"{path}.{k}", f"{k!r} is a function name; pick another param name",
                       reason="expression")
    return value
