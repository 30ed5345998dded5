"""ACCEPTANCE 14: the plan summary the model sees stays a few KB from 10 to 100,000 blocks.

Runs the journal core's real build_prepare (planner compiled in-process, a fake world host
that answers region reads with air) and renders the answer the way the bridge does.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.projects import Caller
from mcb_planner.servicer import compile_request
from mcb_rpc import pbjson

COLOURS = [
    "white",
    "orange",
    "magenta",
    "light_blue",
    "yellow",
    "lime",
    "pink",
    "gray",
    "light_gray",
    "cyan",
    "purple",
    "blue",
    "brown",
    "green",
    "red",
    "black",
]


class EventsJson:
    """A fake world's ``call_json`` (the observer reads events_since pages in their JSON form):
    the JSON of what its ``call`` answers."""

    async def world_info(self):  # a host before events_since.runs (the Java hosts)
        return world_pb2.WorldInfo(world_uuid="w-1", epoch=1, minecraft_version="1.21.11")

    async def call_json(self, method, params):  # the observer's events_since: the JSON form
        assert method == "events_since"
        # a host that does not list events_since.runs may refuse the field: the Java hosts parse params with
        # protobuf-java's JsonFormat.parser() (paper-plugin/core/.../RpcServer.java), which refuses unknown
        # fields unless ignoringUnknownFields() is set (protobuf-java util, JsonFormat.Parser)
        assert not params.runs, "runs asked of a host that does not list events_since.runs"
        return pbjson.to_json(await self.call(method, params, world_pb2.EventsSinceResult))


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
        assert method == "blocks_get"
        return world_pb2.BlocksGetResult(palette=["minecraft:air"], state=[0] * (len(params.xyz) // 3))


class InProcessPlanner:
    async def compile(self, req):
        return compile_request(req)


MATERIALS = (
    [f"minecraft:{c}_wool" for c in COLOURS]
    + [f"minecraft:{c}_concrete" for c in COLOURS]
    + [f"minecraft:{c}_terracotta" for c in COLOURS[:8]]
)  # 40 materials


def recipe(side: int) -> str:
    """40 layers of side × side blocks, one material per layer (side 0: a 10-block line)."""
    if side == 0:
        ops = [
            {"type": "line", "from": {"x": i, "y": 64, "z": 0}, "to": {"x": i, "y": 64, "z": 0}, "block": MATERIALS[i]}
            for i in range(10)
        ]
    else:
        ops = [
            {
                "type": "box",
                "min": {"x": 0, "y": 64 + i, "z": 0},
                "max": {"x": side - 1, "y": 64 + i, "z": side - 1},
                "block": m,
            }
            for i, m in enumerate(MATERIALS)
        ]
    return json.dumps({"version": 1, "operations": ops})


@pytest.fixture
def core(tmp_path):
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=AirWorld(),
        planner=InProcessPlanner(),
        queue=None,
    )
    c.projects.load(
        [
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": -200, "y": -64, "z": -200}, "max": {"x": 200, "y": 319, "z": 200}},
            }
        ]
    )
    return c


@pytest.mark.parametrize("side, blocks", [(0, 10), (5, 1000), (16, 10_240), (50, 100_000)])
def test_summary_size_is_bounded_from_10_to_100k_blocks(core, side, blocks):
    from mcb_bridge import render

    caller = Caller("agent", "p", "alice")
    summary = asyncio.run(core.prepare.build_prepare(caller, jpb.BuildPrepareRequest(recipe_json=recipe(side))))
    assert summary.total_positions == summary.changed_blocks == blocks
    text = json.dumps(render.plan_summary(summary), separators=(",", ":"))
    wire = len(summary.SerializeToString())
    print(f"{blocks:>7} blocks: rendered {len(text)} bytes, proto {wire} bytes")
    assert len(text) < 4096 and wire < 4096
    assert len(summary.materials) == min(32, 10 if side == 0 else 40)
