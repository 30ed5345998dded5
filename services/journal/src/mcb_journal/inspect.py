"""region_inspect at scale: a bounded summary of up to 2,000,000 positions.

What the model gets (docs/recipes.md "Inspecting a region"), each part bounded in size:

* ``palette``: states with counts, most common first, at most ``PALETTE_MAX`` (the rest are
  counted in ``palette_omitted``);
* ``occupied``: boxes that together hold every non-air block — the bounding box of the
  non-air blocks of each 16×16 chunk column, grouped on a coarser xz grid (32, 64, …) until
  there are at most ``OCCUPIED_MAX``;
* ``heightmap``: the highest non-air y of the box in columns sampled every ``step`` blocks,
  ``HEIGHT_NONE`` where the column is only air, ``HEIGHT_UNKNOWN`` where its chunk does not
  exist. The grid is at most ``SUMMARY_GRID``² cells in a summary and ``HEIGHTMAP_GRID``² in
  ``detail = "heightmap"``; a smaller requested step is raised to fit (``step`` says which);
* unknown areas: chunks that were never generated are listed (``unknown_chunks``, at most 64)
  and counted, never generated or guessed.

Reading: first one ``chunks_exist`` for the box's chunk range (region file headers on the
embedded host; nothing is loaded or generated), so a missing chunk costs O(1) — it is counted as
unknown without any read — and only the existing chunks are read, as few ``region_read`` boxes as
their layout allows (runs of existing chunks in a row, merged across rows). Hosts without the
capability (and a chunk that vanished meanwhile) fall back to splitting: a box the host answers
``not_found`` for is split at chunk borders (halving the longer side) and the halves are read
again. numpy over the host's uint16 indices does the per-block work (``Scan.add``); Python loops
only over chunk columns and sampled columns.
"""

from __future__ import annotations

import time
import weakref
from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.registry import AIR_NAMES

from .worldread import WorldReader, read_region

PALETTE_MAX = 32
OCCUPIED_MAX = 32
SUMMARY_GRID = 16
HEIGHTMAP_GRID = 32
UNKNOWN_LIST_MAX = 64
HEIGHT_NONE = -32768
HEIGHT_UNKNOWN = -32769


def auto_step(box: Box, grid: int, requested: int = 0) -> int:
    """The smallest step ≥ ``requested`` whose sample grid fits ``grid`` × ``grid``."""
    span = max(box.size.x, box.size.z)
    need = -(-span // grid)
    return max(requested or 1, need, 1)


@dataclass
class Scan:
    box: Box
    step: int
    counts: Counter = field(default_factory=Counter)  # state -> count
    # (cx, cz) -> [minx, miny, minz, maxx, maxy, maxz] of non-air blocks
    columns: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    reads: int = 0  # region_read calls it took
    heights: dict[tuple[int, int], int] = field(default_factory=dict)  # sampled (x, z) -> y
    unknown: list[tuple[int, int]] = field(default_factory=list)
    unknown_positions: int = 0

    def add(self, sub: Box, palette: list[str], idx: array | np.ndarray) -> None:
        """Count the states of one read of ``sub`` (uint16 palette indices, YZX order) and fold
        its non-air blocks into the chunk columns' boxes and the sampled heights. numpy does the
        per-block work: one bincount, one air lookup, then per chunk column and per sampled
        column only reductions over the non-air mask."""
        sx, sy, sz = sub.size.x, sub.size.y, sub.size.z
        ids = np.frombuffer(idx, dtype=np.uint16) if not isinstance(idx, np.ndarray) else idx.reshape(-1)
        counts = np.bincount(ids, minlength=len(palette))
        if ids.size != sx * sy * sz or counts.size > len(palette):
            raise McbError(
                ErrorCode.UNAVAILABLE,
                f"the world host's region_read answer for {sub} is malformed "
                f"({ids.size} indices for {sx * sy * sz} positions, {counts.size} needed for "
                f"{len(palette)} palette states)",
                details={"method": "region_read"},
            )
        for i in np.flatnonzero(counts).tolist():
            self.counts[palette[i]] += int(counts[i])
        solid = np.fromiter((s.split("[", 1)[0] not in AIR_NAMES for s in palette), dtype=bool, count=len(palette))
        if not solid[counts > 0].any():
            return
        mask = solid[ids].reshape(sy, sz, sx)
        b, step = self.box, self.step
        top_any = mask.any(axis=0)  # (sz, sx): columns with a non-air block
        # highest non-air layer of every column (valid where top_any)
        top = (sy - 1) - np.argmax(mask[::-1], axis=0)
        # chunk columns: bounding box of their non-air blocks
        mx, mz, my = sub.min.x, sub.min.z, sub.min.y
        cols = self.columns
        for cz in range(mz >> 4, (sub.max.z >> 4) + 1):
            za, zb = max(mz, cz * 16) - mz, min(sub.max.z, cz * 16 + 15) - mz + 1
            for cx in range(mx >> 4, (sub.max.x >> 4) + 1):
                xa, xb = max(mx, cx * 16) - mx, min(sub.max.x, cx * 16 + 15) - mx + 1
                plan = top_any[za:zb, xa:xb]
                if not plan.any():
                    continue
                zs = np.flatnonzero(plan.any(axis=1))
                xs = np.flatnonzero(plan.any(axis=0))
                ys = np.flatnonzero(mask[:, za:zb, xa:xb].any(axis=(1, 2)))
                found = [
                    mx + xa + int(xs[0]),
                    my + int(ys[0]),
                    mz + za + int(zs[0]),
                    mx + xa + int(xs[-1]),
                    my + int(ys[-1]),
                    mz + za + int(zs[-1]),
                ]
                c = cols.get((cx, cz))
                if c is None:
                    cols[(cx, cz)] = found
                else:
                    cols[(cx, cz)] = [
                        min(c[0], found[0]),
                        min(c[1], found[1]),
                        min(c[2], found[2]),
                        max(c[3], found[3]),
                        max(c[4], found[4]),
                        max(c[5], found[5]),
                    ]
        # heightmap: the sampled columns of this read
        x_first = (-(mx - b.min.x)) % step
        z_first = (-(mz - b.min.z)) % step
        any_s = top_any[z_first::step, x_first::step]
        top_s = top[z_first::step, x_first::step]
        heights = self.heights
        for zi, xi in zip(*(a.tolist() for a in np.nonzero(any_s)), strict=True):
            heights[(mx + x_first + xi * step, mz + z_first + zi * step)] = my + int(top_s[zi, xi])


CHUNKS_EXIST_MAX_SIDE = 256  # 256 × 256 = the protocol's 65,536 chunks per chunks_exist
_UNSUPPORTED_RETRY_S = 60.0
_unsupported_since: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # client -> when refused


def _refused_as_unknown_method(e: McbError) -> bool:
    return (e.code == ErrorCode.NOT_FOUND and "method" in (e.details or {})) or (
        e.code == ErrorCode.INVALID_REQUEST and "not implemented" in e.message
    )


async def existing_chunks(world: WorldReader, cx0: int, cz0: int, cx1: int, cz1: int) -> set[tuple[int, int]] | None:
    """The chunks of the inclusive range that exist, from the host's ``chunks_exist`` (one call per
    256 × 256 chunks); None when the host does not offer it (asked again after a minute)."""
    since = _unsupported_since.get(world)
    if since is not None and time.monotonic() - since < _UNSUPPORTED_RETRY_S:
        return None
    out: set[tuple[int, int]] = set()
    for z0 in range(cz0, cz1 + 1, CHUNKS_EXIST_MAX_SIDE):
        for x0 in range(cx0, cx1 + 1, CHUNKS_EXIST_MAX_SIDE):
            x1, z1 = min(cx1, x0 + CHUNKS_EXIST_MAX_SIDE - 1), min(cz1, z0 + CHUNKS_EXIST_MAX_SIDE - 1)
            try:
                res = await world.call(
                    "chunks_exist",
                    world_pb2.ChunksExistParams(min_cx=x0, min_cz=z0, max_cx=x1, max_cz=z1),
                    world_pb2.ChunksExistResult,
                )
            except McbError as e:
                if _refused_as_unknown_method(e):
                    _unsupported_since[world] = time.monotonic()
                    return None
                raise
            _unsupported_since.pop(world, None)
            width, bits = x1 - x0 + 1, res.bitmap
            for byte_i, byte in enumerate(bits):
                while byte:
                    low = byte & -byte
                    i = byte_i * 8 + low.bit_length() - 1
                    out.add((x0 + i % width, z0 + i // width))
                    byte ^= low
    return out


def chunk_rectangles(
    exists: set[tuple[int, int]], cx0: int, cz0: int, cx1: int, cz1: int
) -> list[tuple[int, int, int, int]]:
    """Cover the existing chunks of the range with few rectangles (cxa, cza, cxb, czb): runs of
    existing chunks in each row, a run continued by the same run in the next row grows downwards."""
    done: list[tuple[int, int, int, int]] = []
    open_: dict[tuple[int, int], int] = {}  # (cxa, cxb) -> first row
    for cz in range(cz0, cz1 + 2):
        runs: set[tuple[int, int]] = set()
        if cz <= cz1:
            cx = cx0
            while cx <= cx1:
                if (cx, cz) in exists:
                    start = cx
                    while cx + 1 <= cx1 and (cx + 1, cz) in exists:
                        cx += 1
                    runs.add((start, cx))
                cx += 1
        for run in [r for r in open_ if r not in runs]:
            done.append((run[0], open_.pop(run), run[1], cz - 1))
        for run in runs:
            open_.setdefault(run, cz)
    return done


async def scan_region(world: WorldReader, box: Box, step: int) -> Scan:
    """Read ``box`` into a ``Scan``: the existing chunks only when the host says which exist
    (``chunks_exist``), else the whole box, split around missing chunks."""
    scan = Scan(box, step)
    cx0, cx1 = box.min.x >> 4, box.max.x >> 4
    cz0, cz1 = box.min.z >> 4, box.max.z >> 4
    exists = await existing_chunks(world, cx0, cz0, cx1, cz1)
    if exists is None:
        todo = [box]
    else:
        sy = box.size.y
        for cz in range(cz0, cz1 + 1):
            dz = min(box.max.z, cz * 16 + 15) - max(box.min.z, cz * 16) + 1
            for cx in range(cx0, cx1 + 1):
                if (cx, cz) not in exists:  # never read: O(1)
                    scan.unknown.append((cx, cz))
                    scan.unknown_positions += (min(box.max.x, cx * 16 + 15) - max(box.min.x, cx * 16) + 1) * sy * dz
        todo = [
            Box(
                Vec3(max(box.min.x, a * 16), box.min.y, max(box.min.z, b * 16)),
                Vec3(min(box.max.x, c * 16 + 15), box.max.y, min(box.max.z, d * 16 + 15)),
            )
            for a, b, c, d in chunk_rectangles(exists, cx0, cz0, cx1, cz1)
        ]
    reads = 0
    while todo:
        sub = todo.pop()
        try:
            palette, idx = await read_region(world, sub)
            reads += 1
        except McbError as e:
            if e.code != ErrorCode.NOT_FOUND or not (e.details or {}).get("missingChunks"):
                raise
            cx0, cx1 = sub.min.x >> 4, sub.max.x >> 4
            cz0, cz1 = sub.min.z >> 4, sub.max.z >> 4
            if cx0 == cx1 and cz0 == cz1:
                scan.unknown.append((cx0, cz0))
                scan.unknown_positions += sub.volume
                continue
            if cx1 - cx0 >= cz1 - cz0:
                mid = ((cx0 + cx1 + 1) // 2) * 16  # first x of the upper half
                todo += [
                    Box(sub.min, Vec3(mid - 1, sub.max.y, sub.max.z)),
                    Box(Vec3(mid, sub.min.y, sub.min.z), sub.max),
                ]
            else:
                mid = ((cz0 + cz1 + 1) // 2) * 16
                todo += [
                    Box(sub.min, Vec3(sub.max.x, sub.max.y, mid - 1)),
                    Box(Vec3(sub.min.x, sub.min.y, mid), sub.max),
                ]
            continue
        scan.add(sub, palette, idx)
    scan.unknown.sort()
    scan.reads = reads
    return scan


def occupied_boxes(scan: Scan) -> tuple[list[Box], int]:
    """≤ OCCUPIED_MAX boxes covering every non-air block, and the xz cell they are grouped by."""
    cell = 16
    groups = {k: Box(Vec3(*v[:3]), Vec3(*v[3:])) for k, v in scan.columns.items()}
    # each column box: z extent was tracked per row, y min is the first layer seen
    while len(groups) > OCCUPIED_MAX:
        cell *= 2
        merged: dict[tuple[int, int], Box] = {}
        for (cx, cz), bx in groups.items():
            key = (cx // 2, cz // 2)
            m = merged.get(key)
            merged[key] = (
                bx
                if m is None
                else Box(
                    Vec3(min(m.min.x, bx.min.x), min(m.min.y, bx.min.y), min(m.min.z, bx.min.z)),
                    Vec3(max(m.max.x, bx.max.x), max(m.max.y, bx.max.y), max(m.max.z, bx.max.z)),
                )
            )
        groups = merged
    return [groups[k] for k in sorted(groups)], cell


def heightmap_grid(scan: Scan) -> tuple[int, int, list[int]]:
    b, step = scan.box, scan.step
    cols = (b.size.x - 1) // step + 1
    rows = (b.size.z - 1) // step + 1
    unknown = set(scan.unknown)
    out = []
    for r in range(rows):
        z = b.min.z + r * step
        for c in range(cols):
            x = b.min.x + c * step
            if (x >> 4, z >> 4) in unknown:
                out.append(HEIGHT_UNKNOWN)
            else:
                out.append(scan.heights.get((x, z), HEIGHT_NONE))
    return cols, rows, out


async def inspect_into(world: WorldReader, resp: jpb.RegionInspectResponse, box: Box, detail: str, step: int) -> None:
    """Fill a RegionInspectResponse for detail "summary" or "heightmap"."""

    grid = SUMMARY_GRID if detail == "summary" else HEIGHTMAP_GRID
    scan = await scan_region(world, box, auto_step(box, grid, step))
    ordered = sorted(scan.counts.items(), key=lambda kv: (-kv[1], kv[0]))
    for state, n in ordered[:PALETTE_MAX]:
        resp.palette.append(common_pb2.StateCount(state=state, count=n))
    resp.palette_omitted = max(0, len(ordered) - PALETTE_MAX)
    resp.non_air = sum(n for s, n in ordered if s.split("[", 1)[0] not in AIR_NAMES)
    boxes, cell = occupied_boxes(scan)
    for bx in boxes:
        resp.occupied.append(
            common_pb2.Box(
                min=common_pb2.Vec3(x=bx.min.x, y=bx.min.y, z=bx.min.z),
                max=common_pb2.Vec3(x=bx.max.x, y=bx.max.y, z=bx.max.z),
            )
        )
    resp.occupied_cell = cell
    cols, rows, heights = heightmap_grid(scan)
    resp.heightmap.CopyFrom(
        jpb.Heightmap(x0=box.min.x, z0=box.min.z, step=scan.step, cols=cols, rows=rows, heights=heights)
    )
    for cx, cz in scan.unknown[:UNKNOWN_LIST_MAX]:
        resp.unknown_chunks.extend([cx, cz])
    resp.unknown_chunk_count = len(scan.unknown)
    resp.unknown_positions = scan.unknown_positions
