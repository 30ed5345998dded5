"""Prepare: a write set becomes a stored, immutable plan and its summary for the model.

Every prepare path ends in planstore.py's ``store_plan`` (recipes here, undo.py, parts.py's
regeneration, schematics.py's import), so plans look alike. ``read_base`` is the shared first half for paths that start
from a write set: rights (parts.py), block rules and the base states read from the world.
Nothing here writes the world.
"""

from __future__ import annotations

import logging

import numpy as np
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb_common.errors import ErrorCode, McbError

from . import policy, worldid
from .blockrules import check_block_rules_indexed
from .context import JournalContext
from .parts import Parts
from .pbconv import box_pb
from .plans import Plan
from .planstore import store_plan, sync_events
from .projects import Caller, Project
from .recipeparts import parts_for_recipe
from .worldread import read_indexed, read_states

log = logging.getLogger("mcb.journal")


class Prepare:
    def __init__(self, ctx: JournalContext, parts: Parts):
        self.ctx = ctx
        self.parts = parts  # required: every write set is checked against the parts and their protection

    async def build_prepare(self, caller: Caller, req: jpb.BuildPrepareRequest) -> jpb.PlanSummary:
        project = self.ctx.projects.project_for(caller)
        if len(req.recipe_json.encode()) > self.ctx.limits.max_recipe_bytes:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"recipe is {len(req.recipe_json.encode()):,} bytes; the limit is {self.ctx.limits.max_recipe_bytes:,}",
            )
        info = await self.ctx.world.world_info()
        worldid.note_world(self.ctx.db, info.world_uuid, info.epoch)
        area = project.area
        compiled = await self.ctx.planner.compile(
            planner_pb2.CompileRequest(
                recipe_json=req.recipe_json,
                minecraft_version=info.minecraft_version or self.ctx.minecraft_version,
                limits=planner_pb2.Limits(
                    max_changed_blocks=self.ctx.limits.max_changed_blocks,
                    max_examined_positions=self.ctx.limits.max_examined_positions,
                ),
                area=box_pb(area),
                parts=parts_for_recipe(self.ctx, project.project_id, req.recipe_json),
            )
        )
        ws = compiled.write_set
        if len(ws.state) == 0:
            raise McbError(ErrorCode.INVALID_REQUEST, "the recipe places no blocks")
        if req.regenerate_part_id:
            self.parts.check_write_set(caller, project.project_id, list(ws.xyz), "")
            return await self.parts.regenerate(caller, project, req.regenerate_part_id, ws, compiled, info)
        xyz, palette, base = await self.read_base(caller, project, ws, req.part_id)
        deps: list[tuple[int, int, int, str]] = []
        if req.dependencies:
            dep_xyz: list[int] = []
            for d in req.dependencies:
                refused = policy.area_refusal(area, (d.pos.x, d.pos.y, d.pos.z), "dependency")
                if refused is not None:
                    raise refused
                dep_xyz += [d.pos.x, d.pos.y, d.pos.z]
            current = await read_states(self.ctx.world, dep_xyz)
            for d, cur in zip(req.dependencies, current, strict=True):
                if d.state and d.state != cur:
                    raise McbError(
                        ErrorCode.CONFLICT,
                        f"dependency at {d.pos.x},{d.pos.y},{d.pos.z} holds {cur}, not {d.state}",
                        details={"pos": [d.pos.x, d.pos.y, d.pos.z], "current": cur},
                    )
                deps.append((d.pos.x, d.pos.y, d.pos.z, cur))
        plan = Plan(
            palette=palette,
            xyz=xyz,
            desired=list(ws.state),
            base=base,
            dependencies=deps,
            world_uuid=info.world_uuid,
            world_epoch=info.epoch,
            recipe_hash=compiled.recipe_hash,
        )
        return await self.store_plan(project, plan, compiled.bounds, list(compiled.warnings))

    async def read_base(
        self, caller: Caller, project: Project, ws: common_pb2.BlockList, part_id: str = ""
    ) -> tuple[list[int], list[str], list[int]]:
        """A write set's positions checked (parts.py: parts, protection) and their base states
        read from the world: (xyz, palette = desired states + base states, base indices).
        Shared by every prepare path that starts from a write set (recipes, schematics)."""
        xyz = list(ws.xyz)
        self.parts.check_write_set(caller, project.project_id, xyz, part_id)
        read_palette, read_idx = await read_indexed(self.ctx.world, xyz)
        await sync_events(self.ctx)  # every event up to the read: who placed the blocks it replaces
        # Block entities, fluids, gravity support: refused before anything is stored (issue 4).
        await check_block_rules_indexed(self.ctx.world, xyz, list(ws.palette), list(ws.state), read_palette, read_idx)
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

    async def store_plan(
        self,
        project: Project,
        plan: Plan,
        bounds: common_pb2.Box,
        warnings: list[str],
        conflicts: list[jpb.Conflict] | None = None,
    ) -> jpb.PlanSummary:
        """planstore.store_plan on this context (a plan from entries made elsewhere: tests, benches)."""
        return await store_plan(self.ctx, project, plan, bounds, warnings, conflicts)
