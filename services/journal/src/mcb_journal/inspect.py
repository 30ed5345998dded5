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
again. Pure Python over the host's uint16 indices: slices and sets do the per-block work in C.
"""

from __future__ import annotations

import sys
import time
import weakref
from array import array
from collections import Counter
from dataclasses import dataclass, field

from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.registry import AIR_NAMES
from mcb_rpc.worldclient import WorldClient

from .worldread import read_region

_LITTLE = sys.byteorder == "little"
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

    def add(self, sub: Box, palette: list[str], idx: array) -> None:
        sx, sz = sub.size.x, sub.size.z
        air = [s.split("[", 1)[0] in AIR_NAMES for s in palette]
        raw = idx.tobytes() if idx.itemsize == 2 else array("H", idx).tobytes()
        if len(palette) <= 256:
            low = raw[0::2] if _LITTLE else raw[1::2]
            for i, st in enumerate(palette):
                n = low.count(i.to_bytes(1, "little"))
                if n:
                    self.counts[st] += n
            mask = low.translate(bytes((0 if i < len(air) and air[i] else 1) for i in range(256)))
        else:  # rare: more than 256 distinct states in one read
            for i, n in Counter(idx).items():
                self.counts[palette[i]] += n
            mask = bytes(0 if air[i] else 1 for i in idx)
        if b"\x01" not in mask:
            return
        b, step = self.box, self.step
        layer = sx * sz
        # chunk segments of a row: (offset in row, end, cx)
        segs = []
        x = sub.min.x
        while x <= sub.max.x:
            end = min(sub.max.x, (x | 15))
            segs.append((x - sub.min.x, end - sub.min.x + 1, x >> 4))
            x = end + 1
        cols = self.columns
        for yi in range(sub.size.y):
            base = yi * layer
            if mask.find(b"\x01", base, base + layer) < 0:
                continue
            y = sub.min.y + yi
            for zi in range(sz):
                r0 = base + zi * sx
                if mask.find(b"\x01", r0, r0 + sx) < 0:
                    continue
                z = sub.min.z + zi
                cz = z >> 4
                for a, e, cx in segs:
                    first = mask.find(b"\x01", r0 + a, r0 + e)
                    if first < 0:
                        continue
                    last = mask.rfind(b"\x01", r0 + a, r0 + e)
                    x0, x1 = sub.min.x + first - r0, sub.min.x + last - r0
                    c = cols.get((cx, cz))
                    if c is None:
                        cols[(cx, cz)] = [x0, y, z, x1, y, z]
                    else:
                        if x0 < c[0]:
                            c[0] = x0
                        if x1 > c[3]:
                            c[3] = x1
                        if z < c[2]:
                            c[2] = z
                        if z > c[5]:
                            c[5] = z
                        c[4] = y  # layers ascend: y is the new maximum
        # heightmap: each sampled column is one strided slice of the mask
        x_first = sub.min.x + (-(sub.min.x - b.min.x)) % step
        z_first = sub.min.z + (-(sub.min.z - b.min.z)) % step
        heights = self.heights
        for z in range(z_first, sub.max.z + 1, step):
            zoff = (z - sub.min.z) * sx
            for x in range(x_first, sub.max.x + 1, step):
                top = mask[zoff + x - sub.min.x::layer].rfind(b"\x01")
                if top >= 0:
                    heights[(x, z)] = sub.min.y + top


CHUNKS_EXIST_MAX_SIDE = 256  # 256 × 256 = the protocol's 65,536 chunks per chunks_exist
_UNSUPPORTED_RETRY_S = 60.0
_unsupported_since: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # client -> when refused


def _refused_as_unknown_method(e: McbError) -> bool:
    return ((e.code == ErrorCode.NOT_FOUND and "method" in (e.details or {}))
            or (e.code == ErrorCode.INVALID_REQUEST and "not implemented" in e.message))


async def existing_chunks(world: WorldClient, cx0: int, cz0: int, cx1: int, cz1: int) -> set[tuple[int, int]] | None:
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
                res = await world.call("chunks_exist", world_pb2.ChunksExistParams(
                    min_cx=x0, min_cz=z0, max_cx=x1, max_cz=z1), world_pb2.ChunksExistResult)
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


def chunk_rectangles(exists: set[tuple[int, int]], cx0: int, cz0: int, cx1: int, cz1: int) -> list[tuple[int, int, int, int]]:
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


async def scan_region(world: WorldClient, box: Box, step: int) -> Scan:
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
        todo = [Box(Vec3(max(box.min.x, a * 16), box.min.y, max(box.min.z, b * 16)),
                    Vec3(min(box.max.x, c * 16 + 15), box.max.y, min(box.max.z, d * 16 + 15)))
                for a, b, c, d in chunk_rectangles(exists, cx0, cz0, cx1, cz1)]
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
                todo += [Box(sub.min, Vec3(mid - 1, sub.max.y, sub.max.z)),
                         Box(Vec3(mid, sub.min.y, sub.min.z), sub.max)]
            else:
                mid = ((cz0 + cz1 + 1) // 2) * 16
                todo += [Box(sub.min, Vec3(sub.max.x, sub.max.y, mid - 1)),
                         Box(Vec3(sub.min.x, sub.min.y, mid), sub.max)]
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
            merged[key] = bx if m is None else Box(
                Vec3(min(m.min.x, bx.min.x), min(m.min.y, bx.min.y), min(m.min.z, bx.min.z)),
                Vec3(max(m.max.x, bx.max.x), max(m.max.y, bx.max.y), max(m.max.z, bx.max.z)))
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


async def inspect_into(world: WorldClient, resp, box: Box, detail: str, step: int) -> None:
    """Fill a RegionInspectResponse for detail "summary" or "heightmap"."""
    from mcb.common.v1 import common_pb2
    from mcb.journal.v1 import journal_pb2 as jpb

    grid = SUMMARY_GRID if detail == "summary" else HEIGHTMAP_GRID
    scan = await scan_region(world, box, auto_step(box, grid, step))
    ordered = sorted(scan.counts.items(), key=lambda kv: (-kv[1], kv[0]))
    for state, n in ordered[:PALETTE_MAX]:
        resp.palette.append(common_pb2.StateCount(state=state, count=n))
    resp.palette_omitted = max(0, len(ordered) - PALETTE_MAX)
    resp.non_air = sum(n for s, n in ordered if s.split("[", 1)[0] not in AIR_NAMES)
    boxes, cell = occupied_boxes(scan)
    for bx in boxes:
        resp.occupied.append(common_pb2.Box(
            min=common_pb2.Vec3(x=bx.min.x, y=bx.min.y, z=bx.min.z),
            max=common_pb2.Vec3(x=bx.max.x, y=bx.max.y, z=bx.max.z)))
    resp.occupied_cell = cell
    cols, rows, heights = heightmap_grid(scan)
    resp.heightmap.CopyFrom(jpb.Heightmap(x0=box.min.x, z0=box.min.z, step=scan.step, cols=cols,
                                          rows=rows, heights=heights))
    for cx, cz in scan.unknown[:UNKNOWN_LIST_MAX]:
        resp.unknown_chunks.extend([cx, cz])
    resp.unknown_chunk_count = len(scan.unknown)
    resp.unknown_positions = scan.unknown_positions
