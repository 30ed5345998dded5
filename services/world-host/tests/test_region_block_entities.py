"""region_read lists the block entities inside the box (schematic export refuses them)."""

from __future__ import annotations

import pytest
from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_world_host.host import Host
from mcb_world_host.world import World

pytestmark = pytest.mark.fixtures


def test_region_read_reports_block_entities(vanilla_copy, registry):
    w = World(vanilla_copy, registry)
    try:
        host = Host(w)
        assert "region_read.block_entities" in host.world_info(world_pb2.Empty()).capabilities
        found = []
        for cx, cz in w.existing_chunks():
            for be in w.chunk(cx, cz).root.get("block_entities") or ():
                found.append((int(be["x"]), int(be["y"]), int(be["z"]), str(be["id"])))
        assert len(found) == 3, found
        x, y, z, bid = found[0]
        res = host.region_read(
            world_pb2.RegionReadParams(
                min=common_pb2.Vec3(x=x - 1, y=y - 1, z=z - 1), max=common_pb2.Vec3(x=x + 1, y=y + 1, z=z + 1)
            )
        )
        assert [(b.x, b.y, b.z, b.id) for b in res.block_entities] == [(x, y, z, bid)]
        # a box beside it reports none
        res = host.region_read(
            world_pb2.RegionReadParams(min=common_pb2.Vec3(x=x + 1, y=y, z=z), max=common_pb2.Vec3(x=x + 1, y=y, z=z))
        )
        assert list(res.block_entities) == [] or all((b.x, b.y, b.z) != (x, y, z) for b in res.block_entities)
    finally:
        w.close()
