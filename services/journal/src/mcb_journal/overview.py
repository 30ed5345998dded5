"""Read-only overviews for the ops dashboard (JournalAdmin.OperationList / ProjectList).

Every operation of every project, newest first, with the plan it runs (counts from the plans
table; materials and the region only for one operation, read from its plan blob), and the
projects with their parts. ``project_index`` is the agent's view of its own project only (its
parts and operations: the bridge's MCP completions). Nothing here writes.

Operations and parts of earlier worlds (`mcb world reset --keep-journal`; the current world is
the one the journal saw last, ``worldid.current``) are listed only with ``include_old_worlds``,
marked ``old_world``; the answers count them either way. One operation asked for by id is
always answered, marked when old.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError

from . import worldid
from .pbconv import box_pb

if TYPE_CHECKING:
    from .context import JournalContext

DEFAULT_LIMIT = 50
INDEX_LIMIT = 100
MAX_LIMIT = 1000
MATERIALS_LISTED = 32


def operation_list(core: JournalContext, req: jpb.OperationListRequest) -> jpb.OperationListResponse:
    db = core.db
    if req.limit > MAX_LIMIT:
        raise McbError(ErrorCode.INVALID_REQUEST, f"limit is at most {MAX_LIMIT}")
    limit = req.limit or DEFAULT_LIMIT
    world = worldid.current(db)
    where, args = [], []
    if req.project_id:
        where.append("o.project_id=?")
        args.append(req.project_id)
    scope = list(where), list(args)  # the project(s), before the world filter: for the counts
    if req.operation_id:
        where.append("o.op_id=?")
        args.append(req.operation_id)
    elif not req.include_old_worlds:
        where.append(f"NOT {worldid.OLD_WORLD_SQL}")
        args += [world, world]
    cond = f"WHERE {' AND '.join(where)}" if where else ""
    rows = db.all(
        "SELECT o.op_id, o.project_id, o.plan_id, p.plan_hash, p.changed, p.already, p.total,"
        f" p.world_epoch, p.expires_ms, {worldid.OLD_WORLD_SQL} AS old_world"
        " FROM operations o LEFT JOIN plans p ON p.plan_id=o.plan_id"
        f" {cond} ORDER BY o.created_ms DESC, o.op_id LIMIT ?",
        world,
        world,
        *args,
        limit,
    )
    if req.operation_id and not rows:
        raise McbError(ErrorCode.NOT_FOUND, f"operation {req.operation_id} not found")
    out = jpb.OperationListResponse()
    batch = core.limits.batch_blocks
    for r in rows:
        plan = jpb.PlanSummary(plan_id=r["plan_id"])
        if r["plan_hash"] is not None:
            plan.plan_hash = r["plan_hash"]
            plan.changed_blocks, plan.already_blocks, plan.total_positions = r["changed"], r["already"], r["total"]
            plan.batches = -(-r["total"] // batch)
            plan.world_epoch = r["world_epoch"]
            if req.operation_id:
                _plan_detail(core, r["plan_id"], plan)
        out.operations.append(
            jpb.OperationEntry(
                report=core.report(r["op_id"]), project_id=r["project_id"], plan=plan, old_world=bool(r["old_world"])
            )
        )
    where, args = scope
    counts = db.all(
        f"SELECT o.state, {worldid.OLD_WORLD_SQL} AS old_world, COUNT(*) AS n FROM operations o"
        " LEFT JOIN plans p ON p.plan_id=o.plan_id"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " GROUP BY o.state, old_world",
        world,
        world,
        *args,
    )
    for c in counts:
        if c["old_world"]:
            out.old_world_operations += c["n"]
        if req.include_old_worlds or not c["old_world"]:
            out.state_counts[c["state"]] = out.state_counts[c["state"]] + c["n"]
    return out


def _plan_detail(core: JournalContext, plan_id: str, plan: jpb.PlanSummary) -> None:
    """Materials (states placed, by count) and the bounding box of the plan's positions."""
    try:
        p = core.load_plan(plan_id)
    except McbError:
        plan.warnings.append("the plan's blob is gone; materials are not known")
        return
    materials = Counter(p.palette[d] for d, b in zip(p.desired, p.base, strict=True) if d != b)
    for state, count in sorted(materials.items(), key=lambda kv: (-kv[1], kv[0]))[:MATERIALS_LISTED]:
        plan.materials.append(common_pb2.StateCount(state=state, count=count))
    if len(materials) > MATERIALS_LISTED:
        plan.warnings.append(f"{len(materials) - MATERIALS_LISTED} more materials not listed")
    if p.xyz:
        xs, ys, zs = p.xyz[0::3], p.xyz[1::3], p.xyz[2::3]
        plan.region.CopyFrom(
            box_pb(
                {"min": {"x": min(xs), "y": min(ys), "z": min(zs)}, "max": {"x": max(xs), "y": max(ys), "z": max(zs)}}
            )
        )


def _part_info(r: Any, old_world: bool = False) -> jpb.PartInfo:
    return jpb.PartInfo(
        part_id=r["part_id"],
        project_id=r["project_id"],
        name=r["name"],
        operation_id=r["op_id"],
        protected=bool(r["protected"]),
        bounds=box_pb(json.loads(r["bounds_json"])),
        block_count=r["count"],
        old_world=old_world,
    )


def project_index(core: JournalContext, project_id: str, req: jpb.ProjectIndexRequest) -> jpb.ProjectIndexResponse:
    """One project's parts (by name) and operations (newest first, at most ``limit``), of the
    current world only: what the agent may still use (an earlier world's are refused
    ``world_changed``, so they are not offered as completions)."""
    if req.limit > MAX_LIMIT:
        raise McbError(ErrorCode.INVALID_REQUEST, f"limit is at most {MAX_LIMIT}")
    out = jpb.ProjectIndexResponse()
    world = worldid.current(core.db)
    for r in core.db.all(
        "SELECT t.* FROM parts t LEFT JOIN operations o ON o.op_id=t.op_id"
        f" LEFT JOIN plans p ON p.plan_id=o.plan_id WHERE t.project_id=? AND NOT {worldid.OLD_WORLD_SQL}"
        " ORDER BY t.name",
        project_id,
        world,
        world,
    ):
        out.parts.append(_part_info(r))
    for r in core.db.all(
        "SELECT o.op_id, o.state, o.plan_id, o.written, o.message FROM operations o"
        f" LEFT JOIN plans p ON p.plan_id=o.plan_id WHERE o.project_id=? AND NOT {worldid.OLD_WORLD_SQL}"
        " ORDER BY o.created_ms DESC, o.op_id LIMIT ?",
        project_id,
        world,
        world,
        req.limit or INDEX_LIMIT,
    ):
        out.operations.append(
            jpb.OperationBrief(
                operation_id=r["op_id"],
                state=r["state"],
                plan_id=r["plan_id"],
                written=r["written"],
                message=r["message"],
            )
        )
    return out


def project_list(core: JournalContext, req: jpb.ProjectListRequest | None = None) -> jpb.ProjectListResponse:
    core.projects.refresh()
    out = jpb.ProjectListResponse()
    for r in core.db.all("SELECT * FROM projects ORDER BY project_id"):
        out.projects.append(
            jpb.Project(
                project_id=r["project_id"],
                name=r["name"],
                owner_player_id=r["owner_player_id"],
                area=box_pb(json.loads(r["area_json"])),
                world_uuid=r["world_uuid"],
            )
        )
    world = worldid.current(core.db)
    include_old = bool(req and req.include_old_worlds)
    for r in core.db.all(
        f"SELECT t.*, {worldid.OLD_WORLD_SQL} AS old_world FROM parts t"
        " LEFT JOIN operations o ON o.op_id=t.op_id LEFT JOIN plans p ON p.plan_id=o.plan_id"
        " ORDER BY t.project_id, t.name",
        world,
        world,
    ):
        if r["old_world"]:
            out.old_world_parts += 1
            if not include_old:
                continue
        out.parts.append(_part_info(r, bool(r["old_world"])))
    return out
