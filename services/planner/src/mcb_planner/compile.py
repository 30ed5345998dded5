"""Compile a recipe into its write set: position → desired canonical block state.

Pipeline (each step refuses before the next one spends anything)::

    parse (invalid_request; repeat depth → budget_exceeded)
    → count shapes after repeat expansion, exactly, without expanding (budget_exceeded)
    → block states against the registry (unsupported_block with suggestions, naming the path)
    → expand repeats into placements; every placement's bounding box against the world's
      heights, the world border and the request's area (out_of_bounds, first offender)
    → examined positions = Σ cells of every placement, in closed form (budget_exceeded)
    → rasterise into packed int64 keys, resolve overlaps (later operations win)
    → changed positions = distinct cells (budget_exceeded)
    → materials, bounds, recipe hash

Packed key (invariant: positions are inside the world, which the bounds check guarantees):
``(y + 64) << 52 | (z + 2^25) << 26 | (x + 2^25)``. Ordering keys orders positions by
(y, z, x), the deterministic output order.

"Changed" here means "in the write set": the planner cannot see the world, so blocks that
already hold the desired state are only discovered by the journal when it reads the world.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import WORLD_XZ_LIMIT, Box, Vec3
from mcb_common.registry import DEFAULT_VERSION, Registry

from . import PLANNER_VERSION, shapes
from .recipe import (
    BoxOp,
    LineOp,
    Operation,
    Recipe,
    RepeatOp,
    Shape,
    expanded_count,
    parse_recipe,
)

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

    # What a caller may raise them to: beyond this the planner's memory is not bounded sanely.
    CEILINGS = {
        "max_changed_blocks": 2_000_000,
        "max_examined_positions": 20_000_000,
        "max_operations": 65_536,
        "max_depth": 16,
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
class Placement:
    """One shape of the recipe after repeat expansion: the shape shifted by ``offset``."""

    shape: Shape
    offset: Vec3
    copies: tuple[int, ...]  # the copy index in each enclosing repeat, outermost first
    state: int  # index into the compilation's state table

    def bounds(self) -> Box:
        s, o = self.shape, self.offset
        if isinstance(s, BoxOp):
            box = Box(s.min, s.max)
        elif isinstance(s, LineOp):
            box = Box.of(s.start, s.end)
        else:
            c, r = s.center, s.radius
            box = Box(Vec3(c.x - r, c.y, c.z - r), Vec3(c.x + r, c.y + s.height - 1, c.z + r))
        return Box(box.min + o, box.max + o)

    def count(self) -> int:
        s = self.shape
        if isinstance(s, BoxOp):
            return shapes.box_count(s.min, s.max, s.hollow)
        if isinstance(s, LineOp):
            return shapes.line_count(s.start, s.end)
        return shapes.cylinder_count(s.radius, s.height, s.hollow)

    def cells(self) -> np.ndarray:
        s = self.shape
        if isinstance(s, BoxOp):
            cells = shapes.box_cells(s.min, s.max, s.hollow)
        elif isinstance(s, LineOp):
            cells = shapes.line_cells(s.start, s.end)
        else:
            cells = shapes.cylinder_cells(s.center, s.radius, s.height, s.hollow)
        if self.offset != Vec3(0, 0, 0):
            cells = cells + np.array([self.offset.x, self.offset.y, self.offset.z], dtype=np.int64)
        return cells

    def where(self) -> str:
        if not self.copies:
            return self.shape.path
        copies = ", ".join(str(i) for i in self.copies)
        o = self.offset
        return f"{self.shape.path} (repeat copy {copies}, shifted by x={o.x} y={o.y} z={o.z})"


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
        if isinstance(op, RepeatOp):
            yield from _walk_shapes(op.operations)
        else:
            yield op


def _expand(
    ops: tuple[Operation, ...], offset: Vec3, copies: tuple[int, ...], state_of: dict[str, int]
) -> Iterator[Placement]:
    for op in ops:
        if isinstance(op, RepeatOp):
            for i in range(op.count):
                yield from _expand(op.operations, offset + op.offset.scaled(i), (*copies, i), state_of)
        else:
            yield Placement(op, offset, copies, state_of[op.path])


def _canonical(registry: Registry, text: str, path: str) -> str:
    try:
        return registry.canonical(text)
    except McbError as e:
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


def recipe_hash(normalised: dict[str, Any], registry_sha256: str, planner_version: str = PLANNER_VERSION) -> str:
    h = hashlib.sha256()
    h.update(b"mcb-recipe\n")
    h.update(canonical_json(normalised))
    h.update(b"\nregistry:" + registry_sha256.encode())
    h.update(b"\nplanner:" + planner_version.encode())
    return h.hexdigest()


# -- the compiler ----------------------------------------------------------------------------


def compile_recipe(
    data: Any,
    *,
    minecraft_version: str = DEFAULT_VERSION,
    limits: Limits | None = None,
    area: Box | None = None,
) -> CompileResult:
    """Compile a recipe (JSON text, decoded JSON or a parsed ``Recipe``) into its write set."""
    limits = limits or Limits()
    recipe = data if isinstance(data, Recipe) else parse_recipe(data, max_depth=limits.max_depth)

    n_ops = expanded_count(recipe.operations)
    if n_ops > limits.max_operations:
        raise _budget(
            f"the recipe expands to {n_ops} shapes after repeats; the limit is "
            f"{limits.max_operations} — use fewer or larger shapes",
            "max_operations", n_ops, limits.max_operations,
        )

    registry = Registry.load(minecraft_version or DEFAULT_VERSION)
    canon: dict[str, str] = {}  # block text as written → canonical state
    table: dict[str, int] = {}  # canonical state → index
    state_of: dict[str, int] = {}  # shape path → index
    for shape in _walk_shapes(recipe.operations):
        if shape.block not in canon:
            canon[shape.block] = _canonical(registry, shape.block, f"{shape.path}.block")
        state_of[shape.path] = table.setdefault(canon[shape.block], len(table))
    for name, text in recipe.palette:
        if text not in canon:
            canon[text] = _canonical(registry, text, f"palette.{name}")

    placements = list(_expand(recipe.operations, Vec3(0, 0, 0), (), state_of))
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

    keys_parts = [pack(p.cells()) for p in placements]
    if len(keys_parts) == 1:
        keys = np.sort(keys_parts[0])  # one shape's cells are distinct by construction
        states = np.full(len(keys), placements[0].state, dtype=np.uint32)
    else:
        all_keys = np.concatenate(keys_parts)
        all_states = np.repeat(
            np.array([p.state for p in placements], dtype=np.uint32), [len(k) for k in keys_parts]
        )
        # Later operations win: keep each key's *last* occurrence, i.e. the first one of the
        # reversed arrays (np.unique's return_index is stable and picks first occurrences).
        keys, first = np.unique(all_keys[::-1], return_index=True)
        states = all_states[::-1][first]

    changed = len(keys)
    if changed > limits.max_changed_blocks:
        raise _budget(
            f"the recipe sets {changed} blocks; the limit is {limits.max_changed_blocks} per plan "
            f"— split the build into smaller plans",
            "max_changed_blocks", changed, limits.max_changed_blocks,
        )

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

    warnings = []
    if recipe.params:
        warnings.append("params are accepted but recipe v1 operations cannot reference them yet")
    if recipe.palette:
        warnings.append("palette is checked but recipe v1 operations cannot reference it yet")
    if recipe.seed is not None:
        warnings.append("seed has no effect in recipe v1 (nothing is random yet)")

    normalised = recipe.normalised(block=canon.__getitem__)
    return CompileResult(
        xyz=xyz,
        states=remap[states],
        palette=palette,
        materials=materials,
        bounds=bounds,
        examined=examined,
        recipe_hash=recipe_hash(normalised, registry.sha256),
        minecraft_version=registry.version,
        warnings=tuple(warnings),
    )
