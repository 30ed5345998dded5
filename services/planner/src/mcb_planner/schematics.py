"""Schematic import and export for the planner (core, no transport).

``import_schematic``: file bytes → the same ``CompileResult`` a recipe gives (sorted write
set, materials, bounds, a hash), after every refusal of ``mcb_common.schematic.check_import``
and the same bounds checks as a recipe (world heights, border, project area).
``export_schematic``: a dense region (palette + YZX indices) → gzip Sponge v3 (or v2) bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from mcb_common import schematic as S
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import WORLD_XZ_LIMIT, Box, Vec3
from mcb_common.registry import DEFAULT_VERSION, Registry

from . import PLANNER_VERSION
from .compile import WORLD_MAX_Y, WORLD_MIN_Y, CompileResult, Limits, pack, unpack


@dataclass(frozen=True)
class ImportResult:
    compiled: CompileResult
    left_out: tuple[tuple[int, int, int, str], ...]  # world x, y, z, block entity id
    data_version: int
    format: str


def _box_text(b: Box) -> str:
    return f"x {b.min.x}..{b.max.x}, y {b.min.y}..{b.max.y}, z {b.min.z}..{b.max.z}"


def import_schematic(
    data: bytes,
    *,
    kind: str = "schem",
    target: Vec3,
    rotation: int = 0,
    minecraft_version: str = DEFAULT_VERSION,
    world_data_version: int = 0,
    limits: Limits | None = None,
    area: Box | None = None,
    allow_drop_block_entities: bool = False,
) -> ImportResult:
    limits = limits or Limits()
    if kind not in ("schem", "nbt"):
        raise McbError(ErrorCode.INVALID_REQUEST, f"kind must be 'schem' or 'nbt', got {kind!r}")
    if rotation not in (0, 90, 180, 270):
        raise McbError(ErrorCode.INVALID_REQUEST, f"rotation must be 0, 90, 180 or 270 (clockwise), got {rotation}")
    registry = Registry.load(minecraft_version or DEFAULT_VERSION)
    s = S.read_bytes(data, kind)
    chk = S.check_import(
        s,
        registry,
        world_data_version=world_data_version or registry.data_version,
        max_positions=limits.max_changed_blocks,
        allow_drop_block_entities=allow_drop_block_entities,
    )
    palette, xyz_flat, states_l, warnings = S.placements(s, chk, (target.x, target.y, target.z), rotation, registry)
    if not states_l:
        raise McbError(ErrorCode.INVALID_REQUEST, "the schematic places no blocks")
    xyz = np.asarray(xyz_flat, dtype=np.int64).reshape(-1, 3)
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    bounds = Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))
    problem = None
    if bounds.min.y < WORLD_MIN_Y or bounds.max.y > WORLD_MAX_Y:
        problem = f"outside the world's heights {WORLD_MIN_Y}..{WORLD_MAX_Y}"
    elif min(bounds.min.x, bounds.min.z) < -WORLD_XZ_LIMIT or max(bounds.max.x, bounds.max.z) > WORLD_XZ_LIMIT:
        problem = f"beyond the world border ±{WORLD_XZ_LIMIT}"
    elif area is not None and not area.contains_box(bounds):
        problem = f"outside the build area {_box_text(area)}"
    if problem:
        raise McbError(
            ErrorCode.OUT_OF_BOUNDS,
            f"the placed schematic spans {_box_text(bounds)}, {problem}",
            details={"bounds": bounds.as_dict(), "area": area.as_dict() if area else None},
        )
    # Sort by (y, z, x) like a recipe's write set; materials order the palette.
    keys = pack(xyz)
    order = np.argsort(keys, kind="stable")
    states = np.asarray(states_l, dtype=np.uint32)[order]
    counts = np.bincount(states, minlength=len(palette))
    # Rotation can map two source states to one (never in practice, but stay exact): merge.
    merged: dict[str, int] = {}
    for i, st in enumerate(palette):
        merged[st] = merged.get(st, 0) + int(counts[i])
    present = sorted((st for st, c in merged.items() if c), key=lambda st: (-merged[st], st))
    new_index = {st: i for i, st in enumerate(present)}
    remap = np.array([new_index.get(st, 0) for st in palette], dtype=np.uint32)
    h = hashlib.sha256()
    h.update(b"mcb-schematic-import\n")
    h.update(hashlib.sha256(data).hexdigest().encode())
    h.update(f"\n{kind}\n{target.x},{target.y},{target.z}\n{rotation}\n{int(allow_drop_block_entities)}".encode())
    h.update(b"\nregistry:" + registry.sha256.encode())
    h.update(b"\nplanner:" + PLANNER_VERSION.encode())
    warnings = list(chk.warnings) + warnings
    air = sum(merged.get(a, 0) for a in ("minecraft:air", "minecraft:cave_air", "minecraft:void_air"))
    if air:
        warnings.append(
            f"the schematic's air ({air:,} positions) is part of the plan: it removes blocks that stand there now"
        )
    left_out = []
    for b in chk.skipped:
        x, y, z = b["pos"]
        rx, rz = S.rotate_xz(x + s.offset[0], z + s.offset[2], rotation // 90)
        left_out.append((target.x + rx, target.y + y + s.offset[1], target.z + rz, b["id"]))
    if left_out:
        warnings.append(f"{len(left_out)} block entities are left out (not placed): see left_out")
    compiled = CompileResult(
        xyz=unpack(keys[order]),
        states=remap[states],
        palette=tuple(present),
        materials=tuple((st, merged[st]) for st in present),
        bounds=bounds,
        examined=s.volume,
        recipe_hash=h.hexdigest(),
        minecraft_version=registry.version,
        warnings=tuple(warnings),
    )
    return ImportResult(compiled, tuple(left_out), s.data_version, s.format)


def export_schematic(
    size: tuple[int, int, int],
    palette: list[str],
    indices: bytes,
    *,
    offset: tuple[int, int, int],
    data_version: int,
    name: str = "",
    format_version: int = 3,
) -> bytes:
    w, h, ln = size
    if min(w, h, ln) < 1:
        raise McbError(ErrorCode.INVALID_REQUEST, "export needs a non-empty region")
    idx = np.frombuffer(indices, dtype="<u2")
    if len(idx) != w * h * ln:
        raise McbError(ErrorCode.INVALID_REQUEST, f"indices hold {len(idx)} positions, expected {w * h * ln}")
    if len(idx) and int(idx.max()) >= len(palette):
        raise McbError(ErrorCode.INVALID_REQUEST, "indices refer past the palette")
    s = S.from_region((w, h, ln), palette, idx.tolist(), offset=offset, data_version=data_version, name=name)
    return S.write_bytes(s, format_version or 3)
