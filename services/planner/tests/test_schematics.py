"""The planner's schematic import/export: write sets like Compile, refusals, the gRPC mapping."""

from __future__ import annotations

import numpy as np
import pytest
from mcb.common.v1 import common_pb2
from mcb.planner.v1 import planner_pb2
from mcb_common import schematic as S
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_planner.compile import Limits
from mcb_planner.schematics import export_schematic, import_schematic
from mcb_planner.servicer import export_request, import_request

STAIRS = "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]"


def _file(offset=(0, 0, 0), version=3) -> bytes:
    pal = ["minecraft:stone", "minecraft:air", STAIRS]
    idx = [0, 1, 2, 0, 0, 0, 1, 1, 2, 2, 0, 1]  # 3 x 2 x 2
    return S.write_bytes(S.from_region((3, 2, 2), pal, idx, offset=offset, data_version=4671), version)


def test_import_is_a_sorted_write_set() -> None:
    r = import_schematic(_file(offset=(1, 0, 0)), target=Vec3(10, 64, 10), rotation=0)
    c = r.compiled
    assert len(c) == 12 and c.bounds == Box(Vec3(11, 64, 10), Vec3(13, 65, 11))
    keys = [(y, z, x) for x, y, z in c.xyz.tolist()]
    assert keys == sorted(keys)
    assert dict(c.materials) == {"minecraft:stone": 5, "minecraft:air": 4, STAIRS: 3}
    assert any("air" in w for w in c.warnings)
    assert c.blocks()[(13, 64, 10)] == STAIRS


def test_rotation_changes_hash_positions_and_states() -> None:
    a = import_schematic(_file(), target=Vec3(0, 64, 0), rotation=0).compiled
    b = import_schematic(_file(), target=Vec3(0, 64, 0), rotation=90).compiled
    assert a.recipe_hash != b.recipe_hash
    assert b.bounds == Box(Vec3(-1, 64, 0), Vec3(0, 65, 2))
    assert b.blocks()[(0, 64, 2)].startswith("minecraft:oak_stairs[facing=east")


def test_area_heights_and_limits() -> None:
    area = Box(Vec3(0, 0, 0), Vec3(10, 100, 10))
    with pytest.raises(McbError) as ei:
        import_schematic(_file(), target=Vec3(9, 64, 9), area=area)
    assert ei.value.code == ErrorCode.OUT_OF_BOUNDS and "build area" in ei.value.message
    with pytest.raises(McbError) as ei:
        import_schematic(_file(), target=Vec3(0, 319, 0))
    assert ei.value.code == ErrorCode.OUT_OF_BOUNDS
    with pytest.raises(McbError) as ei:
        import_schematic(_file(), target=Vec3(0, 64, 0), limits=Limits.of(max_changed_blocks=5))
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED
    with pytest.raises(McbError) as ei:
        import_schematic(_file(), target=Vec3(0, 64, 0), rotation=45)
    assert ei.value.code == ErrorCode.INVALID_REQUEST
    with pytest.raises(McbError) as ei:
        import_schematic(_file(), target=Vec3(0, 64, 0), world_data_version=3700)
    assert ei.value.code == ErrorCode.VERSION_MISMATCH


def test_grpc_mapping_round_trip() -> None:
    req = planner_pb2.ImportSchematicRequest(
        data=_file(version=2),
        kind="schem",
        target=common_pb2.Vec3(x=5, y=70, z=5),
        rotation=180,
        minecraft_version="1.21.11",
        world_data_version=4671,
    )
    resp = import_request(req)
    assert len(resp.compiled.write_set.state) == 12 and resp.format == "sponge-v2" and resp.data_version == 4671
    # export what was imported: the dense box, then read it back
    ws = resp.compiled.write_set
    xyz = np.array(ws.xyz).reshape(-1, 3)
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    size = hi - lo + 1
    idx = np.zeros(int(size.prod()), dtype="<u2")
    for (x, y, z), s in zip(xyz.tolist(), ws.state, strict=True):
        idx[((y - lo[1]) * size[2] + (z - lo[2])) * size[0] + (x - lo[0])] = s
    out = export_request(
        planner_pb2.ExportSchematicRequest(
            width=int(size[0]),
            height=int(size[1]),
            length=int(size[2]),
            palette=list(ws.palette),
            indices=idx.tobytes(),
            offset=common_pb2.Vec3(x=0, y=0, z=0),
            data_version=4671,
            name="x",
        )
    )
    back = S.read_bytes(out.data)
    assert back.format == "sponge-v3" and back.name == "x" and back.volume == 12


def test_export_validates_input() -> None:
    with pytest.raises(McbError):
        export_schematic((2, 1, 1), ["minecraft:stone"], b"\x00\x00", offset=(0, 0, 0), data_version=1)
    with pytest.raises(McbError):
        export_schematic((1, 1, 1), ["minecraft:stone"], b"\x05\x00", offset=(0, 0, 0), data_version=1)
