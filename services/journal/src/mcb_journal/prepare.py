"""Prepare: a write set becomes a stored, immutable plan and its summary for the model.

Every prepare path ends in ``store_plan`` (recipes here, undo.py, parts.py's regeneration,
schematics.py's import), so plans look alike: materials, what they replace and who placed it
(consent.py), conflicts, warnings. ``read_base`` is the shared first half for paths that start
from a write set: rights (parts.py), block rules and the base states read from the world.
Nothing here writes the world.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb_common.blockentity import strip as strip_data
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3
from mcb_common.registry import AIR_NAMES

from . import worldid
from .blockrules import check_block_rules_indexed
from .consent import classify, count_sources
from .db import now_ms
from .pbconv import box_pb, iso, vec
from .plans import Plan
from .projects import Caller, Project
from .recipeparts import parts_for_recipe
from .worldread import read_indexed, read_states

if TYPE_CHECKING:  # it imports this module
    from .core import JournalCore

log = logging.getLogger("mcb.journal")


class Prepare:
    def __init__(self, core: JournalCore):
        self.core = core

    async def build_prepare(self, caller: Caller, req: jpb.BuildPrepareRequest) -> jpb.PlanSummary:
        project = self.core.projects.project_for(caller)
        if len(req.recipe_json.encode()) > self.core.limits.max_recipe_bytes:
            raise McbError(ErrorCode.BUDGET_EXCEEDED,
                           f"recipe is {len(req.recipe_json.encode()):,} bytes; the limit is {self.core.limits.max_recipe_bytes:,}")
        info = await self.core.world.world_info()
        worldid.note_world(self.core.db, info.world_uuid, info.epoch)
        area = project.area
        compiled = await self.core.planner.compile(planner_pb2.CompileRequest(
            recipe_json=req.recipe_json, minecraft_version=info.minecraft_version or self.core.minecraft_version,
            limits=planner_pb2.Limits(max_changed_blocks=self.core.limits.max_changed_blocks,
                                      max_examined_positions=self.core.limits.max_examined_positions),
            area=box_pb(area),
            parts=parts_for_recipe(self.core, project.project_id, req.recipe_json),
        ))
        ws = compiled.write_set
        if len(ws.state) == 0:
            raise McbError(ErrorCode.INVALID_REQUEST, "the recipe places no blocks")
        if req.regenerate_part_id:
            if self.core.parts is None:
                raise McbError(ErrorCode.NOT_FOUND, f"part {req.regenerate_part_id!r} not found")
            self.core.parts.check_write_set(caller, project.project_id, list(ws.xyz), "")
            return await self.core.parts.regenerate(caller, project, req.regenerate_part_id, ws, compiled, info)
        xyz, palette, base = await self.read_base(caller, project, ws, req.part_id)
        deps: list[tuple[int, int, int, str]] = []
        if req.dependencies:
            dep_xyz: list[int] = []
            for d in req.dependencies:
                p = Vec3(d.pos.x, d.pos.y, d.pos.z)
                if not area.contains(p):
                    raise McbError(ErrorCode.OUT_OF_BOUNDS, f"dependency {p.as_dict()} is outside the project area")
                dep_xyz += [p.x, p.y, p.z]
            current = await read_states(self.core.world, dep_xyz)
            for d, cur in zip(req.dependencies, current, strict=True):
                if d.state and d.state != cur:
                    raise McbError(ErrorCode.CONFLICT,
                                   f"dependency at {d.pos.x},{d.pos.y},{d.pos.z} holds {cur}, not {d.state}",
                                   details={"pos": [d.pos.x, d.pos.y, d.pos.z], "current": cur})
                deps.append((d.pos.x, d.pos.y, d.pos.z, cur))
        plan = Plan(palette=palette, xyz=xyz, desired=list(ws.state), base=base, dependencies=deps,
                    world_uuid=info.world_uuid, world_epoch=info.epoch, recipe_hash=compiled.recipe_hash)
        return await self.store_plan(project, plan, compiled.bounds, list(compiled.warnings))

    async def read_base(self, caller: Caller, project: Project, ws: common_pb2.BlockList,
                        part_id: str = "") -> tuple[list[int], list[str], list[int]]:
        """A write set's positions checked (parts.py: parts, protection) and their base states
        read from the world: (xyz, palette = desired states + base states, base indices).
        Shared by every prepare path that starts from a write set (recipes, schematics)."""
        xyz = list(ws.xyz)
        if self.core.parts is not None:
            self.core.parts.check_write_set(caller, project.project_id, xyz, part_id)
        elif part_id:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id!r} not found")
        read_palette, read_idx = await read_indexed(self.core.world, xyz)
        await self.sync_events()  # every event up to the read: who placed the blocks it replaces
        # Block entities, fluids, gravity support: refused before anything is stored (issue 4).
        await check_block_rules_indexed(self.core.world, xyz, list(ws.palette), list(ws.state), read_palette, read_idx)
        palette = list(ws.palette)
        index = {s: i for i, s in enumerate(palette)}
        # base states join the palette in the order they first occur (the plan's bytes depend on it)
        seen, first = np.unique(read_idx, return_index=True)
        to_plan = np.zeros(len(read_palette), dtype=np.int64)
        for j in seen[np.argsort(first, kind="stable")].tolist():
            s = read_palette[j]
            if s not in index:
                index[s] = len(palette)
                palette.append(s)
            to_plan[j] = index[s]
        return xyz, palette, to_plan[read_idx].tolist()

    async def store_plan(self, project: Project, plan: Plan, bounds: common_pb2.Box, warnings: list[str],
                   conflicts: list[jpb.Conflict] | None = None) -> jpb.PlanSummary:
        """Persist an immutable plan (blob + row) and summarise it for the model.

        Every prepare path (recipes, undo, schematics) ends here, so plans look alike.
        """
        palette, n = plan.palette, len(plan)
        sha = self.core.blobs.put(plan.encode())
        desired, moved = plan.changes()
        changed = int(moved.sum())
        already = n - changed
        plan_id = "pl_" + secrets.token_hex(8)
        created = now_ms()
        expires = created + self.core.limits.plan_ttl_seconds * 1000
        # by block state: a chest with items is a chest (block-entity data left out, mcb_common.blockentity)
        per_index = np.bincount(desired[moved], minlength=len(palette))
        materials: Counter = Counter()
        for i in np.flatnonzero(per_index).tolist():
            materials[strip_data(palette[i])] += int(per_index[i])
        batches = -(-n // self.core.limits.batch_blocks)
        summary = jpb.PlanSummary(
            plan_id=plan_id, plan_hash=sha, changed_blocks=changed, already_blocks=already,
            region=bounds, expires_at=iso(expires), total_positions=n, batches=batches,
            world_epoch=plan.world_epoch, warnings=warnings,
        )
        for state, count in sorted(materials.items(), key=lambda kv: (-kv[1], kv[0]))[:32]:
            summary.materials.append(common_pb2.StateCount(state=state, count=count))
        if len(materials) > 32:
            summary.warnings.append(f"{len(materials) - 32} more materials not listed")
        replaced = await self.replaced_blocks(plan)
        fill_replaced(summary, replaced)
        if replaced["total"]:
            by = replaced["by_source"]
            summary.warnings.append(
                f"{replaced['total']} existing non-air blocks will be replaced ("
                + ", ".join(f"{s} {v['count']}" for s, v in by.items()) + "; positions in `replaced`)"
                + (f"; {by['player']['count']} were placed by a player: build_apply refuses this plan unless "
                   "replace_player_blocks is true — ask the player first" if "player" in by else ""))
        for conflict in (conflicts or [])[: self.core.limits.sample_limit]:
            summary.conflicts.append(conflict)
        if conflicts and len(conflicts) > self.core.limits.sample_limit:
            summary.warnings.append(f"{len(conflicts)} conflicts in all; {self.core.limits.sample_limit} listed")
        with self.core.db.tx() as c:
            c.execute(
                "INSERT INTO plans(plan_id, project_id, plan_hash, blob_sha256, world_uuid, world_epoch,"
                " created_ms, expires_ms, changed, already, total, summary_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (plan_id, project.project_id, sha, sha, plan.world_uuid, plan.world_epoch, created, expires,
                 changed, already, n, json.dumps({"conflicts": len(conflicts or []),
                                                  "observed_oid": self.core.observed_oid(),
                                                  "replaced": replaced})),
            )
        return summary

    async def replaced_blocks(self, plan: Plan) -> dict[str, Any]:
        """The non-air blocks ``plan`` replaces, counted by who placed them (consent.py; the
        journal's records are read off the event loop, reads.py)."""
        palette, xyz = plan.palette, plan.xyz
        air = np.array([s.split("[")[0] in AIR_NAMES for s in palette], dtype=bool).reshape(len(palette))
        _, moved = plan.changes()
        base = np.asarray(plan.base, dtype=np.int64)
        replaced = [((xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]), palette[plan.base[i]])
                    for i in np.flatnonzero(moved & ~air[base]).tolist()]
        return count_sources(replaced, await self.core.reads.run(lambda db: classify(db, replaced)))

    async def sync_events(self) -> None:
        """Bring the observed events up to now before a prepare counts who placed what."""
        observer = self.core.observer
        if observer is None:
            return
        try:
            await observer.sync()
        except McbError as err:  # counted from what was observed; the sources may say unknown
            log.warning("prepare: block events not read (%s); replaced blocks may count as unknown", err.message)



def fill_replaced(summary: jpb.PlanSummary, replaced: dict[str, Any]) -> None:
    summary.replaced.total = replaced["total"]
    for source, v in replaced["by_source"].items():
        summary.replaced.by_source.append(jpb.ReplacedBySource(
            source=source, count=v["count"], positions=[vec(tuple(p)) for p in v["positions"]]))
