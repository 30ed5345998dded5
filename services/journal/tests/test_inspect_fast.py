"""The numpy scan (``Scan.add``) gives exactly the summary of the former pure-Python scan, kept
here as the reference, on random worlds, boxes, steps and missing chunks."""

from __future__ import annotations

import asyncio
import random
import sys
from array import array
from collections import Counter

import numpy as np
import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.registry import AIR_NAMES
from mcb_journal import inspect as insp

_LITTLE = sys.byteorder == "little"


def reference_add(self: insp.Scan, sub: Box, palette: list[str], idx: array) -> None:
    """The scan before numpy (slices and byte searches), unchanged."""
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
    else:
        for i, n in Counter(idx).items():
            self.counts[palette[i]] += n
        mask = bytes(0 if air[i] else 1 for i in idx)
    if b"\x01" not in mask:
        return
    b, step = self.box, self.step
    layer = sx * sz
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
                    c[0], c[3] = min(c[0], x0), max(c[3], x1)
                    c[2], c[5] = min(c[2], z), max(c[5], z)
                    c[4] = y
    x_first = sub.min.x + (-(sub.min.x - b.min.x)) % step
    z_first = sub.min.z + (-(sub.min.z - b.min.z)) % step
    for z in range(z_first, sub.max.z + 1, step):
        zoff = (z - sub.min.z) * sx
        for x in range(x_first, sub.max.x + 1, step):
            top = mask[zoff + x - sub.min.x :: layer].rfind(b"\x01")
            if top >= 0:
                self.heights[(x, z)] = sub.min.y + top


AIRS = ["minecraft:air", "minecraft:cave_air", "minecraft:void_air"]
SOLIDS = ["minecraft:stone", "minecraft:grass_block[snowy=false]", "minecraft:oak_log[axis=y]", "minecraft:glass"]


class RandomWorld:
    """Random blocks in a fixed area (a per-world seed), some chunks missing; the palette's
    order and size differ per read like a real host's (air first, then first seen)."""

    def __init__(
        self,
        seed: int,
        lo: tuple[int, int, int],
        shape: tuple[int, int, int],
        states: list[str],
        density: float,
        missing: set[tuple[int, int]],
        chunks_exist: bool,
    ):
        rng = np.random.default_rng(seed)
        self.lo, self.states, self.missing, self.answers = lo, states, missing, chunks_exist
        sy, sz, sx = shape
        solid = rng.random(shape) < density
        self.grid = np.where(solid, rng.integers(len(AIRS), len(states), shape), rng.integers(0, len(AIRS), shape))

    async def call(self, method, params, result_type):
        if method == "chunks_exist":
            if not self.answers:
                raise McbError(ErrorCode.NOT_FOUND, "unknown method 'chunks_exist'", details={"method": method})
            w = params.max_cx - params.min_cx + 1
            n = w * (params.max_cz - params.min_cz + 1)
            bits = bytearray((n + 7) // 8)
            for i in range(n):
                if (params.min_cx + i % w, params.min_cz + i // w) not in self.missing:
                    bits[i >> 3] |= 1 << (i & 7)
            return world_pb2.ChunksExistResult(
                min_cx=params.min_cx,
                min_cz=params.min_cz,
                max_cx=params.max_cx,
                max_cz=params.max_cz,
                bitmap=bytes(bits),
            )
        lo, hi = params.min, params.max
        gone = sorted(
            (cx, cz)
            for cx in range(lo.x >> 4, (hi.x >> 4) + 1)
            for cz in range(lo.z >> 4, (hi.z >> 4) + 1)
            if (cx, cz) in self.missing
        )
        if gone:
            raise McbError(ErrorCode.NOT_FOUND, "missing", details={"missingChunks": [list(c) for c in gone[:64]]})
        x0, y0, z0 = self.lo
        part = self.grid[lo.y - y0 : hi.y - y0 + 1, lo.z - z0 : hi.z - z0 + 1, lo.x - x0 : hi.x - x0 + 1]
        order = np.unique(part.ravel(), return_index=True)
        seen = [int(v) for v in order[0][np.argsort(order[1])]]
        pal = ["minecraft:air"] + [self.states[v] for v in seen if self.states[v] != "minecraft:air"]
        lut = np.zeros(len(self.states), dtype="<u2")
        for v in seen:
            lut[v] = pal.index(self.states[v]) if self.states[v] in pal else 0
        return world_pb2.RegionReadResult(palette=pal, indices=lut[part].astype("<u2").tobytes())


def summary(world, box, detail, step, add=None):
    resp = jpb.RegionInspectResponse()
    if add is None:
        asyncio.run(insp.inspect_into(world, resp, box, detail, step))
        return resp
    saved = insp.Scan.add
    insp.Scan.add = add
    try:
        asyncio.run(insp.inspect_into(world, resp, box, detail, step))
    finally:
        insp.Scan.add = saved
    return resp


@pytest.mark.parametrize("seed", range(12))
def test_numpy_scan_gives_the_reference_summary(seed):
    rng = random.Random(seed)
    lo = (rng.randrange(-70, 10), rng.randrange(-64, 100), rng.randrange(-70, 10))
    shape = (rng.randrange(1, 40), rng.randrange(1, 90), rng.randrange(1, 90))  # (sy, sz, sx)
    many = seed % 4 == 3  # more than 256 states: the reference's other path
    states = AIRS + (SOLIDS if not many else [f"minecraft:stone_{i}" for i in range(300)])
    density = rng.choice([0.0, 0.001, 0.05, 0.5, 0.97])
    cx0, cz0 = lo[0] >> 4, lo[2] >> 4
    cx1, cz1 = (lo[0] + shape[2] - 1) >> 4, (lo[2] + shape[1] - 1) >> 4
    chunks = [(cx, cz) for cx in range(cx0, cx1 + 1) for cz in range(cz0, cz1 + 1)]
    missing = set(rng.sample(chunks, rng.randrange(0, len(chunks)))) if seed % 3 else set()
    world = RandomWorld(seed, lo, shape, states, density, missing, chunks_exist=seed % 5 != 0)
    # a box inside the world's area, any alignment
    bx0, bx1 = sorted(rng.randrange(lo[0], lo[0] + shape[2]) for _ in range(2))
    by0, by1 = sorted(rng.randrange(lo[1], lo[1] + shape[0]) for _ in range(2))
    bz0, bz1 = sorted(rng.randrange(lo[2], lo[2] + shape[1]) for _ in range(2))
    box = Box(Vec3(bx0, by0, bz0), Vec3(bx1, by1, bz1))
    for detail, step in (("summary", 0), ("heightmap", rng.randrange(1, 5))):
        fast = summary(world, box, detail, step)
        ref = summary(world, box, detail, step, add=reference_add)
        assert fast == ref, (seed, box, detail, step)
    if density >= 0.5 and fast.unknown_positions < box.volume:  # the comparison covered real blocks
        assert fast.non_air > 0 and len(fast.occupied) > 0


def test_the_fast_scan_refuses_a_malformed_answer():
    scan = insp.Scan(Box(Vec3(0, 0, 0), Vec3(3, 3, 3)), 1)
    with pytest.raises(McbError) as e:
        scan.add(scan.box, ["minecraft:air"], array("H", [0] * 63 + [1]))  # index 1: no such state
    assert e.value.code == ErrorCode.UNAVAILABLE
    with pytest.raises(McbError):
        scan.add(scan.box, ["minecraft:air"], array("H", [0] * 10))  # too few indices
