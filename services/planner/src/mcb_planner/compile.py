"""Compile a recipe into its write set: position → desired canonical block state.

Pipeline (each step refuses before the next one spends anything)::

    parse (invalid_request; repeat depth → budget_exceeded)
    → count shapes after repeat expansion, exactly, without expanding (budget_exceeded)
    → block states against the registry (unsupported_block with suggestions, naming the path)
    → palette entries against the registry too (weighted choices: palette.<name>[i].block)
    → expand repeats and transforms into placements: each shape with a Frame (one of the 8
      quarter-turn/mirror matrices on x/z plus a translation) and its state options turned
      by the frame's orientation (mcb_common.transforms); every placement's bounding box
      against the world's heights, the world border and the request's area (out_of_bounds)
    → examined positions = Σ cells of every placement, in closed form (budget_exceeded)
    → rasterise into packed int64 keys, pick weighted palette choices per position
      (a hash of seed, palette name and position), resolve overlaps (later operations win);
      the time budget is checked after every shape (budget_exceeded, limit max_millis)
    → changed positions = distinct cells (budget_exceeded)
    → materials, bounds, recipe hash

Revision 3: ``paste`` sources (assets through the schematic import checks, parts from the
request) are loaded while placements are built, so their sizes count before any cell exists;
``replace`` reads its (transformed) box through the ``world`` port when its turn comes and
tests each position's state *as the earlier operations leave it* (the write set so far is
collapsed and looked up), the world's state elsewhere — so a recipe reads top to bottom. The
recipe hash then also covers a digest of what was read (sources.py).

Packed key (invariant: positions are inside the world, which the bounds check guarantees):
``(y + 64) << 52 | (z + 2^25) << 26 | (x + 2^25)``. Ordering keys orders positions by
(y, z, x), the deterministic output order.

"Changed" here means "in the write set": apart from ``replace`` regions the planner does not
see the world, so blocks that already hold the desired state are only discovered by the journal
when it reads the world.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mcb_common.blockinfo import REDSTONE, BlockInfo
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import WORLD_XZ_LIMIT, Box, Vec3
from mcb_common.registry import AIR_NAMES, DEFAULT_VERSION, Registry
from mcb_common.transforms import transform as transform_state

from . import PLANNER_VERSION, connect, furniture, shapes, solids, sources
from .recipe import (
    ArchOp,
    BoxOp,
    CylinderOp,
    FoundationOp,
    LineOp,
    Operation,
    OverlayOp,
    PasteOp,
    Recipe,
    RepeatOp,
    ReplaceOp,
    Shape,
    SolidOp,
    TransformOp,
    expanded_count,
    parse_recipe,
)
from .sources import PartBlocks, RegionReader

# The overworld's build heights since 1.18 (every version the registry knows).
WORLD_MIN_Y = -64
WORLD_MAX_Y = 319

_XZ_OFF = 1 << 25  # > WORLD_XZ_LIMIT, so x + _XZ_OFF fits 26 bits
_MASK26 = (1 << 26) - 1
assert _XZ_OFF > WORLD_XZ_LIMIT


@dataclass(frozen=True, slots=True)
class Limits:
    """Budgets of one compilation. A zero from the wire means "the default"."""

    max_changed_blocks: int = 100_000
    max_examined_positions: int = 2_000_000
    max_operations: int = 256
    max_depth: int = 4
    max_millis: int = 10_000

    # What a caller may raise them to: beyond this the planner's memory is not bounded sanely.
    CEILINGS = {
        "max_changed_blocks": 2_000_000,
        "max_examined_positions": 20_000_000,
        "max_operations": 65_536,
        "max_depth": 16,
        "max_millis": 60_000,
    }

    @classmethod
    def of(cls, **values: int | None) -> Limits:
        defaults = cls()
        chosen: dict[str, int] = {}
        for name, ceiling in cls.CEILINGS.items():
            v = values.pop(name, None)
            if not v:
                v = getattr(defaults, name)
            if v > ceiling:
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    f"limits.{name}={v} is above the planner's ceiling {ceiling}",
                    details={"path": f"limits.{name}", "value": v, "max": ceiling},
                )
            chosen[name] = int(v)
        if values:
            raise McbError(ErrorCode.INVALID_REQUEST, f"unknown limits {sorted(values)}")
        return cls(**chosen)


@dataclass(frozen=True, slots=True)
class Frame:
    """Local → world: x' = a·x + b·z + t.x, y' = y + t.y, z' = c·x + d·z + t.z, where
    [[a, b], [c, d]] is one of the 8 signed permutations (quarter turns, mirrors)."""

    m: tuple[int, int, int, int] = (1, 0, 0, 1)
    t: Vec3 = Vec3(0, 0, 0)

    def point(self, p: Vec3) -> Vec3:
        a, b, c, d = self.m
        return Vec3(a * p.x + b * p.z + self.t.x, p.y + self.t.y, c * p.x + d * p.z + self.t.z)

    def shifted(self, v: Vec3) -> Frame:
        """This frame after a local translation by ``v`` (a repeat copy)."""
        a, b, c, d = self.m
        return Frame(self.m, Vec3(self.t.x + a * v.x + b * v.z, self.t.y + v.y,
                                  self.t.z + c * v.x + d * v.z))

    def then(self, op: TransformOp) -> Frame:
        """This frame composed with a transform operation's local map G(p) = A·p + g."""
        # A = R^k · S (S = mirror x) or R^k · S_z; build A by applying the steps to the basis.
        def steps(x: int, z: int) -> tuple[int, int]:
            if op.mirror == "x":
                x = -x
            elif op.mirror == "z":
                z = -z
            for _ in range(op.rotate):
                x, z = -z, x
            return x, z
        ax, az = steps(1, 0)
        bx, bz = steps(0, 1)
        am = (ax, bx, az, bz)  # columns are the images of the x and z unit vectors
        anc = op.anchor
        # g = anchor − A·anchor + translate (y: translate only)
        gx = anc.x - (am[0] * anc.x + am[1] * anc.z) + op.translate.x
        gz = anc.z - (am[2] * anc.x + am[3] * anc.z) + op.translate.z
        a, b, c, d = self.m
        m2 = (a * am[0] + b * am[2], a * am[1] + b * am[3], c * am[0] + d * am[2], c * am[1] + d * am[3])
        return Frame(m2, self.point(Vec3(gx, op.translate.y, gz)))

    def orientation(self) -> tuple[bool, int]:
        """(mirrored in x first?, quarter turns clockwise) with m = R^k · S^mirrored."""
        a, b, c, d = self.m
        flipped = a * d - b * c == -1
        if flipped:  # m · S: negate the first column
            a, c = -a, -c
        k = {(1, 0, 0, 1): 0, (0, -1, 1, 0): 1, (-1, 0, 0, -1): 2, (0, 1, -1, 0): 3}[(a, b, c, d)]
        return flipped, k

    def is_identity(self) -> bool:
        return self.m == (1, 0, 0, 1) and self.t == Vec3(0, 0, 0)

    def cells(self, local: np.ndarray) -> np.ndarray:
        if self.m == (1, 0, 0, 1):
            if self.t == Vec3(0, 0, 0):
                return local
            return local + np.array([self.t.x, self.t.y, self.t.z], dtype=np.int64)
        a, b, c, d = self.m
        out = np.empty_like(local)
        out[:, 0] = a * local[:, 0] + b * local[:, 2] + self.t.x
        out[:, 1] = local[:, 1] + self.t.y
        out[:, 2] = c * local[:, 0] + d * local[:, 2] + self.t.z
        return out


IDENTITY = Frame()


@dataclass(frozen=True, slots=True)
class Placement:
    """One shape of the recipe after repeat/transform expansion, placed by ``frame``."""

    shape: Shape
    frame: Frame
    copies: tuple[int, ...]  # the copy index in each enclosing repeat, outermost first
    options: tuple[tuple[int, int], ...]  # (state index, weight); one entry = a fixed state
    salt: int  # palette name hash (weighted choices differ per palette entry)
    # paste: (cells relative to the frame, (N, 3) int64; state index per cell, uint32)
    pasted: tuple[np.ndarray, np.ndarray] | None = None
    children: tuple[Placement, ...] = ()  # foundation: the placements it stands under
    floor: int = WORLD_MIN_Y  # foundation: the lowest y it may fill (the world's or the area's)

    @property
    def state(self) -> int:
        return self.options[0][0]

    def local_bounds(self) -> Box:
        s = self.shape
        if isinstance(s, (BoxOp, ReplaceOp)):
            return Box(s.min, s.max)
        if isinstance(s, PasteOp):
            assert self.pasted is not None
            cells = self.pasted[0]
            lo, hi = cells.min(axis=0), cells.max(axis=0)
            return Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))
        if isinstance(s, LineOp):
            return Box.of(s.start, s.end)
        if isinstance(s, SolidOp):
            lo, hi = _solid_box(s)
            return Box(Vec3(*lo), Vec3(*hi))
        if isinstance(s, OverlayOp):
            return Box(s.min, Vec3(s.max.x, s.max.y + s.depth, s.max.z))
        if isinstance(s, CylinderOp):
            c, r = s.center, s.radius
            return Box(Vec3(c.x - r, c.y, c.z - r), Vec3(c.x + r, c.y + s.height - 1, c.z + r))
        assert isinstance(s, ArchOp)  # a foundation's box is foundation_box() (bounds() asks it)
        c, r, dp = s.center, s.radius, s.depth - 1
        if s.axis == "x":
            return Box(Vec3(c.x - r, c.y, c.z), Vec3(c.x + r, c.y + r, c.z + dp))
        return Box(Vec3(c.x, c.y, c.z - r), Vec3(c.x + dp, c.y + r, c.z + r))

    def bounds(self) -> Box:
        if isinstance(self.shape, FoundationOp):
            return self.foundation_box()
        b = self.local_bounds()
        return Box.of(self.frame.point(b.min), self.frame.point(b.max))

    def foundation_box(self) -> Box:
        """Everything a foundation may fill or read: under its children, down to max_depth."""
        assert isinstance(self.shape, FoundationOp)
        bs = [c.bounds() for c in self.children]
        lo_y = min(b.min.y for b in bs)
        top = max(max(b.max.y for b in bs) - 1, lo_y - 1)
        bottom = max(self.floor, lo_y - self.shape.max_depth)
        return Box(Vec3(min(b.min.x for b in bs), min(bottom, top), min(b.min.z for b in bs)),
                   Vec3(max(b.max.x for b in bs), max(bottom, top), max(b.max.z for b in bs)))

    def count(self) -> int:
        s = self.shape
        if isinstance(s, BoxOp):
            return shapes.box_count(s.min, s.max, s.hollow)
        if isinstance(s, ReplaceOp):
            return shapes.box_count(s.min, s.max, False)
        if isinstance(s, PasteOp):
            assert self.pasted is not None
            return len(self.pasted[1])
        if isinstance(s, LineOp):
            return shapes.line_count(s.start, s.end)
        if isinstance(s, SolidOp):
            return solids.bbox_volume(_solid_box(s))  # the dense grid it evaluates
        if isinstance(s, OverlayOp):
            return Box(s.min, s.max).volume + (s.max.x - s.min.x + 1) * (s.max.z - s.min.z + 1) * s.depth
        if isinstance(s, FoundationOp):
            return self.foundation_box().volume
        if isinstance(s, CylinderOp):
            return shapes.cylinder_count(s.radius, s.height, s.hollow)
        assert isinstance(s, ArchOp)
        return shapes.arch_count(s.radius, s.width, s.depth, s.filled)

    def cells(self) -> np.ndarray:
        s = self.shape
        if isinstance(s, BoxOp):
            cells = shapes.box_cells(s.min, s.max, s.hollow)
        elif isinstance(s, ReplaceOp):
            cells = shapes.box_cells(s.min, s.max, False)
        elif isinstance(s, PasteOp):
            assert self.pasted is not None
            cells = self.pasted[0]
        elif isinstance(s, LineOp):
            cells = shapes.line_cells(s.start, s.end)
        elif isinstance(s, SolidOp):
            cells = _solid_grid(s).cells((s.center.x, s.center.y, s.center.z) if s.kind != "polygon"
                                         else (0, 0, 0))
        elif isinstance(s, CylinderOp):
            cells = shapes.cylinder_cells(s.center, s.radius, s.height, s.hollow)
        else:
            assert isinstance(s, ArchOp)  # overlays and foundations fill elsewhere (never through cells())
            cells = shapes.arch_cells(s.center, s.radius, s.width, s.axis, s.depth, s.filled)
        return self.frame.cells(cells)

    def where(self) -> str:
        if self.frame.is_identity() and not self.copies:
            return self.shape.path
        parts = []
        if self.copies:
            parts.append(f"repeat copy {', '.join(str(i) for i in self.copies)}")
        if self.frame.m == (1, 0, 0, 1):
            t = self.frame.t
            parts.append(f"shifted by x={t.x} y={t.y} z={t.z}")
        else:
            parts.append("transformed")
        return f"{self.shape.path} ({', '.join(parts)})"


_KIND = {ReplaceOp: "replace", OverlayOp: "overlay", FoundationOp: "foundation"}
# replace with kept properties: the world's own (already connected) states stay as they are
_KEPT = connect.PIN_ALL << connect.PIN_SHIFT


def _solid_box(s: SolidOp) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The solid's bounding box in recipe coordinates."""
    if s.kind == "polygon":
        return solids.polygon_box(s.points, s.center.y, s.height)
    if s.kind in ("sphere", "ellipsoid", "dome"):
        lo, hi = solids.ellipsoid_box(s.radii, s.axis or None)
    else:
        lo, hi = solids.axial_box(s.axis if s.kind != "cylinder" else "+" + s.axis, s.radii[0], s.height)
    c = (s.center.x, s.center.y, s.center.z)
    return (lo[0] + c[0], lo[1] + c[1], lo[2] + c[2]), (hi[0] + c[0], hi[1] + c[1], hi[2] + c[2])


def _solid_grid(s: SolidOp) -> solids.Grid:
    if s.kind in ("sphere", "ellipsoid", "dome"):
        return solids.ellipsoid(s.radii, s.thickness, s.axis or None)
    if s.kind in ("cone", "pyramid"):
        return solids.cone(s.radii[0], s.height, s.axis, s.thickness, square=s.kind == "pyramid")
    if s.kind == "cylinder":
        return solids.cylinder(s.radii[0], s.height, s.axis, s.thickness)
    return solids.polygon(s.points, s.center.y, s.height, s.thickness)


@dataclass(frozen=True)
class CompileResult:
    xyz: np.ndarray  # (N, 3) int64, sorted by (y, z, x)
    states: np.ndarray  # (N,) uint32 indexes into palette
    palette: tuple[str, ...]  # canonical states, most used first (ties by name)
    materials: tuple[tuple[str, int], ...]  # same order as palette
    bounds: Box
    examined: int
    recipe_hash: str
    minecraft_version: str
    planner_version: str = PLANNER_VERSION
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.states)

    def blocks(self) -> dict[tuple[int, int, int], str]:
        """The write set as a dict (convenient for tests and small plans; O(N) objects)."""
        pal = self.palette
        return {
            (x, y, z): pal[s]
            for (x, y, z), s in zip(self.xyz.tolist(), self.states.tolist(), strict=True)
        }


# -- helpers ---------------------------------------------------------------------------------


def _budget(message: str, limit: str, value: int, maximum: int, **details: Any) -> McbError:
    return McbError(
        ErrorCode.BUDGET_EXCEEDED,
        message,
        details={"limit": limit, "value": value, "max": maximum, **details},
    )


def _box_text(b: Box) -> str:
    return f"x {b.min.x}..{b.max.x}, y {b.min.y}..{b.max.y}, z {b.min.z}..{b.max.z}"


def _walk_shapes(ops: tuple[Operation, ...]) -> Iterator[Shape]:
    for op in ops:
        if isinstance(op, (RepeatOp, TransformOp)):
            yield from _walk_shapes(op.operations)
        elif isinstance(op, FoundationOp):
            yield from _walk_shapes(op.operations)
            yield op
        else:
            yield op


def _expand(ops: tuple[Operation, ...], frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
    for op in ops:
        if isinstance(op, RepeatOp):
            for i in range(op.count):
                yield from _expand(op.operations, frame.shifted(op.offset.scaled(i)), (*copies, i))
        elif isinstance(op, TransformOp):
            yield from _expand(op.operations, frame.then(op), copies)
        elif isinstance(op, FoundationOp):
            yield from _expand(op.operations, frame, copies)
            yield op, frame, copies
        else:
            yield op, frame, copies


def _salt(name: str) -> int:
    return int.from_bytes(hashlib.sha256(b"mcb-palette:" + name.encode()).digest()[:8], "little")


_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over uint64 (wrapping arithmetic): a well-mixed hash."""
    x = x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def choose(keys: np.ndarray, options: tuple[tuple[int, int], ...], salt: int, seed: int) -> np.ndarray:
    """Weighted choice per packed position key: a pure function of (seed, palette name,
    position), so it does not depend on operation order, repeats or other shapes."""
    if len(options) == 1:
        return np.full(len(keys), options[0][0], dtype=np.uint32)
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + salt) & 0xFFFFFFFFFFFFFFFF)
    h = _mix64(keys.astype(np.uint64) ^ base)
    total = sum(w for _, w in options)
    r = h % np.uint64(total)
    bounds = np.cumsum([w for _, w in options]).astype(np.uint64)
    idx = np.searchsorted(bounds, r, side="right")
    states = np.array([s for s, _ in options], dtype=np.uint32)
    return states[idx]


def _canonical(registry: Registry, text: str, path: str) -> str:
    try:
        return furniture.canonical(registry, text, path)  # block-entity data and leaves too
    except McbError as e:
        if "path" in e.details:  # already names its exact place (e.g. ….block_entity.items[0].count)
            raise
        raise McbError(e.code, f"{path}: {e.message}", e.retryable, {**e.details, "path": path}) from None


def _check_bounds(p: Placement, area: Box | None) -> None:
    b = p.bounds()
    problem = None
    if b.min.y < WORLD_MIN_Y or b.max.y > WORLD_MAX_Y:
        problem = (
            f"spans y {b.min.y}..{b.max.y}, outside the world's heights "
            f"{WORLD_MIN_Y}..{WORLD_MAX_Y}"
        )
    elif min(b.min.x, b.min.z) < -WORLD_XZ_LIMIT or max(b.max.x, b.max.z) > WORLD_XZ_LIMIT:
        problem = f"spans {_box_text(b)}, beyond the world border ±{WORLD_XZ_LIMIT}"
    elif area is not None and not area.contains_box(b):
        problem = f"spans {_box_text(b)}, outside the build area {_box_text(area)}"
    if problem is None:
        return
    raise McbError(
        ErrorCode.OUT_OF_BOUNDS,
        f"{p.where()} {problem}",
        details={
            "path": p.shape.path,
            "copies": list(p.copies),
            "shape_bounds": b.as_dict(),
            "area": area.as_dict() if area is not None else None,
            "world_heights": [WORLD_MIN_Y, WORLD_MAX_Y],
        },
    )


def pack(cells: np.ndarray) -> np.ndarray:
    """(N, 3) cells inside the world → int64 keys ordered like (y, z, x)."""
    return (
        ((cells[:, 1] - WORLD_MIN_Y) << 52)
        | ((cells[:, 2] + _XZ_OFF) << 26)
        | (cells[:, 0] + _XZ_OFF)
    )


def unpack(keys: np.ndarray) -> np.ndarray:
    out = np.empty((len(keys), 3), dtype=np.int64)
    out[:, 0] = (keys & _MASK26) - _XZ_OFF
    out[:, 1] = (keys >> 52) + WORLD_MIN_Y
    out[:, 2] = ((keys >> 26) & _MASK26) - _XZ_OFF
    return out


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def recipe_hash(normalised: dict[str, Any], registry_sha256: str, planner_version: str = PLANNER_VERSION,
                inputs: str = "") -> str:
    """``inputs``: a digest of what the recipe read besides itself (world regions of
    ``replace``, assets and parts of ``paste``); empty — and left out — when it read nothing."""
    h = hashlib.sha256()
    h.update(b"mcb-recipe\n")
    h.update(canonical_json(normalised))
    h.update(b"\nregistry:" + registry_sha256.encode())
    h.update(b"\nplanner:" + planner_version.encode())
    if inputs:
        h.update(b"\ninputs:" + inputs.encode())
    return h.hexdigest()


# -- the compiler ----------------------------------------------------------------------------


def compile_recipe(
    data: Any,
    *,
    minecraft_version: str = DEFAULT_VERSION,
    limits: Limits | None = None,
    area: Box | None = None,
    world: RegionReader | None = None,
    parts: Mapping[str, PartBlocks] | None = None,
    assets: sources.AssetReader | None = None,
) -> CompileResult:
    """Compile a recipe (JSON text, decoded JSON or a parsed ``Recipe``) into its write set.

    ``world`` reads the current states of ``replace`` regions; ``parts`` holds the parts
    ``paste`` may name; ``assets`` reads library files (default: the asset library folder).
    """
    limits = limits or Limits()
    recipe = data if isinstance(data, Recipe) else parse_recipe(data, max_depth=limits.max_depth)

    n_ops = expanded_count(recipe.operations)
    if n_ops > limits.max_operations:
        raise _budget(
            f"the recipe expands to {n_ops} shapes after repeats; the limit is "
            f"{limits.max_operations} — use fewer or larger shapes",
            "max_operations", n_ops, limits.max_operations,
        )

    started = time.monotonic()
    registry = Registry.load(minecraft_version or DEFAULT_VERSION)
    canon: dict[str, str] = {}  # block text as written → canonical state
    table: dict[str, int] = {}  # canonical state → index
    palette_opts: dict[str, tuple[tuple[str, int], ...]] = {}  # palette name → canonical choices
    for name, choices in recipe.palette:
        out = []
        for i, (text, weight) in enumerate(choices):
            if text not in canon:
                where = f"palette.{name}" if len(choices) == 1 else f"palette.{name}[{i}].block"
                canon[text] = _canonical(registry, text, where)
            out.append((canon[text], weight))
        palette_opts[name] = tuple(out)
    used_palette: set[str] = set()
    filters: dict[str, tuple[sources.FilterEntry, ...]] = {}
    for shape in _walk_shapes(recipe.operations):
        if isinstance(shape, PasteOp):
            continue
        if isinstance(shape, ReplaceOp):
            filters[shape.path] = sources.parse_filter(shape.filter, registry, f"{shape.path}.from")
            text, where = shape.to, f"{shape.path}.to"
        else:
            text, where = shape.block, f"{shape.path}.block"
        if text.startswith("$"):
            used_palette.add(text[1:])
        elif text not in canon:
            canon[text] = _canonical(registry, text, where)

    oriented: dict[tuple[str, bool, int], int] = {}  # (canonical, mirrored, turns) → table index

    def index(state: str, flipped: bool, k: int) -> int:
        key = (state, flipped, k)
        i = oriented.get(key)
        if i is None:
            s2 = furniture.persist(state) if not flipped and k == 0 else furniture.persist(furniture.turn(
                state, registry, mirror_axis="x" if flipped else None, quarter_turns=k))
            i = oriented[key] = table.setdefault(s2, len(table))
        return i

    raw_palette = dict(recipe.palette)

    def pin(text: str, flipped: bool, k: int) -> int:
        """Connection properties the text spells out, in the world frame (connect.py)."""
        return connect.turn_pins(connect.pins_of(text), flipped, k) << connect.PIN_SHIFT

    placements: list[Placement] = []
    pasted: dict[tuple[str, str], sources.Source] = {}
    warnings: list[str] = []
    for shape, frame, copies in _expand(recipe.operations, IDENTITY, ()):
        flipped, k = frame.orientation()
        if isinstance(shape, PasteOp):
            key = ("asset", shape.asset) if shape.asset is not None else ("part", shape.part or "")
            src = pasted.get(key)
            if src is None:
                if shape.asset is not None:
                    src = sources.load_asset(shape.asset, registry, limits.max_changed_blocks, assets,
                                             f"{shape.path}.asset")
                else:
                    src = sources.load_part(key[1], parts, registry, f"{shape.path}.part")
                pasted[key] = src
                warnings.extend(src.warnings)
            # states: the frame's map after the paste's own turn, m · R^r
            kk = (k - shape.rotation) % 4 if flipped else (k + shape.rotation) % 4
            remap_src = np.array([index(st, flipped, kk) | connect.PIN_ALL << connect.PIN_SHIFT
                                  for st in src.palette], dtype=np.uint32)  # pasted: kept as saved
            cells = sources.turn_cells(src.cells, shape.rotation)
            cells += np.array([shape.at.x, shape.at.y, shape.at.z], dtype=np.int64)
            placements.append(Placement(shape, frame, copies, (), 0, (cells, remap_src[src.states])))
            continue
        block = shape.to if isinstance(shape, ReplaceOp) else shape.block
        if block.startswith("$"):
            name = block[1:]
            opts = tuple((index(st, flipped, k) | pin(raw, flipped, k), w)
                         for (st, w), (raw, _) in zip(palette_opts[name], raw_palette[name], strict=True))
            salt = _salt(name)
        else:
            opts = ((index(canon[block], flipped, k) | pin(block, flipped, k), 1),)
            salt = 0
        if isinstance(shape, FoundationOp):  # it stands under the placements just expanded
            n_children = expanded_count(shape.operations)
            floor = max(WORLD_MIN_Y, area.min.y) if area is not None else WORLD_MIN_Y
            placements.append(Placement(shape, frame, copies, opts, salt,
                                        children=tuple(placements[-n_children:]), floor=floor))
            continue
        placements.append(Placement(shape, frame, copies, opts, salt))
    for p in placements:
        _check_bounds(p, area)

    counts = [p.count() for p in placements]
    examined = sum(counts)
    if examined > limits.max_examined_positions:
        worst = max(range(len(placements)), key=counts.__getitem__)
        raise _budget(
            f"the recipe covers {examined} positions (before overlaps are merged); the limit is "
            f"{limits.max_examined_positions} — the largest shape is {placements[worst].where()} "
            f"with {counts[worst]}",
            "max_examined_positions", examined, limits.max_examined_positions,
            largest={"path": placements[worst].shape.path, "positions": counts[worst]},
        )

    seed = recipe.seed or 0
    keys_parts: list[np.ndarray] = []
    state_parts: list[np.ndarray] = []
    inputs = hashlib.sha256()
    for key in sorted(pasted):
        inputs.update(f"{key[0]}:{key[1]}={pasted[key].digest}\n".encode())
    reads: dict[Box, tuple[np.ndarray, np.ndarray]] = {}
    unmatched: list[str] = []

    def collapse() -> tuple[np.ndarray, np.ndarray]:
        """The write set so far as sorted distinct keys (later operations win)."""
        if not keys_parts:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint32)
        all_keys = np.concatenate(keys_parts)
        all_states = np.concatenate(state_parts)
        keys_, first = np.unique(all_keys[::-1], return_index=True)
        states_ = all_states[::-1][first]
        keys_parts[:] = [keys_]
        state_parts[:] = [states_]
        return keys_, states_

    def read(p: Placement, box: Box) -> tuple[np.ndarray, np.ndarray]:
        got = reads.get(box)
        if got is not None:
            return got
        if world is None:
            raise McbError(ErrorCode.UNAVAILABLE,
                           f"{p.where()}: {_KIND[type(p.shape)]} reads the world's current states, and this planner "
                           "has no world reader configured", details={"path": p.shape.path})
        try:
            wpal, widx = world(box)
        except McbError as e:
            if e.code != ErrorCode.NOT_FOUND:
                raise
            raise McbError(ErrorCode.NOT_FOUND,
                           f"{p.where()}: cannot read the {_KIND[type(p.shape)]} region {_box_text(box)}: {e.message}",
                           details={**e.details, "path": p.shape.path, "region": box.as_dict()}) from None
        widx = np.asarray(widx, dtype=np.int64)
        if len(widx) != box.volume or (len(widx) and int(widx.max()) >= len(wpal)):
            raise McbError(ErrorCode.INTERNAL, f"the world host answered {len(widx)} positions for "
                                               f"{_box_text(box)} ({box.volume} expected)")
        wmap = np.empty(len(wpal), dtype=np.int64)
        for i, st in enumerate(wpal):
            try:
                c = registry.canonical(st)
            except McbError:
                c = st  # a state this registry does not know: never matches a filter
            wmap[i] = table.setdefault(c, len(table))
        inputs.update(f"region {_box_text(box)}\n".encode())
        inputs.update(canonical_json(list(wpal)))
        inputs.update(widx.astype("<u2").tobytes())
        got = reads[box] = (wmap, widx)
        return got

    def replace(p: Placement) -> tuple[np.ndarray, np.ndarray]:
        shape = p.shape
        assert isinstance(shape, ReplaceOp)
        box = p.bounds()
        wmap, widx = read(p, box)
        keys_ = pack(shapes.box_cells(box.min, box.max, False))  # YZX, like region_read
        cur = wmap[widx]
        mk, ms = collapse()
        if len(mk):  # positions earlier operations wrote are tested with those states
            pos = np.minimum(np.searchsorted(mk, keys_), len(mk) - 1)
            hit = mk[pos] == keys_
            cur = np.where(hit, (ms[pos] & connect.INDEX_MASK).astype(np.int64), cur)
        flipped, kq = p.frame.orientation()
        inv = (flipped, kq if flipped else (4 - kq) % 4)  # world → the recipe's local frame
        names = list(table)
        if shape.to.startswith("$"):
            choices = palette_opts[shape.to[1:]]
            raws = [t for t, _ in raw_palette[shape.to[1:]]]
        else:
            choices = ((canon[shape.to], 1),)
            raws = [shape.to]
        uniq, which = np.unique(cur, return_inverse=True)
        fixed = np.full(len(uniq), -1, dtype=np.int64)
        weighted: list[tuple[int, tuple[tuple[int, int], ...]]] = []
        for j, u in enumerate(uniq.tolist()):
            st = names[u]
            try:
                local = st if inv == (False, 0) else transform_state(
                    st, registry, mirror_axis="x" if inv[0] else None, quarter_turns=inv[1])
                if not sources.matches(filters[shape.path], local):
                    continue
            except McbError:
                continue  # not a state of this registry
            opts = tuple(
                (index(sources.keep_properties(local, c, registry) if keep else c, flipped, kq)
                 | (_KEPT if keep else pin(raw, flipped, kq)), w)
                for (c, w), keep, raw in zip(choices, shape.keep, raws, strict=True))
            if len(opts) == 1:
                fixed[j] = opts[0][0]
            else:
                weighted.append((j, opts))
        per = fixed[which]
        sel = per >= 0
        out_k = [keys_[sel]]
        out_s = [per[sel].astype(np.uint32)]
        for j, opts in weighted:
            m = which == j
            out_k.append(keys_[m])
            out_s.append(choose(keys_[m], opts, p.salt, seed))
        k_ = np.concatenate(out_k)
        if len(k_) == 0:
            unmatched.append(p.where())
        return k_, np.concatenate(out_s)

    def current(p: Placement, box: Box) -> np.ndarray:
        """Table index per position of ``box`` (YZX): the world as the earlier operations leave it."""
        wmap, widx = read(p, box)
        cur = wmap[widx]
        mk, ms = collapse()
        if len(mk):
            keys_ = pack(shapes.box_cells(box.min, box.max, False))
            pos = np.minimum(np.searchsorted(mk, keys_), len(mk) - 1)
            hit = mk[pos] == keys_
            cur = np.where(hit, (ms[pos] & connect.INDEX_MASK).astype(np.int64), cur)
        return cur

    def is_air() -> np.ndarray:
        return np.array([n.split("[", 1)[0] in AIR_NAMES for n in table], dtype=bool)

    def overlay(p: Placement) -> np.ndarray:
        s = p.shape
        assert isinstance(s, OverlayOp)
        box = Box.of(p.frame.point(s.min), p.frame.point(s.max))
        cur = current(p, box)  # may add the world's states to the table: read before is_air()
        solid = ~is_air()[cur].reshape(box.size.y, box.size.z, box.size.x)
        has = solid.any(axis=0)
        top = box.size.y - 1 - np.argmax(solid[::-1], axis=0)  # highest non-air per column
        iz, ix = np.nonzero(has)
        cells = [np.stack([ix + box.min.x, top[iz, ix] + box.min.y + d, iz + box.min.z], axis=1)
                 for d in range(1, s.depth + 1)]
        return pack(np.concatenate(cells).astype(np.int64))

    def foundation(p: Placement) -> np.ndarray:
        s = p.shape
        assert isinstance(s, FoundationOp)
        cells = np.concatenate([c.cells() for c in p.children])
        col = (cells[:, 2] + _XZ_OFF) << 26 | (cells[:, 0] + _XZ_OFF)
        order = np.lexsort((cells[:, 1], col))
        col, ys = col[order], cells[order, 1]
        starts = np.nonzero(np.concatenate(([True], col[1:] != col[:-1])))[0]
        col, bottom = col[starts], ys[starts]  # lowest cell per column
        xs = (col & _MASK26) - _XZ_OFF
        zs = (col >> 26) - _XZ_OFF
        box = p.foundation_box()
        if box.min.y >= int(bottom.min()):
            return np.empty(0, dtype=np.int64)
        cur = current(p, box)  # may add the world's states to the table: read before is_air()
        solid = ~is_air()[cur].reshape(box.size.y, box.size.z, box.size.x)
        column = solid[:, zs - box.min.z, xs - box.min.x]  # (y, column)
        yy = np.arange(box.min.y, box.max.y + 1, dtype=np.int64)[:, None]
        lowest = np.maximum(bottom - s.max_depth, p.floor)  # per column: the deepest it may fill
        window = (yy < bottom[None, :]) & (yy >= lowest[None, :])
        cand = column & window
        found = cand.any(axis=0)
        lost = (bottom > p.floor) & ~found  # a column standing on the floor needs nothing
        if lost.any():
            j = int(np.nonzero(lost)[0][0])
            x, z, b = int(xs[j]), int(zs[j]), int(bottom[j])
            raise _budget(f"{p.where()}: no ground under x {x} z {z} within {b - int(lowest[j])} blocks "
                          f"below y {b} (max_depth {s.max_depth}, lowest y {int(lowest[j])}) — raise "
                          "max_depth or build lower", "foundation_depth", b - int(lowest[j]),
                          s.max_depth, path=s.path, x=x, z=z, columns=int(lost.sum()))
        ground = box.min.y + (len(yy) - 1 - np.argmax(cand[::-1], axis=0))
        fill = (yy > ground[None, :]) & window & ~column
        iy, jc = np.nonzero(fill)
        return pack(np.stack([xs[jc], iy + box.min.y, zs[jc]], axis=1).astype(np.int64))

    added_parts: list[np.ndarray] = []
    explicit_parts: list[np.ndarray] = []
    explicit_states: list[np.ndarray] = []
    for p in placements:
        if isinstance(p.shape, ReplaceOp):
            k_, s_ = replace(p)
        elif p.pasted is not None:
            k_ = pack(p.cells())
            s_ = p.pasted[1]
        else:
            if isinstance(p.shape, OverlayOp):
                k_ = overlay(p)
            elif isinstance(p.shape, FoundationOp):
                k_ = foundation(p)
            else:
                k_ = pack(p.cells())
            s_ = choose(k_, p.options, p.salt, seed)
        explicit_parts.append(k_)
        explicit_states.append(s_)
        # doors, beds, tall plants: the other half joins the placement (connect.py)
        cand = ({o & connect.INDEX_MASK for o, _ in p.options} if p.options and not isinstance(p.shape, ReplaceOp)
                else set(np.unique(s_ & connect.INDEX_MASK).tolist()))
        now = list(table)
        if any(connect.info(now[i], registry.version).cat in connect.TWO_PART for i in cand):
            k_, s_, add = connect.add_partners(k_, s_, now, lambda t: table.setdefault(t, len(table)),
                                               registry.version)
            if len(add):
                added_parts.append(add)
        keys_parts.append(k_)
        state_parts.append(s_)
        elapsed = int((time.monotonic() - started) * 1000)
        if elapsed > limits.max_millis:
            raise _budget(
                f"compiling took over {elapsed} ms (at {p.where()}); the limit is "
                f"{limits.max_millis} ms — use fewer or smaller shapes",
                "max_millis", elapsed, limits.max_millis,
            )
    if len(keys_parts) == 1:
        order = np.argsort(keys_parts[0], kind="stable")  # one shape's cells are distinct
        keys = keys_parts[0][order]
        states = state_parts[0][order]
    else:
        all_keys = np.concatenate(keys_parts)
        all_states = np.concatenate(state_parts)
        # Later operations win: keep each key's *last* occurrence, i.e. the first one of the
        # reversed arrays (np.unique's return_index is stable and picks first occurrences).
        keys, first = np.unique(all_keys[::-1], return_index=True)
        states = all_states[::-1][first]

    changed = len(keys)
    if changed == 0:
        raise McbError(ErrorCode.INVALID_REQUEST,
                       "the recipe places no blocks" + (
                           f": {', '.join(unmatched[:4])} matched no position" if unmatched else ""),
                       details={"unmatched": unmatched[:8]})
    if changed > limits.max_changed_blocks:
        raise _budget(
            f"the recipe sets {changed} blocks; the limit is {limits.max_changed_blocks} per plan "
            f"— split the build into smaller plans",
            "max_changed_blocks", changed, limits.max_changed_blocks,
        )

    # two halves the recipe writes itself must be one block (connect.check_halves), and such a
    # half is kept as written: a half another operation added there (its partner) does not replace it
    ek = np.concatenate(explicit_parts)
    ek, efirst = np.unique(ek[::-1], return_index=True)  # later operations win, as above
    es = np.concatenate(explicit_states)[::-1][efirst]
    connect.check_halves(ek, es, list(table), registry.version)
    two = connect.two_part_mask(es, list(table), registry.version)
    if two.any():
        at = np.searchsorted(keys, ek[two])  # every explicit key is in the merged keys
        states[at] = es[two]
    # connection states and two-part checks over the final neighbourhood (connect.py)
    done = connect.finish(keys, states, table, registry, world,
                          np.concatenate(added_parts) if added_parts else np.empty(0, dtype=np.int64),
                          explicit_parts, area, (WORLD_MIN_Y, WORLD_MAX_Y), limits.max_examined_positions)
    states = done.states
    warnings.extend(done.warnings)
    if done.read is not None:
        rbox, rpal, ridx = done.read
        inputs.update(f"neighbourhood {_box_text(rbox)}\n".encode())
        inputs.update(canonical_json(list(rpal)))
        inputs.update(np.asarray(ridx).astype("<u2").tobytes())

    # Materials (count desc, then name) double as the palette order.
    names = list(table)
    counts_by_state = np.bincount(states, minlength=len(names))
    present = sorted((i for i in range(len(names)) if counts_by_state[i]),
                     key=lambda i: (-int(counts_by_state[i]), names[i]))
    remap = np.zeros(len(names), dtype=np.uint32)
    remap[present] = np.arange(len(present), dtype=np.uint32)
    palette = tuple(names[i] for i in present)
    materials = tuple((names[i], int(counts_by_state[i])) for i in present)

    xyz = unpack(keys)
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    bounds = Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))

    if unmatched:
        warnings.append(f"{len(unmatched)} replace operation(s) matched no position: "
                        f"{', '.join(unmatched[:4])}{', …' if len(unmatched) > 4 else ''}")
    unused = sorted(set(palette_opts) - used_palette)
    if unused:
        warnings.append(f"palette entries never used: {', '.join('$' + n for n in unused)}")
    info = BlockInfo.load(registry.version)
    redstone = sorted({s.split("[", 1)[0].removeprefix("minecraft:") for s, _ in materials
                       if info.category(s) == REDSTONE})
    if redstone:
        n_red = sum(c for s, c in materials if info.category(s) == REDSTONE)
        warnings.append(f"{n_red} redstone component(s) ({', '.join(redstone[:6])}"
                        f"{', …' if len(redstone) > 6 else ''}) may change state after placement "
                        "as they react to their neighbours")
    weighted = any(len(palette_opts[n]) > 1 for n in used_palette)
    if recipe.seed is not None and not weighted:
        warnings.append("seed has no effect: no weighted palette entry is used")

    normalised = recipe.normalised(block=canon.__getitem__)
    return CompileResult(
        xyz=xyz,
        states=remap[states],
        palette=palette,
        materials=materials,
        bounds=bounds,
        examined=examined,
        recipe_hash=recipe_hash(normalised, registry.sha256,
                                inputs=inputs.hexdigest() if (pasted or reads or done.read) else ""),
        minecraft_version=registry.version,
        warnings=tuple(warnings),
    )
