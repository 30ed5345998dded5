"""The journal's side of schematics: the asset library, export from the world, import as a plan.

* ``asset_list`` — one page of the library folder (mcb_common.assets); a bad file is an
  entry with ``valid: false`` and its reason, never an error of the whole call.
* File reads and parses run in a worker thread, never on the journal's event loop (a slow
  disk or a hostile file never stalls other calls); non-regular files are refused unopened.
* ``schematic_export`` — a dense box (air included) read from the world host, within the
  project area and the plan limit; block entities or entities (armor stands, item frames,
  mobs, ...) in the box are a refusal listing them; players are never part of a schematic
  (world hosts never report players as entities). The planner writes the file; the library
  stores it under a new name (never overwrites).
* ``schematic_import_prepare`` — the planner turns the file into a write set; from there it
  is the ordinary prepare path (prepare.py: ``read_base`` → ``Plan`` → ``store_plan``), so
  ``build_apply`` applies it with every check a recipe gets.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb.world.v1 import world_pb2
from mcb_common.assets import AssetLibrary, check_name
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3

from .core import JournalCore
from .pbconv import box_from_pb, box_pb
from .plans import Plan
from .projects import Caller

BLOCK_ENTITY_CAPABILITY = "region_read.block_entities"
ENTITY_CAPABILITY = "region_read.entities"
ENTITIES_LISTED = 20


def library(core: JournalCore) -> AssetLibrary:
    if core.assets is None:
        core.assets = AssetLibrary()  # the folder of MCB_ASSETS_DIR (mcb_common.assets)
    return core.assets


async def asset_list(core: JournalCore, caller: Caller, req: jpb.AssetListRequest) -> dict[str, Any]:
    core.projects.project_for(caller)
    if len(req.query) > 64:
        raise McbError(ErrorCode.INVALID_REQUEST, "query is at most 64 characters")
    return await asyncio.to_thread(library(core).list, req.query, req.cursor)


async def schematic_export(core: JournalCore, caller: Caller, req: jpb.SchematicExportRequest) -> dict[str, Any]:
    project = core.projects.project_for(caller)
    name = check_name(req.name)
    if not req.HasField("min") or not req.HasField("max"):
        raise McbError(ErrorCode.INVALID_REQUEST, "schematic_export needs min and max as {x,y,z}")
    if req.format_version not in (0, 2, 3):
        raise McbError(ErrorCode.INVALID_REQUEST, "format_version is 3 (default) or 2")
    box = box_from_pb(req.min, req.max)
    if not project.area.contains_box(box):
        raise McbError(ErrorCode.OUT_OF_BOUNDS, "the export box must lie inside the project area",
                       details={"box": box.as_dict(), "area": project.area.as_dict()})
    limit = core.limits.max_changed_blocks
    if box.volume > limit:
        raise McbError(ErrorCode.BUDGET_EXCEEDED,
                       f"the box holds {box.volume:,} positions; an export is limited to the plan limit {limit:,}",
                       details={"positions": box.volume, "limit": limit})
    origin = box.min
    if req.HasField("origin"):
        origin = Vec3(req.origin.x, req.origin.y, req.origin.z)
    lib = library(core)
    if (lib.root / f"{name}.schem").exists() or (lib.root / f"{name}.schem").is_symlink():
        raise McbError(ErrorCode.INVALID_REQUEST, f"asset {name!r} already exists; choose another name",
                       details={"asset_id": name})
    info = await core.world.world_info()
    res = await core.world.call("region_read", world_pb2.RegionReadParams(min=req.min, max=req.max),
                                world_pb2.RegionReadResult)
    entities_total = max(res.entities_total, len(res.entities))
    if res.block_entities or entities_total:
        parts: list[str] = []
        details: dict[str, Any] = {}
        if res.block_entities:
            parts.append(f"{len(res.block_entities)} block entities "
                         f"({', '.join(sorted({b.id for b in res.block_entities})[:8])})")
            details["block_entities"] = [{"pos": {"x": b.x, "y": b.y, "z": b.z}, "id": b.id}
                                         for b in res.block_entities[:50]]
            details["count"] = len(res.block_entities)
        if entities_total:
            parts.append(f"{entities_total} entities ({', '.join(sorted({e.id for e in res.entities})[:8])})")
            details["entities"] = [{"id": e.id, "pos": {"x": e.x, "y": e.y, "z": e.z}}
                                   for e in res.entities[:ENTITIES_LISTED]]
            details["entities_count"] = entities_total
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"the box holds {' and '.join(parts)}; schematics carry neither block entity contents "
            "nor entities — remove them or choose a box without them",
            details=details)
    size = box.size
    offset = box.min - origin
    out = await core.planner.export_schematic(planner_pb2.ExportSchematicRequest(
        width=size.x, height=size.y, length=size.z, palette=list(res.palette), indices=res.indices,
        offset=common_pb2.Vec3(x=offset.x, y=offset.y, z=offset.z), data_version=info.data_version,
        name=name, format_version=req.format_version or 3))
    entry = await asyncio.to_thread(lib.write, name, out.data)
    warnings = []
    if BLOCK_ENTITY_CAPABILITY not in info.capabilities:
        warnings.append("this world host does not report block entities; check the box has no chests or signs")
    if ENTITY_CAPABILITY not in info.capabilities:
        warnings.append("this world host does not report entities; armor stands, item frames and mobs "
                        "in the box were not checked and are not exported")
    warnings.append("players are never exported")
    entry["warnings"] = warnings
    entry["region"] = box.as_dict()
    entry["origin"] = origin.as_dict()
    return entry


async def schematic_import_prepare(core: JournalCore, caller: Caller,
                                   req: jpb.SchematicImportPrepareRequest) -> jpb.PlanSummary:
    project = core.projects.project_for(caller)
    if not req.HasField("target"):
        raise McbError(ErrorCode.INVALID_REQUEST, "schematic_import_prepare needs target {x,y,z}")
    if req.rotation not in (0, 90, 180, 270):
        raise McbError(ErrorCode.INVALID_REQUEST, f"rotation must be 0, 90, 180 or 270, got {req.rotation}")
    data, kind, _entry = await asyncio.to_thread(library(core).read, req.asset_id)
    info = await core.world.world_info()
    resp = await core.planner.import_schematic(planner_pb2.ImportSchematicRequest(
        data=data, kind=kind, target=req.target, rotation=req.rotation,
        minecraft_version=info.minecraft_version or core.minecraft_version,
        world_data_version=info.data_version,
        limits=planner_pb2.Limits(max_changed_blocks=core.limits.max_changed_blocks,
                                  max_examined_positions=core.limits.max_examined_positions),
        area=box_pb(project.area),
        allow_drop_block_entities=req.allow_drop_block_entities,
    ))
    compiled = resp.compiled
    ws = compiled.write_set
    xyz, palette, base = await core.prepare.read_base(caller, project, ws)
    plan = Plan(palette=palette, xyz=xyz, desired=list(ws.state), base=base, dependencies=[],
                world_uuid=info.world_uuid, world_epoch=info.epoch, recipe_hash=compiled.recipe_hash)
    summary = await core.prepare.store_plan(project, plan, compiled.bounds, list(compiled.warnings))
    for lo in resp.left_out:
        summary.left_out.append(jpb.LeftOutBlock(pos=lo.pos, id=lo.id))
    return summary
