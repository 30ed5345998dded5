"""Parts (ARCHITECTURE §3): named, non-overlapping masks of what an operation built; their
protection; the check that a write set stays inside a part and off protected ones; and
regeneration (a part rebuilt from a changed design by merge.py's three-way merge, as a plan).

A part's mask is a blob (positions + the states we generated there); ``part_get`` reports the
foreign changes observed inside it since it was defined.
"""

from __future__ import annotations

import json
import secrets
from collections import defaultdict
from typing import Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError

from . import changes, policy, worldid
from .blobs import BlobStore
from .context import JournalContext
from .db import Database, now_ms
from .history import History, Pos, box6_around, box_around
from .merge import three_way
from .pbconv import box_pb, vec
from .plans import Plan, PlanOrigin
from .planstore import plan_origin, store_plan, sync_events
from .projects import Caller, Project
from .states import OpState
from .worldread import read_states


class Parts:
    def __init__(self, ctx: JournalContext):
        self.ctx = ctx
        self.db = ctx.db
        self.observer = ctx.observer

    async def part_define(self, caller: Caller, name: str, op_id: str) -> dict[str, Any]:
        core = self.ctx
        project = core.projects.project_for(caller)
        name = name.strip()
        if not name or len(name) > 64:
            raise McbError(ErrorCode.INVALID_REQUEST, "part name must be 1–64 characters")
        core.own_operation(caller, op_id)
        worldid.check(
            f"operation {op_id}", worldid.of_operation(self.db, op_id), (await core.world.world_info()).world_uuid
        )
        op = self.db.row("SELECT plan_id, state FROM operations WHERE op_id=?", op_id)  # own_operation: it exists
        if op["state"] not in (OpState.APPLIED, OpState.CONFLICT, OpState.CANCELLED):
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"operation {op_id} is {op['state']}; a part is defined from a finished operation",
            )
        origin = plan_origin(self.db, op["plan_id"]) if op["plan_id"] else None
        if origin is not None and origin.design_sha and op["state"] == OpState.APPLIED:
            # A regeneration: the part is the whole new design (kept blocks included).
            sha = origin.design_sha
            positions = [tuple(p) for p in json.loads(core.blobs.get(sha))["positions"]]
        else:
            positions, sha = await core.reads.run(lambda db: _written_mask(db, core.blobs, op_id))
        bounds = box_around(positions)
        same = self.db.one(
            "SELECT part_id, protected FROM parts WHERE project_id=? AND name=?", project.project_id, name
        )
        # Parts do not overlap; redefining a part under its own name (e.g. after regenerating
        # it) replaces its mask.
        mine = set(positions)
        for other in self.db.all("SELECT part_id, name FROM parts WHERE project_id=?", project.project_id):
            if same is not None and other["part_id"] == same["part_id"]:
                continue
            overlap = mine & self.part_mask(other["part_id"])
            if overlap:
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    f"{len(overlap)} of these blocks already belong to part {other['name']!r} "
                    f"({other['part_id']}); parts may not overlap — redefine that part under its "
                    "own name, or build the extension as a separate operation",
                    details={"part_id": other["part_id"], "overlap": len(overlap)},
                )
        if same is not None and same["protected"] and not policy.overrides_protection(caller.principal):
            raise McbError(ErrorCode.PERMISSION_DENIED, f"part {name!r} is protected; only an admin can redefine it")
        part_id = same["part_id"] if same is not None else "pt_" + secrets.token_hex(6)
        with self.db.tx() as c:
            if same is not None:
                c.execute(
                    "UPDATE parts SET op_id=?, bounds_json=?, count=?, mask_sha256=?, observed_at_define=?"
                    " WHERE part_id=?",
                    (op_id, json.dumps(bounds.as_dict()), len(positions), sha, self.observer.last_oid(), part_id),
                )
            else:
                c.execute(
                    "INSERT INTO parts(part_id, project_id, name, op_id, protected, bounds_json, count,"
                    " mask_sha256, observed_at_define, created_ms) VALUES (?,?,?,?,0,?,?,?,?,?)",
                    (
                        part_id,
                        project.project_id,
                        name,
                        op_id,
                        json.dumps(bounds.as_dict()),
                        len(positions),
                        sha,
                        self.observer.last_oid(),
                        now_ms(),
                    ),
                )
        return await self.part_get(caller, part_id)

    def parts_at(self, project_id: str, positions: list[Pos]) -> dict[Pos, str]:
        """The part each position belongs to (parts do not overlap)."""
        out: dict[Pos, str] = {}
        wanted = set(positions)
        for r in self.db.all("SELECT part_id FROM parts WHERE project_id=?", project_id):
            for p in wanted & self.part_mask(r["part_id"]):
                out[p] = r["part_id"]
        return out

    def part_mask(self, part_id: str) -> set[Pos]:
        row = self.db.one("SELECT mask_sha256 FROM parts WHERE part_id=?", part_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id} not found")
        doc = json.loads(self.ctx.blobs.get(row["mask_sha256"]))
        return {(x, y, z) for x, y, z in doc["positions"]}

    async def part_get(self, caller: Caller, part_id: str) -> dict[str, Any]:
        project = self.ctx.projects.project_for(caller)
        try:
            await self.observer.sync()
        except McbError:
            pass  # reported through "complete" below when a gap follows
        row = self.db.one("SELECT * FROM parts WHERE part_id=? AND project_id=?", part_id, project.project_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id!r} not found in project {project.project_id!r}")
        # a part of an earlier world is refused as build_prepare(regenerate_part_id) refuses it:
        # its blocks and change counts say nothing about the world served now
        try:
            world = (await self.ctx.world.world_info()).world_uuid
        except McbError:  # the host does not answer: the world this journal saw last
            world = worldid.current(self.db)
        worldid.check(f"part {part_id}", worldid.of_operation(self.db, row["op_id"]), world)
        mask = self.part_mask(part_id)
        b = json.loads(row["bounds_json"])
        changed: dict[str, int] = defaultdict(int)
        for e in self.db.all(
            "SELECT x, y, z, source FROM observed WHERE kind='event' AND oid>? AND source!='ours'"
            " AND x BETWEEN ? AND ? AND y BETWEEN ? AND ? AND z BETWEEN ? AND ?",
            row["observed_at_define"],
            b["min"]["x"],
            b["max"]["x"],
            b["min"]["y"],
            b["max"]["y"],
            b["min"]["z"],
            b["max"]["z"],
        ):
            if (e["x"], e["y"], e["z"]) in mask:
                changed[e["source"]] += 1
        gap = self.db.row("SELECT COUNT(*) AS n FROM observed WHERE kind='gap' AND oid>?", row["observed_at_define"])[
            "n"
        ]
        return {
            "part_id": part_id,
            "name": row["name"],
            "operation_id": row["op_id"],
            "bounds": b,
            "block_count": row["count"],
            "protected": bool(row["protected"]),
            "external_changes_since": {
                "count": sum(changed.values()),
                "by_source": dict(changed),
                "complete": gap == 0,
            },
        }

    def part_protect(self, part_id: str, protected: bool) -> None:
        if self.db.one("SELECT 1 FROM parts WHERE part_id=?", part_id) is None:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id} not found")
        with self.db.tx() as c:
            c.execute("UPDATE parts SET protected=? WHERE part_id=?", (1 if protected else 0, part_id))

    def check_write_set(self, caller: Caller, project_id: str, xyz: list[int], part_id: str) -> None:
        """A write set must stay inside the given part's exact mask (bounds are not a mask), and
        may not touch any protected part unless the caller is an admin."""

        def positions() -> set[tuple[int, int, int]]:  # built only when a mask is compared
            return set(zip(xyz[0::3], xyz[1::3], xyz[2::3], strict=True))

        if part_id:
            row = self.db.one("SELECT 1 FROM parts WHERE part_id=? AND project_id=?", part_id, project_id)
            if row is None:
                raise McbError(ErrorCode.NOT_FOUND, f"part {part_id!r} not found in this project")
            outside = positions() - self.part_mask(part_id)
            if outside:
                sample = sorted(outside)[:5]
                raise McbError(
                    ErrorCode.OUT_OF_BOUNDS,
                    f"{len(outside)} block(s) fall outside part {part_id}'s exact mask, e.g. {sample}; "
                    "an extension needs a new part",
                    details={"outside": len(outside), "samples": [list(p) for p in sample]},
                )
        if policy.overrides_protection(caller.principal):
            return
        protected = self.db.all("SELECT part_id, name FROM parts WHERE project_id=? AND protected=1", project_id)
        written = positions() if protected else set()
        for r in protected:
            hit = written & self.part_mask(r["part_id"])
            if hit:
                raise McbError(
                    ErrorCode.PERMISSION_DENIED,
                    f"{len(hit)} block(s) belong to the protected part {r['name']!r} ({r['part_id']}); "
                    "only an admin can unprotect it",
                    details={"part_id": r["part_id"], "blocks": len(hit)},
                )

    async def regenerate(
        self,
        caller: Caller,
        project: Project,
        part_id: str,
        ws: common_pb2.BlockList,
        compiled: planner_pb2.CompileResponse,
        info: world_pb2.WorldInfo,
    ) -> jpb.PlanSummary:
        """build_prepare(regenerate_part_id=…): the three-way merge of merge.py as a plan."""
        row = self.db.one("SELECT * FROM parts WHERE part_id=? AND project_id=?", part_id, project.project_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id!r} not found in this project")
        worldid.check(f"part {part_id}", worldid.of_operation(self.db, row["op_id"]), info.world_uuid)
        doc = json.loads(self.ctx.blobs.get(row["mask_sha256"]))
        g0: dict[Pos, str] = {}
        for k, st in doc["generated"].items():
            x, y, z = (int(v) for v in k.split(","))
            g0[(x, y, z)] = st
        pal = list(ws.palette)
        g1 = {(ws.xyz[3 * i], ws.xyz[3 * i + 1], ws.xyz[3 * i + 2]): pal[s] for i, s in enumerate(ws.state)}
        # Blocks leaving the design return to what was there before we first built them.
        before: dict[Pos, str] = {}
        leaving = set(g0) - set(g1)
        if leaving:
            before = await self.ctx.reads.run(lambda db: _first_befores(db, leaving))
        positions = sorted(set(g0) | set(g1), key=lambda p: (p[1], p[2], p[0]))
        flat = [c for p in positions for c in p]
        current = dict(zip(positions, await read_states(self.ctx.world, flat), strict=True))
        await sync_events(self.ctx)  # who placed what the merge replaces (consent.py)
        result = three_way(g0, before, current, g1)
        entries = sorted(
            [(p, b, d) for p, (b, d) in result.writes.items()] + [(p, current[p], current[p]) for p in result.already],
            key=lambda e: (e[0][1], e[0][2], e[0][0]),
        )
        plan = Plan.from_entries(entries, info.world_uuid, info.epoch, f"regenerate:{part_id}:{compiled.recipe_hash}")
        conflicts = [
            jpb.Conflict(pos=vec(p), expected=g0v, current=c, desired=g1v, source="unknown", part_id=part_id)
            for p, (g0v, c, g1v) in result.conflicts.items()
        ]
        if conflicts:
            sources = await changes.classify(
                self.db, self.observer, [(c.pos.x, c.pos.y, c.pos.z) for c in conflicts], row["observed_at_define"]
            )
            for c in conflicts:
                c.source = sources.get((c.pos.x, c.pos.y, c.pos.z), "external")
        warnings = list(compiled.warnings) + [
            f"regenerating part {row['name']!r}: {len(result.writes)} blocks change, {len(result.kept)} keep "
            f"their current state (design unchanged there; manual edits survive), {len(result.conflicts)} "
            "conflicts (both the design and the world changed) are left as they are"
        ]
        bounds = box_pb(box_around(positions))
        # The new design, for redefining the part from this operation once it is applied.
        design = {
            "positions": sorted([list(p) for p in g1]),
            "generated": {f"{x},{y},{z}": st for (x, y, z), st in g1.items()},
        }
        design_sha = self.ctx.blobs.put(json.dumps(design, sort_keys=True, separators=(",", ":")).encode())
        return await store_plan(
            self.ctx, project, plan, bounds, warnings, conflicts, PlanOrigin(regenerates=part_id, design_sha=design_sha)
        )


def _first_befores(db: Database, positions: set[Pos]) -> dict[Pos, str]:
    """What stood at each position before we first built there (air where we never wrote)."""
    history = History(db, box6_around(list(positions)))
    out = {}
    for p in positions:
        r = history.first_certain_write(p)
        out[p] = r["before"] if r is not None else "minecraft:air"
    return out


def _written_mask(db: Database, blobs: BlobStore, op_id: str) -> tuple[list[Pos], str]:
    """The positions ``op_id`` certainly wrote and the blob of its part mask (positions and the
    state written at each), stored; off the event loop (reads.py)."""
    rows = History(db).writes_of(op_id, certain_only=True)
    if not rows:
        raise McbError(ErrorCode.INVALID_REQUEST, f"operation {op_id} wrote no blocks; nothing to define")
    positions = sorted({(r["x"], r["y"], r["z"]) for r in rows})
    mask = {
        "positions": [list(p) for p in positions],
        "generated": {f"{r['x']},{r['y']},{r['z']}": r["after"] for r in rows},
    }
    return positions, blobs.put(json.dumps(mask, sort_keys=True, separators=(",", ":")).encode())
