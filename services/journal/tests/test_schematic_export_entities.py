"""schematic_export refuses a box holding entities, with the list (block entities are exported
with their contents since issue 31 item 9: tests/e2e/test_schematic_furniture_e2e.py).

The world is a stand-in answering ``world_info`` and ``region_read`` (an all-stone box plus
whatever entities the test puts there); the planner stand-in writes the file with
mcb_common.schematic, as the planner service does.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np
import pytest
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb.world.v1 import world_pb2
from mcb_common import schematic as S
from mcb_common.assets import AssetLibrary
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_journal import schematics
from mcb_journal.core import Limits
from mcb_journal.projects import Caller, Project

CAPS = ["region_read", "region_read.block_entities", "region_read.entities"]


class FakeWorld:
    def __init__(self, entities=(), block_entities=(), caps=CAPS, listed=1000):
        self.entities = list(entities)  # (id, x, y, z)
        self.block_entities = list(block_entities)  # (x, y, z, id)
        self.caps = list(caps)
        self.listed = listed

    async def world_info(self):
        return world_pb2.WorldInfo(data_version=4671, capabilities=self.caps)

    async def call(self, method, params, result_type):
        assert method == "region_read"
        lo, hi = params.min, params.max
        n = (hi.x - lo.x + 1) * (hi.y - lo.y + 1) * (hi.z - lo.z + 1)
        inside = [
            e
            for e in self.entities
            if lo.x <= np.floor(e[1]) <= hi.x and lo.y <= np.floor(e[2]) <= hi.y and lo.z <= np.floor(e[3]) <= hi.z
        ]
        res = world_pb2.RegionReadResult(
            min=lo,
            max=hi,
            palette=["minecraft:air", "minecraft:stone"],
            indices=np.ones(n, "<u2").tobytes(),
            block_entities=[
                world_pb2.BlockEntityRef(x=x, y=y, z=z, id=i)
                for x, y, z, i in self.block_entities
                if lo.x <= x <= hi.x and lo.y <= y <= hi.y and lo.z <= z <= hi.z
            ],
        )
        if "region_read.entities" in self.caps:
            res.entities.extend(world_pb2.EntityInfo(id=i, x=x, y=y, z=z) for i, x, y, z in inside[: self.listed])
            res.entities_total = len(inside)
        return res


class FakePlanner:
    def __init__(self):
        self.calls = 0

    async def export_schematic(self, req: planner_pb2.ExportSchematicRequest):
        self.calls += 1
        s = S.from_region(
            (req.width, req.height, req.length),
            list(req.palette),
            np.frombuffer(req.indices, "<u2").tolist(),
            offset=(req.offset.x, req.offset.y, req.offset.z),
            data_version=req.data_version,
            name=req.name,
        )
        return planner_pb2.ExportSchematicResponse(data=S.write_bytes(s, req.format_version or 3))


@dataclass
class FakeCore:
    world: FakeWorld
    assets: AssetLibrary
    planner: FakePlanner = field(default_factory=FakePlanner)
    limits: Limits = field(default_factory=Limits)

    @property
    def projects(self):
        return self

    def project_for(self, caller):
        return Project("p", "p", "owner", Box(Vec3(-100, -64, -100), Vec3(100, 319, 100)))


CALLER = Caller("agent", "p", "owner")


def export(core, name, lo, hi):
    req = jpb.SchematicExportRequest(
        name=name, min=common_pb2.Vec3(x=lo[0], y=lo[1], z=lo[2]), max=common_pb2.Vec3(x=hi[0], y=hi[1], z=hi[2])
    )
    return asyncio.run(schematics.schematic_export(core, CALLER, req))


def test_entities_in_the_box_are_refused_with_the_list(tmp_path):
    world = FakeWorld(
        entities=[
            ("minecraft:armor_stand", 2.5, 64.0, 3.5),
            ("minecraft:item_frame", 4.96875, 65.5, 2.5),
            ("minecraft:pig", 40.5, 64.0, 40.5),
        ]
    )
    core = FakeCore(world, AssetLibrary(tmp_path / "assets"))
    with pytest.raises(McbError) as ei:
        export(core, "house", (0, 64, 0), (7, 70, 7))
    e = ei.value
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK
    assert "2 entities" in e.message and "minecraft:armor_stand" in e.message
    assert e.details["entities_count"] == 2
    assert e.details["entities"] == [
        {"id": "minecraft:armor_stand", "pos": {"x": 2.5, "y": 64.0, "z": 3.5}},
        {"id": "minecraft:item_frame", "pos": {"x": 4.96875, "y": 65.5, "z": 2.5}},
    ]
    assert "block_entities" not in e.details
    assert core.planner.calls == 0 and not (tmp_path / "assets" / "house.schem").exists()

    # a box beside them exports; players are never exported (hosts never report them)
    entry = export(core, "beside", (10, 64, 10), (12, 66, 12))
    assert entry["asset_id"] == "beside" and entry["width"] == 3 and core.planner.calls == 1
    assert entry["warnings"] == ["players are never exported"]


def test_the_list_holds_20_and_the_total_counts_all(tmp_path):
    many = [("minecraft:item", 0.5 + i % 8, 64.0, 0.5 + i // 8) for i in range(30)]
    core = FakeCore(FakeWorld(entities=many, listed=25), AssetLibrary(tmp_path / "assets"))
    with pytest.raises(McbError) as ei:
        export(core, "farm", (0, 64, 0), (7, 64, 7))
    assert len(ei.value.details["entities"]) == 20 and ei.value.details["entities_count"] == 30
    assert "30 entities" in ei.value.message


def test_entities_are_refused_block_entities_are_not(tmp_path):
    world = FakeWorld(
        entities=[("minecraft:armor_stand", 2.5, 64.0, 3.5)], block_entities=[(1, 64, 1, "minecraft:chest")]
    )
    core = FakeCore(world, AssetLibrary(tmp_path / "assets"))
    with pytest.raises(McbError) as ei:
        export(core, "house", (0, 64, 0), (7, 70, 7))
    e = ei.value
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK
    assert "1 entities" in e.message and "block entit" not in e.message
    assert "block_entities" not in e.details and e.details["entities_count"] == 1


def test_a_host_without_entity_reports_warns(tmp_path):
    world = FakeWorld(
        entities=[("minecraft:armor_stand", 2.5, 64.0, 3.5)], caps=["region_read", "region_read.block_entities"]
    )
    core = FakeCore(world, AssetLibrary(tmp_path / "assets"))
    entry = export(core, "house", (0, 64, 0), (7, 70, 7))
    assert any("does not report entities" in w for w in entry["warnings"])
