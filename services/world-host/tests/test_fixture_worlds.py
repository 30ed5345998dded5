"""Real saves from other tools: read them, cross-check with anvil-parser2, write into a copy."""

from __future__ import annotations

import random
import shutil
import zlib
from pathlib import Path

import anvil_check as indie
import pytest
from mcb.world.v1 import world_pb2
from mcb_common import nbt
from mcb_common.errors import ErrorCode, McbError
from mcb_world_host.chunk import Chunk
from mcb_world_host.host import Host
from mcb_world_host.region import RegionFile
from mcb_world_host.world import World

pytestmark = pytest.mark.fixtures

REGIONS = [
    ("minestom_vanilla_1.21.11", "r.-1.-1.mca", -1, -1),
    ("prismarine_1.20.6", "r.0.0.mca", 0, 0),
    ("querz_21w44a", "r.-1.-1.mca", -1, -1),
    ("querz_21w44a", "r.15.-9.mca", 15, -9),
]


@pytest.mark.parametrize("folder, name, rx, rz", REGIONS, ids=[f"{a}/{b}" for a, b, _, _ in REGIONS])
def test_read_real_chunks_and_cross_check(fixtures_dir, registry, folder, name, rx, rz):
    path = fixtures_dir / "world" / folder / "region" / name
    ours = RegionFile(path)
    theirs = indie.open_region(path)
    positions = ours.chunk_positions(rx, rz)
    assert positions
    rng = random.Random(name)
    checked = full = 0
    non_air = set()
    for cx, cz in positions:
        c = Chunk(cx, cz, nbt.read(ours.read_chunk(cx, cz)), registry, -4, 19)
        full += c.is_full
        ich = indie.chunk(theirs, cx, cz)
        samples = 12 if len(positions) > 50 else 400
        for _ in range(samples):
            x, y, z = cx * 16 + rng.randrange(16), rng.randrange(-64, 320), cz * 16 + rng.randrange(16)
            a, b = c.get_block(x, y, z), indie.get(ich, x, y, z)
            assert indie.matches(a, b), f"({x},{y},{z}) in chunk ({cx},{cz}): ours {a} vs anvil {b}"
            checked += 1
            if a != "minecraft:air":
                non_air.add(a.split("[")[0])
    assert full >= 1
    assert len(non_air) >= 3, non_air  # real terrain, not an empty read
    ours.close()


def test_vanilla_world_opens_and_reads(vanilla_copy, registry):
    w = World(vanilla_copy, registry)
    try:
        assert w.data_version == 4671 and w.minecraft_version == "1.21.11"
        chunks = w.existing_chunks()
        assert len(chunks) == 321
        host = Host(w)
        info = host.world_info(world_pb2.Empty())
        assert info.loaded_area.min.x == -15 and info.loaded_area.max.z == -1
        statuses = {w.chunk(*c).status for c in chunks}
        assert "minecraft:full" in statuses and len(statuses) > 1
        with pytest.raises(McbError) as ei:
            w.get_block(0, 64, 0)  # chunk (0,0) was never generated
        assert ei.value.code == ErrorCode.NOT_FOUND and ei.value.details["missingChunks"] == [[0, 0]]
    finally:
        w.close()


def _raw_chunks(path: Path) -> dict[tuple[int, int], bytes]:
    r = RegionFile(path)
    out = {}
    for cx, cz in r.chunk_positions(-1, -1):
        out[(cx, cz)] = r.read_chunk(cx, cz)
    r.close()
    return out


def test_write_into_vanilla_chunks_keeps_everything_else(vanilla_copy, registry, fixtures_dir):
    region_path = vanilla_copy / "region" / "r.-1.-1.mca"
    before_raw = _raw_chunks(region_path)
    w = World(vanilla_copy, registry)
    full = [c for c in sorted(before_raw) if w.chunk(*c).is_full]
    proto = [c for c in sorted(before_raw) if not w.chunk(*c).is_full]
    # two full chunks, one with block entities if the fixture has any
    with_be = [c for c in full if len(w.chunk(*c).root.get("block_entities") or []) > 0]
    assert with_be, "the vanilla fixture has a full chunk with a chest and a spawner"
    targets = [with_be[0]] + [c for c in full if c not in with_be][:1]
    assert len(targets) == 2
    entries = []
    rng = random.Random(7)
    bes = set()
    for cx, cz in targets:
        bes |= w.chunk(cx, cz).block_entity_positions()
        for _ in range(40):
            x, y, z = cx * 16 + rng.randrange(16), rng.randrange(-60, 200), cz * 16 + rng.randrange(16)
            if (x, y, z) in bes or any(e[:3] == (x, y, z) for e in entries):
                continue
            entries.append((x, y, z, w.get_block(x, y, z), "minecraft:emerald_block"))
    host = Host(w)
    res = host.batch_apply(
        world_pb2.BatchApplyParams(
            batch_id="fx-1",
            world_epoch=w.meta.epoch,
            entries=[world_pb2.BatchEntry(x=x, y=y, z=z, expected=e, desired=d) for x, y, z, e, d in entries],
        )
    )
    assert res.status == "applied" and res.written == len(entries)
    # a proto-chunk refuses writes
    px, pz = proto[0]
    with pytest.raises(McbError) as ei:
        host.batch_apply(
            world_pb2.BatchApplyParams(
                batch_id="fx-2",
                world_epoch=w.meta.epoch,
                entries=[
                    world_pb2.BatchEntry(
                        x=px * 16,
                        y=100,
                        z=pz * 16,
                        expected=w.get_block(px * 16, 100, pz * 16),
                        desired="minecraft:stone",
                    )
                ],
            )
        )
    assert "proto" in ei.value.message and ei.value.details["protoChunks"] == [[px, pz]]
    w.close()

    after_raw = _raw_chunks(region_path)
    assert set(after_raw) == set(before_raw)
    # every other chunk (including every proto-chunk) is byte-identical
    for key in before_raw:
        if key not in targets:
            assert after_raw[key] == before_raw[key], key
    written = {(x, y, z) for x, y, z, _, _ in entries}
    theirs_before = indie.open_region(fixtures_dir / "world" / "minestom_vanilla_1.21.11" / "region" / "r.-1.-1.mca")
    theirs_after = indie.open_region(region_path)
    for cx, cz in targets:
        old, new = nbt.read(before_raw[(cx, cz)]), nbt.read(after_raw[(cx, cz)])
        # everything outside sections/heightmaps/light is unchanged
        for k in old:
            if k not in ("sections", "Heightmaps", "isLightOn"):
                assert new[k] == old[k], k
        assert new["Heightmaps"] == {} and new["isLightOn"] == 0
        assert [int(s["Y"]) for s in new["sections"]] == [int(s["Y"]) for s in old["sections"]]
        for so, sn in zip(old["sections"], new["sections"], strict=True):
            assert sn.get("biomes") == so.get("biomes")
        ib, ia = indie.chunk(theirs_before, cx, cz), indie.chunk(theirs_after, cx, cz)
        assert [(t["x"].value, t["y"].value, t["z"].value, str(t["id"].value)) for t in ia.tile_entities] == [
            (t["x"].value, t["y"].value, t["z"].value, str(t["id"].value)) for t in ib.tile_entities
        ]
        for sy in range(-4, 20):
            a, b = indie.section_blocks(ib, sy), indie.section_blocks(ia, sy)
            for i in range(4096):
                pos = (cx * 16 + (i & 15), sy * 16 + (i >> 8), cz * 16 + ((i >> 4) & 15))
                if pos in written:
                    assert b[i] == "minecraft:emerald_block", pos
                else:
                    assert b[i] == a[i], pos


def test_region_copy_of_other_fixtures_accepts_writes(fixtures_dir, registry, tmp_path):
    """querz 21w44a (DataVersion 2845): a full 1.18 chunk written and re-read independently."""
    src = fixtures_dir / "world" / "querz_21w44a" / "region" / "r.15.-9.mca"
    dst = tmp_path / "r.15.-9.mca"
    shutil.copyfile(src, dst)
    dst.chmod(0o644)
    r = RegionFile(dst)
    ((cx, cz),) = r.chunk_positions(15, -9)
    c = Chunk(cx, cz, nbt.read(r.read_chunk(cx, cz)), registry, -4, 19)
    assert c.is_full
    x, z = cx * 16 + 3, cz * 16 + 5
    keep = c.get_block(x + 1, 0, z)
    c.set_block(x, 0, z, "minecraft:gold_block")
    r.write_chunk(cx, cz, c.encode())
    r.close()
    ich = indie.chunk(indie.open_region(dst), cx, cz)
    assert indie.get(ich, x, 0, z) == "minecraft:gold_block"
    assert indie.matches(keep, indie.get(ich, x + 1, 0, z))
    assert zlib.decompress  # zlib is what we write (type 2)
