"""Reading block states from the world host for a set of positions.

Dense sets (the bounding box is at most 4× the set) use ``region_read`` (compact uint16
indices); sparse sets use ``blocks_get`` in pages. Either way the host never generates
chunks: missing ones come back as ``not_found`` naming them.
"""

from __future__ import annotations

from array import array

from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_common.blockinfo import BlockInfo
from mcb_common.geometry import Box, Vec3
from mcb_rpc.worldclient import WorldClient

REGION_READ_MAX = 2_097_152
BLOCKS_GET_PAGE = 32_768


def bounds_of(xyz: list[int]) -> Box:
    xs, ys, zs = xyz[0::3], xyz[1::3], xyz[2::3]
    return Box(Vec3(min(xs), min(ys), min(zs)), Vec3(max(xs), max(ys), max(zs)))


async def read_region(world: WorldClient, box: Box) -> tuple[list[str], array]:
    """Palette and uint16 indices (YZX order) for every position of ``box``."""
    params = world_pb2.RegionReadParams(
        min=common_pb2.Vec3(x=box.min.x, y=box.min.y, z=box.min.z),
        max=common_pb2.Vec3(x=box.max.x, y=box.max.y, z=box.max.z),
    )
    res = await world.call("region_read", params, world_pb2.RegionReadResult)
    idx = array("H")
    idx.frombytes(res.indices)
    if idx.itemsize != 2:  # pragma: no cover - array('H') is 2 bytes on every supported platform
        raise RuntimeError("uint16 array has unexpected item size")
    import sys

    if sys.byteorder == "big":  # pragma: no cover
        idx.byteswap()
    return list(res.palette), idx


async def read_states(world: WorldClient, xyz: list[int]) -> list[str]:
    """Current state of each position (``xyz`` flat, 3 ints per position)."""
    n = len(xyz) // 3
    if n == 0:
        return []
    box = bounds_of(xyz)
    if box.volume <= max(4 * n, 4096) and box.volume <= REGION_READ_MAX:
        palette, idx = await read_region(world, box)
        sx, sz = box.size.x, box.size.z
        mx, my, mz = box.min.x, box.min.y, box.min.z
        out = []
        for i in range(n):
            x, y, z = xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]
            out.append(palette[idx[((y - my) * sz + (z - mz)) * sx + (x - mx)]])
        # region_read gives block states only; blocks_get gives full states, with the block
        # entity's data (chest contents, sign text …: mcb_common.blockentity) — re-read those.
        info = BlockInfo.load()
        furnished = {s for s in palette if info.block_entity(s) is not None}
        if furnished:
            which = [i for i in range(n) if out[i] in furnished]
            full = await _blocks_get(world, [c for i in which for c in xyz[3 * i: 3 * i + 3]])
            for i, s in zip(which, full, strict=True):
                out[i] = s
        return out
    return await _blocks_get(world, xyz)


async def _blocks_get(world: WorldClient, xyz: list[int]) -> list[str]:
    n = len(xyz) // 3
    out: list[str] = []
    for start in range(0, n, BLOCKS_GET_PAGE):
        page = xyz[3 * start: 3 * min(n, start + BLOCKS_GET_PAGE)]
        res = await world.call("blocks_get", world_pb2.BlocksGetParams(xyz=page), world_pb2.BlocksGetResult)
        pal = list(res.palette)
        out.extend(pal[s] for s in res.state)
    return out
