"""A prepared plan's desired states for a picture of the world after it (issue 32, item 1).

The camera worker (service token, the project in its metadata) draws a plan before it is applied:
it asks ``PlanEntries`` for the plan's positions and desired states inside the box it draws and
lays them over the blocks it read. Nothing is written. Only a plan of the caller's project, not
expired and prepared on the world the host serves now, is answered: anything else is refused with
the same codes ``build_apply`` uses (not_found, stale_snapshot, world_changed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3

from . import worldid
from .db import now_ms
from .pbconv import box_pb, iso
from .plans import Plan
from .projects import Caller

if TYPE_CHECKING:
    from .context import JournalContext


def entries_in(plan: Plan, box: tuple[int, int, int, int, int, int] | None) -> tuple[np.ndarray, np.ndarray]:
    """(xyz as an (n, 3) array, desired palette indices) of the plan's entries inside ``box``
    (inclusive x0, y0, z0, x1, y1, z1; None = all)."""
    xyz = np.asarray(plan.xyz, dtype=np.int64).reshape(-1, 3)
    desired = np.asarray(plan.desired, dtype=np.int64).reshape(-1)
    if box is None:
        return xyz, desired
    lo, hi = np.array(box[:3]), np.array(box[3:])
    keep = ((xyz >= lo) & (xyz <= hi)).all(axis=1)
    return xyz[keep], desired[keep]


async def plan_entries(core: JournalContext, caller: Caller, req: jpb.PlanEntriesRequest) -> jpb.PlanEntriesResponse:
    project = core.projects.project_for(caller)
    if not req.plan_id:
        raise McbError(
            ErrorCode.INVALID_REQUEST, "plan_id is required (from build_prepare)", details={"field": "plan_id"}
        )
    row = core.db.one("SELECT * FROM plans WHERE plan_id=? AND project_id=?", req.plan_id, project.project_id)
    if row is None:
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"plan {req.plan_id} not found in project {project.project_id!r}; pass a plan_id build_prepare returned",
            details={"plan_id": req.plan_id},
        )
    if row["expires_ms"] < now_ms():
        raise McbError(
            ErrorCode.STALE_SNAPSHOT,
            f"plan {req.plan_id} expired at {iso(row['expires_ms'])}; prepare it again to preview it",
            details={"plan_id": req.plan_id, "reason": "plan_expired", "expires_at": iso(row["expires_ms"])},
        )
    info = await core.world.world_info()
    worldid.check(f"plan {req.plan_id}", row["world_uuid"], info.world_uuid)
    if info.epoch != row["world_epoch"]:
        raise McbError(
            ErrorCode.STALE_SNAPSHOT,
            f"the world's epoch changed since plan {req.plan_id} was prepared; prepare it again",
            details={"plan_id": req.plan_id, "reason": "epoch_changed"},
        )
    plan = core.load_plan(req.plan_id)
    all_xyz = np.asarray(plan.xyz, dtype=np.int64).reshape(-1, 3)
    head = jpb.PlanEntriesResponse(
        plan_id=req.plan_id,
        plan_hash=row["plan_hash"],
        world_uuid=row["world_uuid"] or "",
        world_epoch=int(row["world_epoch"]),
        total=len(plan),
        changed=int(row["changed"]),
        expires_at=iso(row["expires_ms"]),
    )
    if len(all_xyz):
        lo, hi = all_xyz.min(axis=0), all_xyz.max(axis=0)
        head.bounds.CopyFrom(box_pb(Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))))
    if req.header_only:
        return head
    box = None
    if req.HasField("region"):
        lo, hi = req.region.min, req.region.max
        box = (min(lo.x, hi.x), min(lo.y, hi.y), min(lo.z, hi.z), max(lo.x, hi.x), max(lo.y, hi.y), max(lo.z, hi.z))
    xyz, desired = entries_in(plan, box)
    head.palette.extend(plan.palette)
    head.xyz.extend(xyz.reshape(-1).tolist())
    head.desired.extend(desired.tolist())
    return head
