"""The journal's side of schematics: the asset library, export from the world, import as a plan.

* ``asset_list`` — one page of the library folder (mcb_common.assets); a bad file is an
  entry with ``valid: false`` and its reason, never an error of the whole call.
* File reads and parses run in a worker thread, never on the journal's event loop (a slow
  disk or a hostile file never stalls other calls); non-regular files are refused unopened.
* ``schematic_export`` — a dense box (air included) read from the world host, within the
  project area and the plan limit; block entities go into the file with their contents (read
  as full states, ``worldread.with_full_states``), those holding data beyond the model are a
  refusal listing them; entities (armor stands, item frames, mobs, ...) in the box are a
  refusal listing them; players are never part of a schematic
  (world hosts never report players as entities). The planner writes the file; the library
  stores it under a new name (never overwrites).
* ``schematic_import_prepare`` — the planner turns the file into a write set; from there it
  is the ordinary prepare path (prepare.py: ``read_base`` → ``Plan`` → planstore.py: ``store_plan``), so
  ``build_apply`` applies it with every check a recipe gets.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb.world.v1 import world_pb2
from mcb_common.assets import AssetLibrary, check_name
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3

from . import policy
from .context import JournalContext
from .pbconv import box_from_pb, box_pb
from .plans import Plan
from .planstore import store_plan
from .prepare import Prepare
from .projects import Caller
from .worldread import with_full_states

ENTITY_CAPABILITY = "region_read.entities"
ENTITIES_LISTED = 20


def library(core: JournalContext) -> AssetLibrary:
    if core.assets is None:
        core.assets = AssetLibrary()  # the folder of MCB_ASSETS_DIR (mcb_common.assets)
    return core.assets


async def asset_list(core: JournalContext, caller: Caller, req: jpb.AssetListRequest) -> dict[str, Any]:
    core.projects.project_for(caller)
    if len(req.query) > 64:
        raise McbError(ErrorCode.INVALID_REQUEST, "query is at most 64 characters")
    return await asyncio.to_thread(library(core).list, req.query, req.cursor)


async def schematic_export(core: JournalContext, caller: Caller, req: jpb.SchematicExportRequest) -> dict[str, Any]:
    project = core.projects.project_for(caller)
    name = check_name(req.name)
    if not req.HasField("min") or not req.HasField("max"):
        raise McbError(ErrorCode.INVALID_REQUEST, "schematic_export needs min and max as {x,y,z}")
    if req.format_version not in (0, 2, 3):
        raise McbError(ErrorCode.INVALID_REQUEST, "format_version is 3 (default) or 2")
    box = box_from_pb(req.min, req.max)
    refused = policy.box_refusal(project.area, box, "the export box must lie inside the project area")
    if refused is not None:
        raise refused
    limit = core.limits.max_changed_blocks
    if box.volume > limit:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"the box holds {box.volume:,} positions; an export is limited to the plan limit {limit:,}",
            details={"positions": box.volume, "limit": limit},
        )
    origin = box.min
    if req.HasField("origin"):
        origin = Vec3(req.origin.x, req.origin.y, req.origin.z)
    lib = library(core)
    if (lib.root / f"{name}.schem").exists() or (lib.root / f"{name}.schem").is_symlink():
        raise McbError(
            ErrorCode.INVALID_REQUEST, f"asset {name!r} already exists; choose another name", details={"asset_id": name}
        )
    info = await core.world.world_info()
    res = await core.world.call(
        "region_read", world_pb2.RegionReadParams(min=req.min, max=req.max), world_pb2.RegionReadResult
    )
    entities_total = max(res.entities_total, len(res.entities))
    if entities_total:
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"the box holds {entities_total} entities ({', '.join(sorted({e.id for e in res.entities})[:8])}); "
            "schematics carry no entities — remove them or choose a box without them",
            details={
                "entities": [
                    {"id": e.id, "pos": {"x": e.x, "y": e.y, "z": e.z}} for e in res.entities[:ENTITIES_LISTED]
                ],
                "entities_count": entities_total,
            },
        )
    size = box.size
    # Block entities go into the file with their contents: re-read those positions as full
    # states (blocks_get), like a plan's base (worldread.with_full_states). Which blocks carry a
    # block entity is known from the registry, so this works with every host.
    idx = np.frombuffer(res.indices, dtype="<u2").astype(np.int64)
    layer = size.x * size.z

    def xyz_of(which: np.ndarray) -> np.ndarray:
        y, rem = np.divmod(which, layer)
        z, x = np.divmod(rem, size.x)
        return np.stack([x + box.min.x, y + box.min.y, z + box.min.z], axis=1)

    palette, idx = await with_full_states(core.world, list(res.palette), idx, xyz_of)
    unsupported = [i for i, st in enumerate(palette) if '{"unsupported"' in st]
    if unsupported:
        which = np.flatnonzero(np.isin(idx, unsupported))
        pos = xyz_of(which[:50]).tolist()
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"{len(which)} block entities in the box hold data this tool does not carry (a loot table, a "
            "custom name, enchanted items, styled text …); exporting them would lose it — choose a box "
            "without them",
            details={
                "block_entities": [
                    {"pos": {"x": p[0], "y": p[1], "z": p[2]}, "state": palette[int(idx[w])]}
                    for p, w in zip(pos, which[:50], strict=True)
                ],
                "count": int(len(which)),
            },
        )
    if len(palette) > 0xFFFF:
        raise McbError(ErrorCode.BUDGET_EXCEEDED, "the box holds more than 65,535 different blocks and contents")
    indices = idx.astype("<u2").tobytes()
    size = box.size
    offset = box.min - origin
    out = await core.planner.export_schematic(
        planner_pb2.ExportSchematicRequest(
            width=size.x,
            height=size.y,
            length=size.z,
            palette=palette,
            indices=indices,
            offset=common_pb2.Vec3(x=offset.x, y=offset.y, z=offset.z),
            data_version=info.data_version,
            name=name,
            format_version=req.format_version or 3,
        )
    )
    entry = await asyncio.to_thread(lib.write, name, out.data)
    warnings = []
    if ENTITY_CAPABILITY not in info.capabilities:
        warnings.append(
            "this world host does not report entities; armor stands, item frames and mobs "
            "in the box were not checked and are not exported"
        )
    warnings.append("players are never exported")
    entry["warnings"] = warnings
    entry["region"] = box.as_dict()
    entry["origin"] = origin.as_dict()
    return entry


async def schematic_import_prepare(
    prepare: Prepare, caller: Caller, req: jpb.SchematicImportPrepareRequest
) -> jpb.PlanSummary:
    core = prepare.ctx
    project = core.projects.project_for(caller)
    if not req.HasField("target"):
        raise McbError(ErrorCode.INVALID_REQUEST, "schematic_import_prepare needs target {x,y,z}")
    if req.rotation not in (0, 90, 180, 270):
        raise McbError(ErrorCode.INVALID_REQUEST, f"rotation must be 0, 90, 180 or 270, got {req.rotation}")
    data, kind, _entry = await asyncio.to_thread(library(core).read, req.asset_id)
    info = await core.world.world_info()
    resp = await core.planner.import_schematic(
        planner_pb2.ImportSchematicRequest(
            data=data,
            kind=kind,
            target=req.target,
            rotation=req.rotation,
            minecraft_version=info.minecraft_version or core.minecraft_version,
            world_data_version=info.data_version,
            limits=planner_pb2.Limits(
                max_changed_blocks=core.limits.max_changed_blocks,
                max_examined_positions=core.limits.max_examined_positions,
            ),
            area=box_pb(project.area),
            allow_drop_block_entities=req.allow_drop_block_entities,
        )
    )
    compiled = resp.compiled
    ws = compiled.write_set
    xyz, palette, base = await prepare.read_base(caller, project, ws)
    plan = Plan(
        palette=palette,
        xyz=xyz,
        desired=list(ws.state),
        base=base,
        dependencies=[],
        world_uuid=info.world_uuid,
        world_epoch=info.epoch,
        recipe_hash=compiled.recipe_hash,
    )
    summary = await store_plan(core, project, plan, compiled.bounds, list(compiled.warnings))
    for lo in resp.left_out:
        summary.left_out.append(jpb.LeftOutBlock(pos=lo.pos, id=lo.id))
    return summary
