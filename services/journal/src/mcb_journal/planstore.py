"""Storing a plan: every prepare path (recipes and schematics in prepare.py, undo.py, parts.py's
regeneration) ends in ``store_plan``, so plans look alike: materials, what they replace and who
placed it (consent.py), conflicts, warnings. The plan's row and its metadata (plans.PlanMeta) and
what it was made from (plans.PlanOrigin, its own table) are written once, in one transaction, and
never updated (plans.py). On the context (context.py); imports no job.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
from collections import Counter
from typing import Any

import numpy as np
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.blockentity import strip as strip_data
from mcb_common.errors import McbError
from mcb_common.registry import AIR_NAMES

from .consent import classify, count_sources
from .context import JournalContext
from .db import Database, now_ms
from .pbconv import iso, vec
from .plans import Plan, PlanMeta, PlanOrigin, RollbackOf
from .projects import Project

log = logging.getLogger("mcb.journal")


def plan_origin(db: Database, plan_id: str) -> PlanOrigin | None:
    """What plan ``plan_id`` was made from (None: a recipe, a schematic, or no such plan)."""
    row = db.one("SELECT * FROM plan_origins WHERE plan_id=?", plan_id)
    if row is None:
        return None
    rollback_of = RollbackOf(**json.loads(row["rollback_of_json"])) if row["rollback_of_json"] else None
    return PlanOrigin(
        undo_of=row["undo_of"], regenerates=row["regenerates"], design_sha=row["design_sha"], rollback_of=rollback_of
    )


async def store_plan(
    ctx: JournalContext,
    project: Project,
    plan: Plan,
    bounds: common_pb2.Box,
    warnings: list[str],
    conflicts: list[jpb.Conflict] | None = None,
    origin: PlanOrigin | None = None,
) -> jpb.PlanSummary:
    """Persist an immutable plan (blob + row) and summarise it for the model.

    Every prepare path (recipes, undo, schematics) ends here, so plans look alike.
    """
    palette, n = plan.palette, len(plan)
    sha = ctx.blobs.put(plan.encode())
    desired, moved = plan.changes()
    changed = int(moved.sum())
    already = n - changed
    plan_id = "pl_" + secrets.token_hex(8)
    created = now_ms()
    expires = created + ctx.limits.plan_ttl_seconds * 1000
    # by block state: a chest with items is a chest (block-entity data left out, mcb_common.blockentity)
    per_index = np.bincount(desired[moved], minlength=len(palette))
    materials: Counter = Counter()
    for i in np.flatnonzero(per_index).tolist():
        materials[strip_data(palette[i])] += int(per_index[i])
    batches = -(-n // ctx.limits.batch_blocks)
    summary = jpb.PlanSummary(
        plan_id=plan_id,
        plan_hash=sha,
        changed_blocks=changed,
        already_blocks=already,
        region=bounds,
        expires_at=iso(expires),
        total_positions=n,
        batches=batches,
        world_epoch=plan.world_epoch,
        warnings=warnings,
    )
    for state, count in sorted(materials.items(), key=lambda kv: (-kv[1], kv[0]))[:32]:
        summary.materials.append(common_pb2.StateCount(state=state, count=count))
    if len(materials) > 32:
        summary.warnings.append(f"{len(materials) - 32} more materials not listed")
    replaced = await replaced_blocks(ctx, plan)
    fill_replaced(summary, replaced)
    if replaced["total"]:
        by = replaced["by_source"]
        summary.warnings.append(
            f"{replaced['total']} existing non-air blocks will be replaced ("
            + ", ".join(f"{s} {v['count']}" for s, v in by.items())
            + "; positions in `replaced`)"
            + (
                f"; {by['player']['count']} were placed by a player: build_apply refuses this plan unless "
                "replace_player_blocks is true — ask the player first"
                if "player" in by
                else ""
            )
        )
    for conflict in (conflicts or [])[: ctx.limits.sample_limit]:
        summary.conflicts.append(conflict)
    if conflicts and len(conflicts) > ctx.limits.sample_limit:
        summary.warnings.append(f"{len(conflicts)} conflicts in all; {ctx.limits.sample_limit} listed")
    meta = PlanMeta(conflicts=len(conflicts or []), observed_oid=ctx.observed_oid(), replaced=replaced)
    with ctx.db.tx() as c:  # the plan's row, its metadata and its origin: written once, never updated
        c.execute(
            "INSERT INTO plans(plan_id, project_id, plan_hash, blob_sha256, world_uuid, world_epoch,"
            " created_ms, expires_ms, changed, already, total, summary_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                plan_id,
                project.project_id,
                sha,
                sha,
                plan.world_uuid,
                plan.world_epoch,
                created,
                expires,
                changed,
                already,
                n,
                meta.to_json(),
            ),
        )
        if origin is not None:
            rollback_of = json.dumps(dataclasses.asdict(origin.rollback_of)) if origin.rollback_of else None
            c.execute(
                "INSERT INTO plan_origins(plan_id, undo_of, regenerates, design_sha, rollback_of_json)"
                " VALUES (?,?,?,?,?)",
                (plan_id, origin.undo_of, origin.regenerates, origin.design_sha, rollback_of),
            )
    return summary


async def replaced_blocks(ctx: JournalContext, plan: Plan) -> dict[str, Any]:
    """The non-air blocks ``plan`` replaces, counted by who placed them (consent.py; the
    journal's records are read off the event loop, reads.py)."""
    palette, xyz = plan.palette, plan.xyz
    air = np.array([s.split("[")[0] in AIR_NAMES for s in palette], dtype=bool).reshape(len(palette))
    _, moved = plan.changes()
    base = np.asarray(plan.base, dtype=np.int64)
    replaced = [
        ((xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]), palette[plan.base[i]])
        for i in np.flatnonzero(moved & ~air[base]).tolist()
    ]
    return count_sources(replaced, await ctx.reads.run(lambda db: classify(db, replaced)))


async def sync_events(ctx: JournalContext) -> None:
    """Bring the observed events up to now before a prepare counts who placed what."""
    try:
        await ctx.observer.sync()
    except McbError as err:  # counted from what was observed; the sources may say unknown
        log.warning("prepare: block events not read (%s); replaced blocks may count as unknown", err.message)


def fill_replaced(summary: jpb.PlanSummary, replaced: dict[str, Any]) -> None:
    summary.replaced.total = replaced["total"]
    for source, v in replaced["by_source"].items():
        summary.replaced.by_source.append(
            jpb.ReplacedBySource(source=source, count=v["count"], positions=[vec(tuple(p)) for p in v["positions"]])
        )
