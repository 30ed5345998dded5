"""region_inspect at scale (mcb_journal.inspect): bounded summaries, heightmaps, unknown chunks."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_journal.inspect import HEIGHT_NONE, HEIGHT_UNKNOWN, OCCUPIED_MAX, PALETTE_MAX, inspect_into

PAL = ["minecraft:air", "minecraft:stone", "minecraft:grass_block[snowy=false]", "minecraft:cave_air"]


class TerrainWorld:
    """Stone up to h(x, z), grass on top, air above; some chunks missing; extra blocks."""

    def __init__(self, height, missing=(), extra=None, chunks_exist=True, present=None):
        self.height = height
        self.missing = set(missing)
        self.present = present  # None: every chunk not in ``missing`` exists; else only these
        self.extra = extra or {}
        self.reads = 0
        self.exist_calls = 0
        self.calls = 0  # region_read calls, answered or not_found
        self.answers_chunks_exist = chunks_exist

    def exists(self, c):
        return c not in self.missing and (self.present is None or c in self.present)

    async def call(self, method, params, result_type):
        if method == "chunks_exist":
            if not self.answers_chunks_exist:  # what a host without the method answers
                raise McbError(ErrorCode.NOT_FOUND, "unknown method 'chunks_exist'", details={"method": method})
            self.exist_calls += 1
            w = params.max_cx - params.min_cx + 1
            n = w * (params.max_cz - params.min_cz + 1)
            bits = bytearray((n + 7) // 8)
            for i in range(n):
                if self.exists((params.min_cx + i % w, params.min_cz + i // w)):
                    bits[i >> 3] |= 1 << (i & 7)
            return world_pb2.ChunksExistResult(
                min_cx=params.min_cx,
                min_cz=params.min_cz,
                max_cx=params.max_cx,
                max_cz=params.max_cz,
                bitmap=bytes(bits),
                count=sum(map(int.bit_count, bits)),
            )
        assert method == "region_read"
        self.calls += 1
        lo, hi = params.min, params.max
        chunks = {(cx, cz) for cx in range(lo.x >> 4, (hi.x >> 4) + 1) for cz in range(lo.z >> 4, (hi.z >> 4) + 1)}
        gone = sorted(c for c in chunks if not self.exists(c))
        if gone:
            raise McbError(
                ErrorCode.NOT_FOUND,
                "missing",
                details={"missingChunks": [list(c) for c in gone[:64]], "missingCount": len(gone)},
            )
        self.reads += 1
        xs = np.arange(lo.x, hi.x + 1)
        zs = np.arange(lo.z, hi.z + 1)
        ys = np.arange(lo.y, hi.y + 1)
        h = self.height(xs[None, :], zs[:, None])  # (sz, sx)
        y = ys[:, None, None]
        idx = np.where(y < h, 1, np.where(y == h, 2, 0)).astype("<u2")
        pal = list(PAL)
        for (x, yy, z), s in self.extra.items():
            if lo.x <= x <= hi.x and lo.y <= yy <= hi.y and lo.z <= z <= hi.z:
                if s not in pal:
                    pal.append(s)
                idx[yy - lo.y, z - lo.z, x - lo.x] = pal.index(s)
        return world_pb2.RegionReadResult(palette=pal, indices=idx.tobytes())


def inspect(world, box, detail="summary", step=0):
    resp = jpb.RegionInspectResponse()
    asyncio.run(inspect_into(world, resp, box, detail, step))
    return resp


def flat(h):
    return lambda x, z: np.full(np.broadcast(x, z).shape, h)


def test_an_empty_column_is_none():
    box = Box(Vec3(0, 70, 0), Vec3(15, 80, 15))
    r = inspect(TerrainWorld(flat(64)), box, "heightmap", step=1)
    assert set(r.heightmap.heights) == {HEIGHT_NONE} and r.non_air == 0 and not r.occupied


def test_flat_world_summary():
    box = Box(Vec3(0, 60, 0), Vec3(31, 70, 31))
    r = inspect(TerrainWorld(flat(64)), box)
    counts = {p.state: p.count for p in r.palette}
    assert counts["minecraft:stone"] == 32 * 32 * 4 and counts["minecraft:grass_block[snowy=false]"] == 32 * 32
    assert r.non_air == 32 * 32 * 5
    hm = r.heightmap
    assert (hm.cols, hm.rows, hm.step) == (16, 16, 2) and set(hm.heights) == {64}
    assert len(r.occupied) == 4 and r.occupied_cell == 16  # one box per chunk column
    assert all(b.min.y == 60 and b.max.y == 64 for b in r.occupied)


def test_heightmap_detail_follows_the_terrain_and_the_requested_step():
    box = Box(Vec3(-8, 0, -8), Vec3(23, 40, 23))
    r = inspect(TerrainWorld(lambda x, z: 10 + (x + z) // 4), box, "heightmap", step=4)
    hm = r.heightmap
    assert hm.step == 4 and hm.cols == 8 and hm.rows == 8
    for row in range(hm.rows):
        for col in range(hm.cols):
            x, z = -8 + 4 * col, -8 + 4 * row
            assert hm.heights[row * hm.cols + col] == 10 + (x + z) // 4


def test_air_columns_and_missing_chunks_are_marked_never_guessed():
    box = Box(Vec3(0, 0, 0), Vec3(63, 20, 63))
    world = TerrainWorld(lambda x, z: np.where(x < 32, 5, 100) + 0 * z, missing={(3, 3), (0, 3)})
    r = inspect(world, box, "heightmap", step=1)
    hm = r.heightmap
    assert hm.step == 2 and hm.cols == 32  # step 1 would exceed the 32 x 32 grid
    assert r.unknown_chunk_count == 2 and sorted(zip(r.unknown_chunks[0::2], r.unknown_chunks[1::2], strict=True)) == [
        (0, 3),
        (3, 3),
    ]
    assert r.unknown_positions == 2 * 16 * 16 * 21
    assert hm.heights[0] == 5  # (0, 0)
    assert hm.heights[20] == 20  # x = 40: the surface (100) is above the box, so its top layer
    assert hm.heights[31 * 32 + 31] == HEIGHT_UNKNOWN and hm.heights[31 * 32 + 0] == HEIGHT_UNKNOWN
    assert hm.heights[31 * 32 + 10] == 5  # chunk (1, 3) exists
    assert world.reads < 16  # split around the holes, not one read per chunk
    old = TerrainWorld(world.height, missing=world.missing, chunks_exist=False)  # a host without chunks_exist
    assert inspect(old, box, "heightmap", step=1) == r and old.exist_calls == 0 and old.reads >= world.reads


def test_missing_chunks_cost_no_reads_when_the_host_says_which_exist():
    """1.9 M positions, only an 8 × 8-chunk square generated: one chunks_exist and one
    region_read (the square), every other chunk counted unknown without a read — the same answer
    as splitting around them, which takes hundreds of reads."""
    box = Box(Vec3(-680, 60, -680), Vec3(679, 60, 679))  # 1360 × 1 × 1360 = 1,849,600 positions
    square = {(cx, cz) for cx in range(-4, 4) for cz in range(-4, 4)}
    world = TerrainWorld(flat(64), present=square)
    r = inspect(world, box)
    assert world.exist_calls == 1 and world.reads == 1
    chunks = 86**2  # chunks -43..42 on each axis
    assert r.unknown_chunk_count == chunks - 64 and r.unknown_positions == box.volume - 64 * 256
    assert {p.state: p.count for p in r.palette} == {"minecraft:stone": 64 * 256}
    old = TerrainWorld(flat(64), present=square, chunks_exist=False)
    assert inspect(old, box) == r and old.calls > 100  # the splitting: many not_found answers


def test_scattered_chunks_are_read_as_few_rectangles():
    from mcb_journal.inspect import chunk_rectangles

    exists = {(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (5, 1), (5, 2), (0, 3)}
    rects = chunk_rectangles(exists, 0, 0, 5, 3)
    covered = {(x, z) for a, b, c, d in rects for x in range(a, c + 1) for z in range(b, d + 1)}
    assert covered == exists and sum((c - a + 1) * (d - b + 1) for a, b, c, d in rects) == len(exists)
    assert sorted(rects) == [(0, 0, 2, 1), (0, 3, 0, 3), (5, 1, 5, 2)]
    checker = {(x, z) for x in range(8) for z in range(8) if (x + z) % 2 == 0}
    box = Box(Vec3(0, 60, 0), Vec3(127, 64, 127))
    world = TerrainWorld(flat(64), present=checker)
    r = inspect(world, box)
    assert world.reads == 32 and r.unknown_chunk_count == 32  # one read per existing chunk, none for the rest
    assert inspect(TerrainWorld(flat(64), present=checker, chunks_exist=False), box) == r


def test_summary_is_bounded_for_many_states_and_columns():
    extra = {
        (x, 70, z): f"minecraft:{c}_wool"
        for x in range(0, 256, 7)
        for z in range(0, 256, 9)
        for c in [
            [
                "white",
                "red",
                "blue",
                "lime",
                "black",
                "pink",
                "gray",
                "cyan",
                "brown",
                "green",
                "orange",
                "yellow",
                "purple",
                "magenta",
                "light_blue",
                "light_gray",
            ][(x * 3 + z) % 16]
        ]
    }
    extra |= {
        (x, 71, 0): s
        for x, s in enumerate(
            [
                f"minecraft:{w}_planks"
                for w in (
                    "oak",
                    "spruce",
                    "birch",
                    "jungle",
                    "acacia",
                    "dark_oak",
                    "mangrove",
                    "cherry",
                    "bamboo",
                    "crimson",
                    "warped",
                    "pale_oak",
                )
            ]
            + [
                f"minecraft:{c}_concrete"
                for c in (
                    "white",
                    "red",
                    "blue",
                    "lime",
                    "black",
                    "pink",
                    "gray",
                    "cyan",
                    "brown",
                    "green",
                    "orange",
                    "yellow",
                    "purple",
                )
            ]
        )
    }
    box = Box(Vec3(0, 60, 0), Vec3(255, 75, 255))
    r = inspect(TerrainWorld(flat(64), extra=extra), box)
    assert len(r.palette) == PALETTE_MAX and r.palette_omitted > 0
    assert len(r.occupied) <= OCCUPIED_MAX and r.occupied_cell == 64
    assert len(r.SerializeToString()) < 4096


@pytest.mark.parametrize("shape", [(1414, 1, 1414), (128, 122, 128)])
def test_two_million_positions_within_budget(shape):
    sx, sy, sz = shape
    box = Box(Vec3(0, 0, 0), Vec3(sx - 1, sy - 1, sz - 1))
    assert box.volume <= 2_000_000
    world = TerrainWorld(lambda x, z: 40 + ((x * 7 + z * 3) % 50))
    t = time.perf_counter()
    r = inspect(world, box)
    elapsed = time.perf_counter() - t
    assert r.non_air > 0
    print(f"summary over {box.volume:,} positions {shape}: {elapsed:.2f} s")
    assert elapsed < 10  # generous on a shared CI box; the bench records the real number
