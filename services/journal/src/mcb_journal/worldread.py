"""Reading block states from the world host for a set of positions.

Dense sets (the bounding box is at most 4× the set) use ``region_read`` (compact uint16
indices); sparse sets use ``blocks_get`` in pages. Either way the host never generates
chunks: missing ones come back as ``not_found`` naming them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Protocol, TypeVar

import numpy as np
from google.protobuf.message import Message
from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_common.blockinfo import BlockInfo
from mcb_common.geometry import Box, Vec3

M = TypeVar("M", bound=Message)


class WorldReader(Protocol):
    """The world host as these reads need it (``mcb_rpc.worldclient.WorldClient`` is one): the
    rules here never import a transport (the import contract in pyproject.toml)."""

    async def call(self, method: str, params: Message, result: type[M]) -> M: ...


REGION_READ_MAX = 2_097_152
BLOCKS_GET_PAGE = 32_768


async def read_region(world: WorldReader, box: Box) -> tuple[list[str], array]:
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


async def read_states(world: WorldReader, xyz: list[int]) -> list[str]:
    """Current state of each position (``xyz`` flat, 3 ints per position)."""
    palette, idx = await read_indexed(world, xyz)
    return [palette[i] for i in idx.tolist()]


async def read_indexed(world: WorldReader, xyz: list[int]) -> tuple[list[str], np.ndarray]:
    """Current state of each position as (palette, int64 index per position): the states of
    ``read_states`` without a Python string per position (large write sets)."""
    n = len(xyz) // 3
    if n == 0:
        return [], np.zeros(0, dtype=np.int64)
    a = np.asarray(xyz, dtype=np.int64).reshape(n, 3)
    lo, hi = a.min(axis=0).tolist(), a.max(axis=0).tolist()
    box = Box(Vec3(*lo), Vec3(*hi))
    if box.volume <= max(4 * n, 4096) and box.volume <= REGION_READ_MAX:
        palette, region = await read_region(world, box)
        sx, sz = box.size.x, box.size.z
        offsets = ((a[:, 1] - lo[1]) * sz + (a[:, 2] - lo[2])) * sx + (a[:, 0] - lo[0])
        out = np.frombuffer(region, dtype=np.uint16)[offsets].astype(np.int64)
        if len(palette) and int(out.max()) >= len(palette):
            raise IndexError("region_read index outside its palette")
        palette, out = await with_full_states(world, palette, out, lambda which: a[which])
        return palette, out
    states = await _blocks_get(world, xyz if isinstance(xyz, list) else a.ravel().tolist())
    index = {s: i for i, s in enumerate(dict.fromkeys(states))}  # first occurrence order
    return list(index), np.array([index[s] for s in states], dtype=np.int64)


async def with_full_states(
    world: WorldReader, palette: list[str], out: np.ndarray, xyz_of: Callable[[np.ndarray], np.ndarray]
) -> tuple[list[str], np.ndarray]:
    """region_read gives block states only; blocks_get gives full states, with the block entity's
    data (chest contents, sign text …: mcb_common.blockentity) — re-read the positions whose
    block carries a block entity. ``out``: palette index per position (changed in place);
    ``xyz_of(which)``: the (k, 3) world positions of those entries."""
    info = BlockInfo.load()
    furnished = [i for i, s in enumerate(palette) if info.block_entity(s) is not None]
    if not furnished:
        return palette, out
    which = np.flatnonzero(np.isin(out, furnished))
    full = await _blocks_get(world, np.asarray(xyz_of(which), dtype=np.int64).ravel().tolist())
    palette = list(palette)
    index = {s: i for i, s in enumerate(palette)}
    for i, s in zip(which.tolist(), full, strict=True):
        j = index.get(s)
        if j is None:
            j = index[s] = len(palette)
            palette.append(s)
        out[i] = j
    return palette, out


async def _blocks_get(world: WorldReader, xyz: list[int]) -> list[str]:
    n = len(xyz) // 3
    out: list[str] = []
    for start in range(0, n, BLOCKS_GET_PAGE):
        page = xyz[3 * start : 3 * min(n, start + BLOCKS_GET_PAGE)]
        res = await world.call("blocks_get", world_pb2.BlocksGetParams(xyz=page), world_pb2.BlocksGetResult)
        pal = list(res.palette)
        out.extend(pal[s] for s in res.state)
    return out
