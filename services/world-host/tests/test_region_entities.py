"""region_read lists the entities inside the box, read from <world>/entities/r.X.Z.mca (1.17+).

The entity files are written here with our own NBT codec and region writer (the host itself
only ever opens them read-only): one compound per chunk with ``DataVersion``,
``Position [I; cx, cz]`` and ``Entities`` (each with ``id``, ``Pos`` as 3 doubles, ``UUID``
as 4 ints), as documented for the 1.17+ entity chunk format (docs/world-format.md).
"""

from __future__ import annotations

import hashlib
import uuid

import pytest
from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_common import nbt
from mcb_world_host.host import Host
from mcb_world_host.region import RegionFile, region_name
from mcb_world_host.world import World

UUIDS = {
    name: uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.mcb.test")
    for name in ("stand", "frame", "pig", "pig_edge", "chicken", "zombie", "item", "far")
}


def vec(x, y, z):
    return common_pb2.Vec3(x=x, y=y, z=z)


def entity(eid: str, pos: tuple[float, float, float], key: str, **extra) -> nbt.Compound:
    n = UUIDS[key].int
    ints = [((n >> s) & 0xFFFFFFFF) for s in (96, 64, 32, 0)]
    ints = [i - (1 << 32) if i >= 1 << 31 else i for i in ints]
    e = nbt.Compound(
        id=nbt.String(eid),
        Pos=nbt.List(nbt.DOUBLE, [nbt.Double(v) for v in pos]),
        Motion=nbt.List(nbt.DOUBLE, [nbt.Double(0.0)] * 3),
        Rotation=nbt.List(nbt.FLOAT, [nbt.Float(0.0)] * 2),
        UUID=nbt.IntArray(ints),
    )
    e.update(extra)
    return e


def write_entity_chunks(world_dir, chunks: dict[tuple[int, int], list[nbt.Compound]]) -> None:
    by_region: dict[tuple[int, int], dict] = {}
    for (cx, cz), ents in chunks.items():
        by_region.setdefault((cx >> 5, cz >> 5), {})[(cx, cz)] = ents
    for (rx, rz), group in by_region.items():
        r = RegionFile(world_dir / "entities" / region_name(rx, rz), create=True)
        try:
            for (cx, cz), ents in group.items():
                root = nbt.Compound(
                    DataVersion=nbt.Int(4671), Position=nbt.IntArray([cx, cz]), Entities=nbt.List(nbt.COMPOUND, ents)
                )
                r.write_chunk(cx, cz, nbt.write(root))
        finally:
            r.close()


@pytest.fixture
def world(tmp_path, registry):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-32, -32, 47, 47))
    yield w
    w.close()


def read(host, lo, hi):
    return host.region_read(world_pb2.RegionReadParams(min=vec(*lo), max=vec(*hi)))


def test_region_read_reports_entities_inside_the_box(world):
    rider = entity("minecraft:zombie", (1.5, 65.2, -2.5), "zombie", IsBaby=nbt.Byte(1))
    write_entity_chunks(
        world.path,
        {
            (0, 0): [
                entity("minecraft:armor_stand", (2.5, 64.0, 3.5), "stand"),
                entity("minecraft:item_frame", (4.96875, 65.5, 2.5), "frame", Facing=nbt.Byte(4)),
                entity("minecraft:pig", (8.0, 64.0, 3.5), "pig_edge"),
            ],  # x = 8.0 is block 8: outside
            (2, 2): [entity("minecraft:pig", (40.5, 64.0, 40.5), "pig")],  # another chunk, outside
            (0, -1): [
                entity("minecraft:chicken", (1.5, 64.0, -2.5), "chicken", Passengers=nbt.List(nbt.COMPOUND, [rider]))
            ],
            (-1, 0): [
                entity("minecraft:item", (-0.25, 64.0, 0.75), "item"),  # floor(-0.25) = -1: inside
                entity("minecraft:cow", (-4.5, 64.0, 0.5), "far"),
            ],  # block -5: outside
        },
    )
    files = sorted((world.path / "entities").iterdir())
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}

    host = Host(world)
    assert "region_read.entities" in host.world_info(world_pb2.Empty()).capabilities
    res = read(host, (-4, 60, -4), (7, 70, 7))
    got = [(e.id, e.x, e.y, e.z, e.uuid) for e in res.entities]
    assert got == [  # sorted by (y, z, x, id)
        ("minecraft:chicken", 1.5, 64.0, -2.5, str(UUIDS["chicken"])),
        ("minecraft:item", -0.25, 64.0, 0.75, str(UUIDS["item"])),
        ("minecraft:armor_stand", 2.5, 64.0, 3.5, str(UUIDS["stand"])),
        ("minecraft:zombie", 1.5, 65.2, -2.5, str(UUIDS["zombie"])),  # a rider is listed too
        ("minecraft:item_frame", 4.96875, 65.5, 2.5, str(UUIDS["frame"])),
    ], got
    assert res.entities_total == 5
    assert "minecraft:pig" not in {e.id for e in res.entities}

    # the pig's own box finds it; a box in a chunk without entities finds none
    assert [e.id for e in read(host, (40, 64, 40), (40, 64, 40)).entities] == ["minecraft:pig"]
    assert list(read(host, (20, 60, 20), (30, 70, 30)).entities) == []
    # a box above the armor stand's feet does not list it
    assert "minecraft:armor_stand" not in {e.id for e in read(host, (2, 65, 3), (2, 70, 3)).entities}

    # read-only: the entity files are byte-identical and nothing else appeared
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((world.path / "entities").iterdir())}
    assert after == before


def test_no_entity_files_means_no_entities(world):
    host = Host(world)
    res = read(host, (0, 60, 0), (15, 70, 15))
    assert list(res.entities) == [] and res.entities_total == 0
    assert not (world.path / "entities").exists(), "reading never creates the entities folder"
    # an empty (0-byte) entity region file, as the game sometimes leaves, is read as empty and left as it is
    (world.path / "entities").mkdir()
    empty = world.path / "entities" / region_name(0, 0)
    empty.write_bytes(b"")
    assert list(read(host, (0, 60, 0), (15, 70, 15)).entities) == []
    assert empty.stat().st_size == 0


def test_old_uuid_longs_are_read(world):
    e = nbt.Compound(
        id=nbt.String("minecraft:armor_stand"),
        Pos=nbt.List(nbt.DOUBLE, [nbt.Double(1.5), nbt.Double(64.0), nbt.Double(1.5)]),
        UUIDMost=nbt.Long(-1),
        UUIDLeast=nbt.Long(5),
    )
    write_entity_chunks(world.path, {(0, 0): [e]})
    res = read(Host(world), (0, 64, 0), (3, 64, 3))
    assert [x.uuid for x in res.entities] == [str(uuid.UUID(int=((2**64 - 1) << 64) | 5))]
