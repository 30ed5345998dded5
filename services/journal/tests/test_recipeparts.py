"""build_prepare attaches the parts a recipe pastes (and only parts of the caller's project)."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.projects import Caller
from mcb_journal.recipeparts import part_ids
from mcb_planner.servicer import compile_request

from services.journal.tests.test_plan_summary_size import EventsJson

STAIRS = "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]"


class AirWorld(EventsJson):
    async def world_info(self):
        return world_pb2.WorldInfo(world_uuid="w-1", epoch=1, minecraft_version="1.21.11")

    async def call(self, method, params, result_type):
        if method == "region_read":
            lo, hi = params.min, params.max
            n = (hi.x - lo.x + 1) * (hi.y - lo.y + 1) * (hi.z - lo.z + 1)
            return world_pb2.RegionReadResult(palette=["minecraft:air"], indices=bytes(2 * n))
        if method == "events_since":  # host instance "h", where nobody changes a block: an empty, complete page
            return world_pb2.EventsSinceResult(next_cursor=params.cursor or "h:0", complete=True)
        return world_pb2.BlocksGetResult(palette=["minecraft:air"], state=[0] * (len(params.xyz) // 3))


class InProcessPlanner:
    async def compile(self, req):
        return compile_request(req)


@pytest.fixture
def core(tmp_path):
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=AirWorld(),
        planner=InProcessPlanner(),
        queue=None,
    )
    area = {"min": {"x": -100, "y": -64, "z": -100}, "max": {"x": 100, "y": 319, "z": 100}}
    c.projects.load(
        [
            {"project_id": "p", "owner_player_id": "alice", "area": area},
            {"project_id": "q", "owner_player_id": "bob", "area": area},
        ]
    )
    generated = {"5,64,5": "minecraft:stone", "6,64,5": STAIRS, "5,65,5": "minecraft:stone"}
    doc = {"positions": sorted([[int(v) for v in k.split(",")] for k in generated]), "generated": generated}
    sha = c.blobs.put(json.dumps(doc, sort_keys=True).encode())
    with c.db.tx() as t:
        for pid, proj in (("pt_mine", "p"), ("pt_theirs", "q")):
            t.execute(
                "INSERT INTO parts(part_id, project_id, name, op_id, protected, bounds_json, count,"
                " mask_sha256, observed_at_define, created_ms) VALUES (?,?,?,?,0,?,?,?,0,0)",
                (pid, proj, pid, "op_x", "{}", 3, sha),
            )
    return c


def paste(part: str, at=(20, 64, 20), rotation=0) -> str:
    return json.dumps(
        {
            "version": 1,
            "operations": [
                {
                    "type": "transform",
                    "translate": {"x": 0, "y": 0, "z": 0},
                    "operations": [
                        {"type": "paste", "part": part, "at": dict(zip("xyz", at, strict=True)), "rotation": rotation}
                    ],
                }
            ],
        }
    )


def test_part_ids_are_found_at_any_depth_and_bad_json_finds_none():
    assert part_ids(paste("pt_a")) == ["pt_a"]
    assert part_ids("{not json") == []
    assert part_ids(json.dumps({"operations": [{"type": "paste", "asset": "x"}]})) == []


def test_part_ids_are_the_pastes_the_planner_parses():
    """Found with the planner's syntax walk (mcb_common.recipe_syntax): pastes inside any container,
    not a paste-shaped object where no operation can stand (the planner refuses such a recipe)."""
    box = {"type": "box", "min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 0, "y": 64, "z": 0}, "block": "stone"}
    doc = {
        "version": 1,
        "params": {"n": {"type": "paste", "part": "pt_in_params"}},
        "operations": [
            {"type": "foundation", "block": "stone", "operations": [{"type": "paste", "part": "pt_f", "at": {}}]},
            {"type": "repeat", "count": 2, "offset": {}, "operations": [{"type": "paste", "part": "pt_r", "at": {}}]},
            {"type": "repaet", "operations": [{"type": "paste", "part": "pt_under_a_typo", "at": {}}]},
            {**box, "hollow": {"type": "paste", "part": "pt_as_a_value"}},
            {"type": "paste", "part": "pt_f", "at": {}},
        ],
    }
    assert part_ids(json.dumps(doc)) == ["pt_f", "pt_r"]


def test_a_pasted_part_reaches_the_planner_and_the_plan(core):
    summary = asyncio.run(
        core.prepare.build_prepare(Caller("agent", "p", "alice"), jpb.BuildPrepareRequest(recipe_json=paste("pt_mine")))
    )
    assert summary.changed_blocks == 3
    plan = core.load_plan(summary.plan_id)
    got = {tuple(plan.xyz[3 * i : 3 * i + 3]): plan.palette[d] for i, d in enumerate(plan.desired)}
    assert got == {(20, 64, 20): "minecraft:stone", (21, 64, 20): STAIRS, (20, 65, 20): "minecraft:stone"}


def test_a_part_of_another_project_is_not_found(core):
    with pytest.raises(McbError) as ei:
        asyncio.run(
            core.prepare.build_prepare(
                Caller("agent", "p", "alice"), jpb.BuildPrepareRequest(recipe_json=paste("pt_theirs"))
            )
        )
    assert ei.value.code == ErrorCode.NOT_FOUND and "pt_theirs" in ei.value.message
