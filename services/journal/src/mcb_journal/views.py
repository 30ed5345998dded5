"""What the model reads of one project: its context (``project_context``: the project, the world,
the limits, the operations needing attention) and the world's blocks (``region_inspect``: a
summary, a heightmap, or pages of blocks behind a cursor). Reads only; on the context (context.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import OPERATION_TYPES
from mcb_common.registry import AIR_NAMES

from . import worldid
from .context import JournalContext
from .inspect import inspect_into
from .pbconv import box_from_pb, box_pb
from .projects import Caller
from .worldread import read_region


class Views:
    def __init__(self, ctx: JournalContext):
        self.ctx = ctx

    async def project_context(self, caller: Caller, include_old_worlds: bool = False) -> jpb.ProjectContextResponse:
        project = self.ctx.projects.project_for(caller)
        info = await self.ctx.world.world_info()
        L = self.ctx.limits
        resp = jpb.ProjectContextResponse(
            project=jpb.Project(
                project_id=project.project_id,
                name=project.name,
                owner_player_id=project.owner_player_id,
                area=box_pb(project.area),
                world_uuid=info.world_uuid,
            ),
            world=info,
            limits=jpb.PlanLimits(
                max_changed_blocks=L.max_changed_blocks,
                max_examined_positions=L.max_examined_positions,
                batch_blocks=L.batch_blocks,
                inspect_blocks_page=L.inspect_blocks_page,
                inspect_summary_positions=L.inspect_summary_positions,
                plan_ttl_seconds=L.plan_ttl_seconds,
            ),
            capabilities=[
                "region_inspect.summary",
                "region_inspect.blocks",
                "region_inspect.heightmap",
                "build_prepare",
                "build_apply",
                "operation_status",
                "operation_cancel",
                "asset_list",
                "schematic_export",
                "schematic_import_prepare",
            ],
            recipe_operations=list(OPERATION_TYPES),
            block_states_help=(
                f"Vanilla Minecraft {info.minecraft_version} block states, written like "
                "minecraft:oak_stairs[facing=east,half=bottom]; omitted properties take the "
                "block's defaults. Unknown names are refused with the nearest valid names."
            ),
        )
        # Operations of earlier worlds (`mcb world reset --keep-journal`) are marked old_world; the
        # recent ones list only the current world's unless asked for (worldid.OLD_WORLD_SQL).
        # needs_attention keeps them: a recovery_required operation blocks writes whatever its world.
        w = info.world_uuid
        select = (
            f"SELECT o.*, {worldid.OLD_WORLD_SQL} AS old_world FROM operations o"
            " LEFT JOIN plans p ON p.plan_id=o.plan_id WHERE o.project_id=?"
        )

        def brief(r: Any) -> jpb.OperationBrief:
            return jpb.OperationBrief(
                operation_id=r["op_id"],
                state=r["state"],
                plan_id=r["plan_id"],
                written=r["written"],
                message=r["message"],
                old_world=bool(r["old_world"]),
            )

        for r in self.ctx.db.all(
            select + " AND o.state IN ('recovery_required','conflict') ORDER BY o.updated_ms DESC LIMIT 10",
            w,
            w,
            project.project_id,
        ):
            resp.needs_attention.append(brief(r))
        only_current = "" if include_old_worlds else f" AND NOT {worldid.OLD_WORLD_SQL}"
        for r in self.ctx.db.all(
            select + only_current + " ORDER BY o.created_ms DESC LIMIT 5",
            w,
            w,
            project.project_id,
            *(() if include_old_worlds else (w, w)),
        ):
            resp.recent_operations.append(brief(r))
        if not include_old_worlds:
            resp.old_world_operations = self.ctx.db.row(
                f"SELECT COUNT(*) AS n FROM operations o LEFT JOIN plans p ON p.plan_id=o.plan_id"
                f" WHERE o.project_id=? AND {worldid.OLD_WORLD_SQL}",
                project.project_id,
                w,
                w,
            )["n"]
        return resp

    async def region_inspect(self, caller: Caller, req: jpb.RegionInspectRequest) -> jpb.RegionInspectResponse:
        self.ctx.projects.project_for(caller)
        if not req.HasField("min") or not req.HasField("max"):
            raise McbError(ErrorCode.INVALID_REQUEST, "region_inspect needs min and max as {x,y,z}")
        box = box_from_pb(req.min, req.max)
        detail = req.detail or "summary"
        if detail not in ("summary", "blocks", "heightmap"):
            raise McbError(
                ErrorCode.INVALID_REQUEST, f"detail {detail!r} is unknown; use 'summary', 'blocks' or 'heightmap'"
            )
        if box.volume > self.ctx.limits.inspect_summary_positions:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"region has {box.volume:,} positions; the limit is {self.ctx.limits.inspect_summary_positions:,}. "
                "Inspect a smaller region or several parts.",
                details={"positions": box.volume, "limit": self.ctx.limits.inspect_summary_positions},
            )
        resp = jpb.RegionInspectResponse(region=box_pb(box), detail=detail, positions=box.volume)
        if detail in ("summary", "heightmap"):
            # bounded palette, occupied boxes, heightmap; missing chunks marked unknown (issue 4)
            await inspect_into(self.ctx.world, resp, box, detail, req.step)
            return resp
        # blocks: one page of positions in YZX order, starting at the cursor's offset
        offset = self._parse_cursor(req.cursor, box)
        page = self.ctx.limits.inspect_blocks_page
        if req.max_positions:
            page = min(page, int(req.max_positions))
        layer = box.size.x * box.size.z
        y0 = box.min.y + offset // layer
        end = min(box.volume, offset + page)
        y1 = box.min.y + (end - 1) // layer
        slab = Box(Vec3(box.min.x, y0, box.min.z), Vec3(box.max.x, y1, box.max.z))
        palette, idx = await read_region(self.ctx.world, slab)
        base = (y0 - box.min.y) * layer
        sel = idx[offset - base : end - base]
        used = sorted(set(sel))
        remap = {old: new for new, old in enumerate(used)}
        resp.offset = offset
        resp.page_palette.extend(palette[i] for i in used)
        resp.page_states.extend(remap[i] for i in sel)
        counts = Counter(sel)
        self._fill_palette(resp, palette, counts)
        if end < box.volume:
            resp.truncated = True
            resp.next_cursor = self._make_cursor(end, box)
        return resp

    @staticmethod
    def _fill_palette(resp: jpb.RegionInspectResponse, palette: list[str], counts: Counter) -> None:
        merged: Counter = Counter()
        for i, n in counts.items():
            merged[palette[i]] += n
        for state, n in sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])):
            resp.palette.append(common_pb2.StateCount(state=state, count=n))
        resp.non_air = sum(n for s, n in merged.items() if s.split("[")[0] not in AIR_NAMES)

    @staticmethod
    def _make_cursor(offset: int, box: Box) -> str:
        b = box
        return f"b1.{offset}.{b.min.x}.{b.min.y}.{b.min.z}.{b.max.x}.{b.max.y}.{b.max.z}"

    @staticmethod
    def _parse_cursor(cursor: str, box: Box) -> int:
        if not cursor:
            return 0
        parts = cursor.split(".")
        try:
            if parts[0] != "b1" or len(parts) != 8:
                raise ValueError
            offset = int(parts[1])
            coords = [int(p) for p in parts[2:]]
        except ValueError:
            raise McbError(ErrorCode.INVALID_REQUEST, "cursor is not one this server issued") from None
        b = box
        if coords != [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z] or not 0 <= offset < b.volume:
            raise McbError(
                ErrorCode.INVALID_REQUEST, "cursor belongs to another region; repeat the call with the same min/max"
            )
        return offset
