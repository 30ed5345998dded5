"""The gRPC face of the planner: ``Planner.Compile`` and the schematic conversions. Validates
the request and calls the core; authentication (SCOPES) and the one translation of ``McbError``
are the shared boundary's (``mcb_rpc.boundary``) — nothing else lives here.

Compilation is CPU-bound, so it runs in a worker thread (the event loop keeps answering
``/health``), at most ``concurrency`` at a time to bound memory (a compile at the default
limits peaks at a few tens of MB).
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from mcb.common.v1 import common_pb2
from mcb.planner.v1 import planner_pb2, planner_pb2_grpc
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box
from mcb_rpc.boundary import grpc_boundary
from mcb_rpc.pbjson import box_pb, vec3_of, vec3_pb
from mcb_rpc.tokens import TokenTable

from .compile import CompileResult, Limits, compile_recipe
from .sources import PartBlocks, RegionReader

# The world host's largest region_read; bigger replace regions are read in y slabs.
REGION_READ_MAX = 2_097_152

# Who may call what (docs/architecture.md, "Who may call what"). The journal compiles with the
# service token; an admin's tools may too. Never the agent (it goes through the journal, which
# checks its project and rights) nor automation: a `replace` recipe reads the live world with the
# planner's own service token, so an open Compile would read any region for anyone.
SCOPES: dict[str, tuple[str, ...]] = {
    "Compile": ("service", "admin"),
    "ImportSchematic": ("service", "admin"),
    "ExportSchematic": ("service", "admin"),
}


def area_from_proto(request: planner_pb2.CompileRequest) -> Box | None:
    if not request.HasField("area"):
        return None
    lo, hi = vec3_of(request.area.min), vec3_of(request.area.max)
    if lo.x > hi.x or lo.y > hi.y or lo.z > hi.z:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"area min {lo.as_dict()} is not ≤ max {hi.as_dict()} on every axis",
            details={"path": "area"},
        )
    return Box(lo, hi)


def limits_from_proto(limits: planner_pb2.Limits) -> Limits:
    return Limits.of(
        max_changed_blocks=limits.max_changed_blocks,
        max_examined_positions=limits.max_examined_positions,
        max_operations=limits.max_operations,
        max_depth=limits.max_depth,
    )


def response_from_result(r: CompileResult) -> planner_pb2.CompileResponse:
    resp = planner_pb2.CompileResponse(
        bounds=box_pb(r.bounds),
        examined_positions=r.examined,
        materials=[common_pb2.StateCount(state=s, count=c) for s, c in r.materials],
        warnings=list(r.warnings),
        recipe_hash=r.recipe_hash,
        planner_version=r.planner_version,
    )
    ws = resp.write_set
    ws.palette.extend(r.palette)
    ws.xyz.extend(r.xyz.ravel().tolist())
    ws.state.extend(r.states.tolist())
    return resp


def parts_from_proto(request: planner_pb2.CompileRequest) -> dict[str, PartBlocks]:
    out = {}
    for part_id, bl in request.parts.items():
        xyz = np.asarray(bl.xyz, dtype=np.int64)
        if len(xyz) != 3 * len(bl.state):
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"parts[{part_id!r}]: xyz holds {len(xyz)} numbers for {len(bl.state)} states",
                details={"path": "parts"},
            )
        out[part_id] = PartBlocks(xyz.reshape(-1, 3), tuple(bl.palette), np.asarray(bl.state, dtype=np.uint32))
    return out


def world_reader(world: Any, loop: asyncio.AbstractEventLoop, timeout: float = 60.0) -> RegionReader:
    """A ``RegionReader`` over the world protocol's ``region_read``, for a compile running in a
    worker thread: each read is scheduled on the service's event loop (``world`` is an
    ``mcb_rpc.worldclient.WorldClient``); boxes above the host's limit are read in y slabs."""

    def read(box: Box) -> tuple[list[str], np.ndarray]:
        layer = box.size.x * box.size.z
        step = max(1, REGION_READ_MAX // layer)
        index: dict[str, int] = {}
        parts = []
        for y0 in range(box.min.y, box.max.y + 1, step):
            y1 = min(box.max.y, y0 + step - 1)
            params = world_pb2.RegionReadParams(
                min=vec3_pb((box.min.x, y0, box.min.z)), max=vec3_pb((box.max.x, y1, box.max.z))
            )
            fut = asyncio.run_coroutine_threadsafe(world.call("region_read", params, world_pb2.RegionReadResult), loop)
            res = fut.result(timeout)
            idx = np.frombuffer(res.indices, dtype="<u2")
            remap = np.array([index.setdefault(st, len(index)) for st in res.palette], dtype=np.uint16)
            parts.append(remap[idx] if len(idx) else idx)
        return list(index), np.concatenate(parts) if parts else np.empty(0, dtype=np.uint16)

    return read


def compile_request(
    request: planner_pb2.CompileRequest, reader: RegionReader | None = None
) -> planner_pb2.CompileResponse:
    result = compile_recipe(
        request.recipe_json,
        minecraft_version=request.minecraft_version,
        limits=limits_from_proto(request.limits),
        area=area_from_proto(request),
        world=reader,
        parts=parts_from_proto(request),
    )
    return response_from_result(result)


def import_request(request: planner_pb2.ImportSchematicRequest) -> planner_pb2.ImportSchematicResponse:
    from .schematics import import_schematic

    t = request.target
    r = import_schematic(
        request.data,
        kind=request.kind or "schem",
        target=vec3_of(t),
        rotation=request.rotation,
        minecraft_version=request.minecraft_version,
        world_data_version=request.world_data_version,
        limits=limits_from_proto(request.limits),
        area=area_from_proto(request),
        allow_drop_block_entities=request.allow_drop_block_entities,
    )
    resp = planner_pb2.ImportSchematicResponse(
        compiled=response_from_result(r.compiled), data_version=r.data_version, format=r.format
    )
    for x, y, z, bid in r.left_out:
        resp.left_out.append(planner_pb2.LeftOut(pos=vec3_pb((x, y, z)), id=bid))
    return resp


def export_request(request: planner_pb2.ExportSchematicRequest) -> planner_pb2.ExportSchematicResponse:
    from .schematics import export_schematic

    o = request.offset
    data = export_schematic(
        (request.width, request.height, request.length),
        list(request.palette),
        request.indices,
        offset=(o.x, o.y, o.z),
        data_version=request.data_version,
        name=request.name,
        format_version=request.format_version or 3,
    )
    return planner_pb2.ExportSchematicResponse(data=data)


@grpc_boundary("planner", SCOPES)
class PlannerServicer(planner_pb2_grpc.PlannerServicer):
    def __init__(self, tokens: TokenTable, concurrency: int = 2, world: Any = None) -> None:
        self.tokens = tokens
        self._slots = asyncio.Semaphore(concurrency)
        self._world = world  # WorldClient for replace's region reads (None: replace is refused)

    async def Compile(  # noqa: N802 - gRPC method name
        self, request: planner_pb2.CompileRequest, caller: Any
    ) -> planner_pb2.CompileResponse:
        reader = world_reader(self._world, asyncio.get_running_loop()) if self._world is not None else None
        return await self._run(lambda r: compile_request(r, reader), request)

    async def ImportSchematic(self, request, caller):  # noqa: N802 - gRPC method name
        return await self._run(import_request, request)

    async def ExportSchematic(self, request, caller):  # noqa: N802 - gRPC method name
        return await self._run(export_request, request)

    async def _run(self, fn, request):
        async with self._slots:
            return await asyncio.to_thread(fn, request)
