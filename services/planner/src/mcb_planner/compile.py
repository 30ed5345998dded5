"""Compile a recipe into its write set: position → desired canonical block state.

Pipeline (each step refuses before the next one spends anything)::

    parse: the tree (invalid_request; repeat depth → budget_exceeded), then the shapes after
      repeat expansion, counted exactly without expanding (budget_exceeded)
    → check_blocks: palette entries (weighted choices: palette.<name>[i].block), then every
      shape's block states against the registry (unsupported_block with suggestions, naming the path)
    → place: expand repeats and transforms into placements: each shape with a Frame (one of the 8
      quarter-turn/mirror matrices on x/z plus a translation) and its state options turned
      by the frame's orientation (mcb_common.transforms); every placement's bounding box
      against the world's heights, the world border and the request's area (out_of_bounds)
    → examine: examined positions = Σ cells of every placement, in closed form (budget_exceeded)
    → rasterise: each placement's ``write`` into packed int64 keys, weighted palette choices
      per position (a hash of seed, palette name and position); the time budget is checked after every shape (budget_exceeded, limit max_millis)
    → merge: overlaps resolved (later operations win); changed positions = distinct cells
      (budget_exceeded); two-part halves written by the recipe kept as written
    → connect_blocks: connection states over the final neighbourhood (connect.py)
    → result: materials, bounds, warnings, recipe hash

Revision 3: ``paste`` sources (assets through the schematic import checks, parts from the
request) are loaded while placements are built, so their sizes count before any cell exists;
``replace`` reads its (transformed) box through the ``world`` port when its turn comes and
tests each position's state *as the earlier operations leave it* (the write set so far is
collapsed and looked up), the world's state elsewhere — so a recipe reads top to bottom. The
recipe hash then also covers a digest of what was read (sources.py).

Each step is a function below (``compile_recipe`` calls them in order). Each shape is one class
in ops/ that knows its grammar, bounds, count and cells; placement.py places it (frame,
options), build.py holds the write set under construction and the packed keys
``(y + 64) << 52 | (z + 2^25) << 26 | (x + 2^25)`` (ordering keys orders positions by (y, z, x),
the deterministic output order).

"Changed" here means "in the write set": apart from ``replace`` regions the planner does not
see the world, so blocks that already hold the desired state are only discovered by the journal
when it reads the world.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mcb_common.blockinfo import REDSTONE, BlockInfo
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import WORLD_XZ_LIMIT, Box, Vec3
from mcb_common.registry import DEFAULT_VERSION, Registry

from . import PLANNER_VERSION, connect, sources
from .build import (
    WORLD_MAX_Y,
    WORLD_MIN_Y,
    Blocks,
    Build,
    box_text,
    budget,
    canonical_json,
    choose,
    pack,
    unpack,
)
from .ops import Placer
from .placement import IDENTITY, Frame, Placement
from .recipe import Recipe, expanded_count, parse_recipe
from .sources import PartBlocks, RegionReader

__all__ = [
    "IDENTITY",
    "WORLD_MAX_Y",
    "WORLD_MIN_Y",
    "CompileResult",
    "Frame",
    "Limits",
    "Placement",
    "canonical_json",
    "choose",
    "compile_recipe",
    "pack",
    "recipe_hash",
    "unpack",
]


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
        return {(x, y, z): pal[s] for (x, y, z), s in zip(self.xyz.tolist(), self.states.tolist(), strict=True)}


# -- helpers ---------------------------------------------------------------------------------


def _check_bounds(p: Placement, area: Box | None) -> None:
    b = p.bounds()
    problem = None
    if b.min.y < WORLD_MIN_Y or b.max.y > WORLD_MAX_Y:
        problem = f"spans y {b.min.y}..{b.max.y}, outside the world's heights {WORLD_MIN_Y}..{WORLD_MAX_Y}"
    elif min(b.min.x, b.min.z) < -WORLD_XZ_LIMIT or max(b.max.x, b.max.z) > WORLD_XZ_LIMIT:
        problem = f"spans {box_text(b)}, beyond the world border ±{WORLD_XZ_LIMIT}"
    elif area is not None and not area.contains_box(b):
        problem = f"spans {box_text(b)}, outside the build area {box_text(area)}"
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


def recipe_hash(
    normalised: dict[str, Any], registry_sha256: str, planner_version: str = PLANNER_VERSION, inputs: str = ""
) -> str:
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


# -- the compiler: one function per step ---------------------------------------------------------


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
    recipe = parse(data, limits)
    started = time.monotonic()
    registry = Registry.load(minecraft_version or DEFAULT_VERSION)
    blocks = check_blocks(recipe, registry)
    pasted = sources.Sources(registry, limits.max_changed_blocks, assets, parts)
    placements = place(recipe, blocks, pasted, area)
    examined = examine(placements, limits)
    build = Build(blocks, world, recipe.seed or 0, pasted.loaded)
    rasterise(build, placements, limits, started)
    keys, states = merge(build, limits)
    keys, states, warnings = connect_blocks(build, keys, states, world, area, limits)
    return result(recipe, build, keys, states, examined, [*pasted.warnings, *warnings], bool(pasted.loaded))


def parse(data: Any, limits: Limits) -> Recipe:
    """The recipe's tree (invalid_request; nesting → budget_exceeded), within the shape budget."""
    recipe = data if isinstance(data, Recipe) else parse_recipe(data, max_depth=limits.max_depth)
    n_ops = expanded_count(recipe.operations)
    if n_ops > limits.max_operations:
        raise budget(
            f"the recipe expands to {n_ops} shapes after repeats; the limit is "
            f"{limits.max_operations} — use fewer or larger shapes",
            "max_operations",
            n_ops,
            limits.max_operations,
        )
    return recipe


def check_blocks(recipe: Recipe, registry: Registry) -> Blocks:
    """Every block text, palette choice and replace filter against the registry (unsupported_block)."""
    blocks = Blocks(registry, recipe.palette)
    for op in recipe.operations:
        for shape in op.shapes():
            shape.check_blocks(blocks)
    return blocks


def place(recipe: Recipe, blocks: Blocks, pasted: sources.Sources, area: Box | None) -> list[Placement]:
    """Repeats and transforms expanded into placements (paste sources loaded), each inside the
    world's heights, the world border and the area (out_of_bounds)."""
    placer = Placer(blocks, pasted, max(WORLD_MIN_Y, area.min.y) if area is not None else WORLD_MIN_Y)
    for op in recipe.operations:
        for shape, frame, copies in op.expand(IDENTITY, ()):
            placer.placements.append(shape.place(frame, copies, placer))
    for p in placer.placements:
        _check_bounds(p, area)
    return placer.placements


def examine(placements: list[Placement], limits: Limits) -> int:
    """Σ positions every placement examines, in closed form (budget_exceeded)."""
    counts = [p.count() for p in placements]
    examined = sum(counts)
    if examined > limits.max_examined_positions:
        worst = max(range(len(placements)), key=counts.__getitem__)
        raise budget(
            f"the recipe covers {examined} positions (before overlaps are merged); the limit is "
            f"{limits.max_examined_positions} — the largest shape is {placements[worst].where()} "
            f"with {counts[worst]}",
            "max_examined_positions",
            examined,
            limits.max_examined_positions,
            largest={"path": placements[worst].shape.path, "positions": counts[worst]},
        )
    return examined


def rasterise(build: Build, placements: list[Placement], limits: Limits, started: float) -> None:
    """Each placement's keys and states in order; the time budget after every shape."""
    for p in placements:
        build.add(p)
        elapsed = int((time.monotonic() - started) * 1000)
        if elapsed > limits.max_millis:
            raise budget(
                f"compiling took over {elapsed} ms (at {p.where()}); the limit is "
                f"{limits.max_millis} ms — use fewer or smaller shapes",
                "max_millis",
                elapsed,
                limits.max_millis,
            )


def merge(build: Build, limits: Limits) -> tuple[np.ndarray, np.ndarray]:
    """One state per position (later operations win), within the changed-blocks budget; a half
    of a two-part block the recipe writes itself is kept as written."""
    keys, states = build.merged()
    changed = len(keys)
    if changed == 0:
        unmatched = build.unmatched
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            "the recipe places no blocks" + (f": {', '.join(unmatched[:4])} matched no position" if unmatched else ""),
            details={"unmatched": unmatched[:8]},
        )
    if changed > limits.max_changed_blocks:
        raise budget(
            f"the recipe sets {changed} blocks; the limit is {limits.max_changed_blocks} per plan "
            f"— split the build into smaller plans",
            "max_changed_blocks",
            changed,
            limits.max_changed_blocks,
        )
    # two halves the recipe writes itself must be one block (connect.check_halves), and such a
    # half is kept as written: a half another operation added there (its partner) does not replace it
    table = list(build.blocks.table)
    version = build.blocks.registry.version
    ek = np.concatenate(build.explicit_parts)
    ek, efirst = np.unique(ek[::-1], return_index=True)  # later operations win, as above
    es = np.concatenate(build.explicit_states)[::-1][efirst]
    connect.check_halves(ek, es, table, version)
    two = connect.two_part_mask(es, table, version)
    if two.any():
        at = np.searchsorted(keys, ek[two])  # every explicit key is in the merged keys
        states[at] = es[two]
    return keys, states


def connect_blocks(
    build: Build, keys: np.ndarray, states: np.ndarray, world: RegionReader | None, area: Box | None, limits: Limits
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Connection states and two-part checks over the final neighbourhood (connect.py)."""
    done = connect.finish(
        keys,
        states,
        build.blocks.table,
        build.blocks.registry,
        world,
        np.concatenate(build.added_parts) if build.added_parts else np.empty(0, dtype=np.int64),
        build.explicit_parts,
        area,
        (WORLD_MIN_Y, WORLD_MAX_Y),
        limits.max_examined_positions,
    )
    if done.read is not None:
        rbox, rpal, ridx = done.read
        build.inputs.update(f"neighbourhood {box_text(rbox)}\n".encode())
        build.inputs.update(canonical_json(list(rpal)))
        build.inputs.update(np.asarray(ridx).astype("<u2").tobytes())
        build.read_neighbours = True
    return keys, done.states, list(done.warnings)


def result(
    recipe: Recipe, build: Build, keys: np.ndarray, states: np.ndarray, examined: int, warnings: list[str], pasted: bool
) -> CompileResult:
    """Materials (count desc, then name; they double as the palette order), bounds, the
    remaining warnings and the recipe hash."""
    blocks = build.blocks
    names = list(blocks.table)
    counts_by_state = np.bincount(states, minlength=len(names))
    present = sorted(
        (i for i in range(len(names)) if counts_by_state[i]), key=lambda i: (-int(counts_by_state[i]), names[i])
    )
    remap = np.zeros(len(names), dtype=np.uint32)
    remap[present] = np.arange(len(present), dtype=np.uint32)
    palette = tuple(names[i] for i in present)
    materials = tuple((names[i], int(counts_by_state[i])) for i in present)

    xyz = unpack(keys)
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    bounds = Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))

    unmatched = build.unmatched
    if unmatched:
        warnings.append(
            f"{len(unmatched)} replace operation(s) matched no position: "
            f"{', '.join(unmatched[:4])}{', …' if len(unmatched) > 4 else ''}"
        )
    unused = sorted(set(blocks.palette_opts) - blocks.used_palette)
    if unused:
        warnings.append(f"palette entries never used: {', '.join('$' + n for n in unused)}")
    info = BlockInfo.load(blocks.registry.version)
    redstone = sorted(
        {s.split("[", 1)[0].removeprefix("minecraft:") for s, _ in materials if info.category(s) == REDSTONE}
    )
    if redstone:
        n_red = sum(c for s, c in materials if info.category(s) == REDSTONE)
        warnings.append(
            f"{n_red} redstone component(s) ({', '.join(redstone[:6])}"
            f"{', …' if len(redstone) > 6 else ''}) may change state after placement "
            "as they react to their neighbours"
        )
    weighted = any(len(blocks.palette_opts[n]) > 1 for n in blocks.used_palette)
    if recipe.seed is not None and not weighted:
        warnings.append("seed has no effect: no weighted palette entry is used")

    normalised = recipe.normalised(block=blocks.canon.__getitem__)
    read_anything = pasted or bool(build.reads) or build.read_neighbours
    return CompileResult(
        xyz=xyz,
        states=remap[states],
        palette=palette,
        materials=materials,
        bounds=bounds,
        examined=examined,
        recipe_hash=recipe_hash(
            normalised, blocks.registry.sha256, inputs=build.inputs.hexdigest() if read_anything else ""
        ),
        minecraft_version=blocks.registry.version,
        warnings=tuple(warnings),
    )
