"""Undo, crash-recovery decisions, parts and the change feed (ARCHITECTURE §3).

All of them reason over two journal tables: ``written`` (what our operations actually wrote,
with the state each write replaced) and ``observed`` (what the world host saw happen, in
order, with ``gap`` rows where observation was lost) — read through ``history.History``,
which also answers from finished operations' packed rows. They never write the world: undo
produces an ordinary plan for ``build_apply``; recovery decisions only record.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import defaultdict
from typing import Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3

from . import operations, worldid
from .core import Caller, JournalCore, box_pb, vec
from .db import now_ms
from .history import History
from .observer import Observer
from .plans import Plan
from .states import OpState
from .worldread import read_states

Pos = tuple[int, int, int]
MAX_MASK = 200_000


def _bounds(positions: list[Pos]) -> Box:
    xs, ys, zs = zip(*positions, strict=True)
    return Box(Vec3(min(xs), min(ys), min(zs)), Vec3(max(xs), max(ys), max(zs)))


def _box6(positions: list[Pos]) -> tuple[int, int, int, int, int, int]:
    b = _bounds(positions)
    return b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z


def digest_of(states: dict[Pos, str]) -> str:
    h = hashlib.sha256()
    for (x, y, z) in sorted(states):
        h.update(f"{x},{y},{z}={states[(x, y, z)]}\n".encode())
    return h.hexdigest()


class Safety:
    def __init__(self, core: JournalCore, observer: Observer):
        self.core = core
        self.db = core.db
        self.observer = observer

    # ------------------------------------------------------------------ conflicts
    async def classify(self, positions: list[Pos], since_oid: int) -> dict[Pos, str]:
        """Who changed each position since ``since_oid``: player / environment / external.

        ``external`` means no observed event explains the change (a plugin, an editor, a
        path that emits no event) — never guessed to be a player.
        """
        try:
            await self.observer.sync()
        except McbError:
            pass
        out: dict[Pos, str] = {}
        for p in positions:
            row = self.db.one(
                "SELECT source FROM observed WHERE kind='event' AND x=? AND y=? AND z=? AND oid>? AND source!='ours'"
                " ORDER BY oid DESC LIMIT 1", p[0], p[1], p[2], since_oid)
            out[p] = row["source"] if row is not None else "external"
        return out

    # ------------------------------------------------------------------ undo
    async def undo_prepare(self, caller: Caller, op_id: str) -> jpb.PlanSummary:
        core = self.core
        project = core.project_for(caller)
        core._own_operation(caller, op_id)
        op = self.db.one("SELECT * FROM operations WHERE op_id=?", op_id)
        assert op is not None
        extra = self.db.one("SELECT * FROM op_extra WHERE op_id=?", op_id)
        if extra is not None and extra["undo_forbidden"]:
            raise McbError(ErrorCode.PERMISSION_DENIED,
                           f"operation {op_id} was abandoned after a crash; its undo is forbidden for good")
        if op["state"] in (OpState.PREPARED, OpState.QUEUED, OpState.APPLYING, OpState.RECOVERY_REQUIRED):
            raise McbError(ErrorCode.BUSY if op["state"] != OpState.RECOVERY_REQUIRED else ErrorCode.RECOVERY_REQUIRED,
                           f"operation {op_id} is {op['state']}; undo needs a finished operation")
        rows = History(self.db).writes_of(op_id, certain_only=True)
        if len(rows) > MAX_MASK:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"operation wrote {len(rows):,} blocks; undo handles {MAX_MASK:,}")
        try:
            await self.observer.sync()
            observed_ok = True
        except McbError:
            observed_ok = False
        info = await core.world.world_info()
        worldid.check(f"operation {op_id}", worldid.of_operation(self.db, op_id), info.world_uuid)
        xyz: list[int] = []
        for r in rows:
            xyz += [r["x"], r["y"], r["z"]]
        current = await read_states(core.world, xyz) if rows else []
        keep: list[tuple[Pos, str, str]] = []  # (pos, current=after, before)
        conflicts: list[jpb.Conflict] = []
        gaps_after = self.db.row(
            "SELECT COUNT(*) AS n FROM observed WHERE kind='gap' AND at_ms>=?", op["created_ms"])["n"]
        # No await from here on: packing cannot move rows while `history` reads them.
        history = History(self.db, _box6([(r["x"], r["y"], r["z"]) for r in rows]) if rows else None)
        for r, cur in zip(rows, current, strict=True):
            p = (r["x"], r["y"], r["z"])
            reason = None
            later_ours = history.later_write(p, r["wid"])
            if later_ours is not None:
                reason = ("ours", f"later written by operation {later_ours}")
            else:
                ev = self._later_foreign_event(history, op_id, p)
                if ev is not None:
                    reason = (ev["source"], f"changed by a {ev['source']} after our write"
                                            + (" (and changed back)" if cur == r["after"] else ""))
                elif cur != r["after"]:
                    reason = ("external", "holds another state than we wrote, with no observed event")
            if reason is None:
                keep.append((p, cur, r["before"]))
            else:
                conflicts.append(jpb.Conflict(pos=vec(p), expected=r["after"], current=cur, desired=r["before"],
                                              source=reason[0]))
        warnings = [f"undo of {op_id}: {len(keep)} blocks return to their previous state; "
                    f"{len(conflicts)} are conflicts and stay as they are"]
        if gaps_after or not observed_ok:
            warnings.append("block events were not observed for part of the time since this operation "
                            "(world host restart or link loss): for those moments only the current state was checked")
        keep.sort(key=lambda k: (-k[0][1], k[0][2], k[0][0]))  # top-down: remove upper blocks first
        plan = Plan.from_entries(keep, info.world_uuid, info.epoch, f"undo:{op_id}")
        bounds = box_pb(_bounds([k[0] for k in keep])) if keep else common_pb2.Box()
        summary = core.store_plan(project, plan, bounds, warnings, conflicts)
        row = self.db.row("SELECT summary_json FROM plans WHERE plan_id=?", summary.plan_id)
        doc = json.loads(row["summary_json"]) | {"undo_of": op_id}
        with self.db.tx() as tx:
            tx.execute("UPDATE plans SET summary_json=? WHERE plan_id=?", (json.dumps(doc), summary.plan_id))
        return summary

    def _later_foreign_event(self, history: History, op_id: str, p: Pos) -> Any:
        """The first observed event at ``p`` after our own write there that is not that write."""
        ours = history.last_ours_oid(op_id, p)
        since = ours if ours is not None else self._oid_at_start(op_id)
        return history.first_event_after(p, since, op_id)

    def _oid_at_start(self, op_id: str) -> int:
        row = self.db.one("SELECT observed_at_start FROM op_extra WHERE op_id=?", op_id)
        return int(row["observed_at_start"]) if row is not None else 0

    # ------------------------------------------------------------------ recovery
    def _mask(self, op_id: str) -> dict[Pos, tuple[str, str]]:
        """Confirmed writes of settled batches + potential writes of the unfinished one."""
        import zlib

        mask: dict[Pos, tuple[str, str]] = {}
        for r in History(self.db).writes_of(op_id):
            mask[(r["x"], r["y"], r["z"])] = (r["before"], r["after"])
        for b in self.db.all("SELECT seq, entries, entries_sha256 FROM batches WHERE op_id=? AND state='intent'",
                             op_id):
            raw = zlib.decompress(b["entries"])
            if hashlib.sha256(raw).hexdigest() != b["entries_sha256"]:
                raise McbError(ErrorCode.INTERNAL,
                               f"the intent record of batch {b['seq']} of {op_id} fails its checksum; "
                               "the journal database is damaged — restore a backup")
            for x, y, z, exp, des in json.loads(raw):
                if exp != des:
                    mask[(x, y, z)] = (exp, des)
        return mask

    async def recovery_review(self, op_id: str) -> jpb.RecoveryReviewResponse:
        op = self.db.one("SELECT state, plan_id FROM operations WHERE op_id=?", op_id)
        if op is None:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found")
        if op["state"] != OpState.RECOVERY_REQUIRED:
            raise McbError(ErrorCode.INVALID_REQUEST, f"operation {op_id} is {op['state']}, not recovery_required")
        mask = self._mask(op_id)
        positions = sorted(mask)
        flat = [c for p in positions for c in p]
        current = await read_states(self.core.world, flat) if positions else []
        states = dict(zip(positions, current, strict=True))
        before = sum(1 for p in positions if states[p] == mask[p][0])
        after = sum(1 for p in positions if states[p] == mask[p][1] and mask[p][1] != mask[p][0])
        foreign = sum(1 for p in positions if states[p] not in mask[p])
        return jpb.RecoveryReviewResponse(
            operation_id=op_id, plan_id=op["plan_id"] or "", positions=len(positions), matches_before=before,
            matches_after=after, foreign_states=foreign, current_digest=digest_of(states), sampled_at_millis=now_ms())

    async def recovery_abandon(self, op_id: str, expected_digest: str, principal: str) -> jpb.OperationReport:
        review = await self.recovery_review(op_id)
        if not expected_digest or review.current_digest != expected_digest:
            raise McbError(ErrorCode.INVALID_REQUEST,
                           "the blocks of this operation changed since the review (digest differs); "
                           "run recovery review again and decide on the new digest",
                           details={"current_digest": review.current_digest})
        mask = self._mask(op_id)
        t = now_ms()
        with self.db.tx() as c:
            # Decision first, in the same transaction as its effects: durable before the answer.
            c.execute("INSERT INTO decisions(op_id, decision, digest, decided_ms, principal) VALUES (?,?,?,?,?)",
                      (op_id, "abandon", expected_digest, t, principal))
            c.execute("INSERT INTO op_extra(op_id, undo_forbidden) VALUES (?, 1)"
                      " ON CONFLICT(op_id) DO UPDATE SET undo_forbidden=1", (op_id,))
            confirmed = {(r["x"], r["y"], r["z"]) for r in History(self.db).writes_of(op_id)}
            # Potential writes count as later writes for every earlier operation's undo.
            for (x, y, z), (b, a) in mask.items():
                if (x, y, z) not in confirmed:
                    c.execute("INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms)"
                              " VALUES (?,?,?,?,?,?,1,?)", (op_id, x, y, z, b, a, t))
            c.execute("UPDATE batches SET state='abandoned', done_ms=? WHERE op_id=? AND state='intent'", (t, op_id))
            operations.set_state(
                self.db, op_id, OpState.FAILED, conn=c,
                message=f"abandoned by an admin after a crash: blocks left as they are ({review.matches_after} match "
                        f"our write, {review.matches_before} the previous state, {review.foreign_states} other); "
                        "undo is forbidden for this operation")
        return self.core.report(op_id)

    # ------------------------------------------------------------------ parts
    async def part_define(self, caller: Caller, name: str, op_id: str) -> dict[str, Any]:
        core = self.core
        project = core.project_for(caller)
        name = name.strip()
        if not name or len(name) > 64:
            raise McbError(ErrorCode.INVALID_REQUEST, "part name must be 1–64 characters")
        core._own_operation(caller, op_id)
        worldid.check(f"operation {op_id}", worldid.of_operation(self.db, op_id),
                      (await core.world.world_info()).world_uuid)
        op = self.db.row("SELECT state FROM operations WHERE op_id=?", op_id)  # _own_operation: it exists
        if op["state"] not in (OpState.APPLIED, OpState.CONFLICT, OpState.CANCELLED):
            raise McbError(ErrorCode.INVALID_REQUEST,
                           f"operation {op_id} is {op['state']}; a part is defined from a finished operation")
        prow = self.db.one("SELECT p.summary_json FROM plans p JOIN operations o ON o.plan_id=p.plan_id"
                           " WHERE o.op_id=?", op_id)
        pdoc = json.loads(prow["summary_json"] or "{}") if prow is not None else {}
        if pdoc.get("design_sha") and op["state"] == OpState.APPLIED:
            # A regeneration: the part is the whole new design (kept blocks included).
            sha = pdoc["design_sha"]
            positions = [tuple(p) for p in json.loads(core.blobs.get(sha))["positions"]]
        else:
            rows = History(self.db).writes_of(op_id, certain_only=True)
            if not rows:
                raise McbError(ErrorCode.INVALID_REQUEST, f"operation {op_id} wrote no blocks; nothing to define")
            positions = sorted({(r["x"], r["y"], r["z"]) for r in rows})
            mask = {"positions": [list(p) for p in positions],
                    "generated": {f"{r['x']},{r['y']},{r['z']}": r["after"] for r in rows}}
            sha = core.blobs.put(json.dumps(mask, sort_keys=True, separators=(",", ":")).encode())
        bounds = _bounds(positions)
        same = self.db.one("SELECT part_id, protected FROM parts WHERE project_id=? AND name=?",
                           project.project_id, name)
        # Parts do not overlap; redefining a part under its own name (e.g. after regenerating
        # it) replaces its mask.
        mine = set(positions)
        for other in self.db.all("SELECT part_id, name FROM parts WHERE project_id=?", project.project_id):
            if same is not None and other["part_id"] == same["part_id"]:
                continue
            overlap = mine & self.part_mask(other["part_id"])
            if overlap:
                raise McbError(ErrorCode.INVALID_REQUEST,
                               f"{len(overlap)} of these blocks already belong to part {other['name']!r} "
                               f"({other['part_id']}); parts may not overlap — redefine that part under its "
                               "own name, or build the extension as a separate operation",
                               details={"part_id": other["part_id"], "overlap": len(overlap)})
        if same is not None and same["protected"] and caller.principal != "admin":
            raise McbError(ErrorCode.PERMISSION_DENIED, f"part {name!r} is protected; only an admin can redefine it")
        part_id = same["part_id"] if same is not None else "pt_" + secrets.token_hex(6)
        with self.db.tx() as c:
            if same is not None:
                c.execute("UPDATE parts SET op_id=?, bounds_json=?, count=?, mask_sha256=?, observed_at_define=?"
                          " WHERE part_id=?", (op_id, json.dumps(bounds.as_dict()), len(positions), sha,
                                               self.observer.last_oid(), part_id))
            else:
                c.execute("INSERT INTO parts(part_id, project_id, name, op_id, protected, bounds_json, count,"
                          " mask_sha256, observed_at_define, created_ms) VALUES (?,?,?,?,0,?,?,?,?,?)",
                          (part_id, project.project_id, name, op_id, json.dumps(bounds.as_dict()), len(positions),
                           sha, self.observer.last_oid(), now_ms()))
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
        doc = json.loads(self.core.blobs.get(row["mask_sha256"]))
        return {(x, y, z) for x, y, z in doc["positions"]}

    async def part_get(self, caller: Caller, part_id: str) -> dict[str, Any]:
        project = self.core.project_for(caller)
        try:
            await self.observer.sync()
        except McbError:
            pass  # reported through "complete" below when a gap follows
        row = self.db.one("SELECT * FROM parts WHERE part_id=? AND project_id=?", part_id, project.project_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id!r} not found in project {project.project_id!r}")
        mask = self.part_mask(part_id)
        b = json.loads(row["bounds_json"])
        changed: dict[str, int] = defaultdict(int)
        for e in self.db.all(
            "SELECT x, y, z, source FROM observed WHERE kind='event' AND oid>? AND source!='ours'"
            " AND x BETWEEN ? AND ? AND y BETWEEN ? AND ? AND z BETWEEN ? AND ?",
            row["observed_at_define"], b["min"]["x"], b["max"]["x"], b["min"]["y"], b["max"]["y"],
            b["min"]["z"], b["max"]["z"]):
            if (e["x"], e["y"], e["z"]) in mask:
                changed[e["source"]] += 1
        gap = self.db.row("SELECT COUNT(*) AS n FROM observed WHERE kind='gap' AND oid>?", row["observed_at_define"])["n"]
        return {"part_id": part_id, "name": row["name"], "operation_id": row["op_id"], "bounds": b,
                "block_count": row["count"], "protected": bool(row["protected"]),
                "external_changes_since": {"count": sum(changed.values()), "by_source": dict(changed),
                                           "complete": gap == 0}}

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
                raise McbError(ErrorCode.OUT_OF_BOUNDS,
                               f"{len(outside)} block(s) fall outside part {part_id}'s exact mask, e.g. {sample}; "
                               "an extension needs a new part",
                               details={"outside": len(outside), "samples": [list(p) for p in sample]})
        if caller.principal == "admin":
            return
        protected = self.db.all("SELECT part_id, name FROM parts WHERE project_id=? AND protected=1", project_id)
        written = positions() if protected else set()
        for r in protected:
            hit = written & self.part_mask(r["part_id"])
            if hit:
                raise McbError(ErrorCode.PERMISSION_DENIED,
                               f"{len(hit)} block(s) belong to the protected part {r['name']!r} ({r['part_id']}); "
                               "only an admin can unprotect it",
                               details={"part_id": r["part_id"], "blocks": len(hit)})

    # ------------------------------------------------------------------ regenerate
    async def regenerate(self, caller: Caller, project: Any, part_id: str, ws: Any, compiled: Any,
                         info: Any) -> jpb.PlanSummary:
        """build_prepare(regenerate_part_id=…): the three-way merge of merge.py as a plan."""
        from .merge import three_way

        row = self.db.one("SELECT * FROM parts WHERE part_id=? AND project_id=?", part_id, project.project_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"part {part_id!r} not found in this project")
        worldid.check(f"part {part_id}", worldid.of_operation(self.db, row["op_id"]), info.world_uuid)
        doc = json.loads(self.core.blobs.get(row["mask_sha256"]))
        g0: dict[Pos, str] = {}
        for k, st in doc["generated"].items():
            x, y, z = (int(v) for v in k.split(","))
            g0[(x, y, z)] = st
        pal = list(ws.palette)
        g1 = {(ws.xyz[3 * i], ws.xyz[3 * i + 1], ws.xyz[3 * i + 2]): pal[s] for i, s in enumerate(ws.state)}
        # Blocks leaving the design return to what was there before we first built them.
        before: dict[Pos, str] = {}
        leaving = set(g0) - set(g1)
        history = History(self.db, _box6(list(leaving)) if leaving else None)
        for p in leaving:
            r = history.first_certain_write(p)
            before[p] = r["before"] if r is not None else "minecraft:air"
        positions = sorted(set(g0) | set(g1), key=lambda p: (p[1], p[2], p[0]))
        flat = [c for p in positions for c in p]
        current = dict(zip(positions, await read_states(self.core.world, flat), strict=True))
        await self.core.sync_events()  # who placed what the merge replaces (consent.py)
        result = three_way(g0, before, current, g1)
        entries = sorted([(p, b, d) for p, (b, d) in result.writes.items()]
                         + [(p, current[p], current[p]) for p in result.already],
                         key=lambda e: (e[0][1], e[0][2], e[0][0]))
        plan = Plan.from_entries(entries, info.world_uuid, info.epoch,
                                 f"regenerate:{part_id}:{compiled.recipe_hash}")
        conflicts = [jpb.Conflict(pos=vec(p), expected=g0v, current=c, desired=g1v, source="unknown",
                                  part_id=part_id) for p, (g0v, c, g1v) in result.conflicts.items()]
        if conflicts:
            sources = await self.classify([(c.pos.x, c.pos.y, c.pos.z) for c in conflicts],
                                          row["observed_at_define"])
            for c in conflicts:
                c.source = sources.get((c.pos.x, c.pos.y, c.pos.z), "external")
        warnings = list(compiled.warnings) + [
            f"regenerating part {row['name']!r}: {len(result.writes)} blocks change, {len(result.kept)} keep "
            f"their current state (design unchanged there; manual edits survive), {len(result.conflicts)} "
            "conflicts (both the design and the world changed) are left as they are"]
        bounds = box_pb(_bounds(positions))
        summary = self.core.store_plan(project, plan, bounds, warnings, conflicts)
        # The new design, for redefining the part from this operation once it is applied.
        design = {"positions": sorted([list(p) for p in g1]),
                  "generated": {f"{x},{y},{z}": st for (x, y, z), st in g1.items()}}
        design_sha = self.core.blobs.put(json.dumps(design, sort_keys=True, separators=(",", ":")).encode())
        prow = self.db.row("SELECT summary_json FROM plans WHERE plan_id=?", summary.plan_id)
        doc = json.loads(prow["summary_json"]) | {"regenerates": part_id, "design_sha": design_sha}
        with self.db.tx() as tx:
            tx.execute("UPDATE plans SET summary_json=? WHERE plan_id=?", (json.dumps(doc), summary.plan_id))
        return summary

    # ------------------------------------------------------------------ change feed
    async def region_changes(self, caller: Caller, box: Box, since_cursor: str, limit: int, source: str = "",
                             max_bytes: int = 0) -> dict[str, Any]:
        """The change feed; feed.py has the rules (ranges, people first, page size)."""
        from . import feed

        self.core.project_for(caller)
        if source not in feed.FILTERS:
            raise McbError(ErrorCode.INVALID_REQUEST, f"source {source!r} is unknown; use player, environment, ours, "
                                                      "foreign (player + environment) or leave it empty for all")
        limit = feed.PAGE_EVENTS if limit <= 0 else min(limit, feed.PAGE_EVENTS)
        max_bytes = max_bytes or feed.PAGE_BYTES
        if not feed.PAGE_BYTES_MIN <= max_bytes <= feed.PAGE_BYTES_MAX:
            raise McbError(ErrorCode.INVALID_REQUEST,
                           f"max_bytes is {feed.PAGE_BYTES_MIN}..{feed.PAGE_BYTES_MAX} (default {feed.PAGE_BYTES})")
        info = await self.core.world.world_info()
        try:
            await self.observer.sync()
        except McbError as err:
            raise McbError(ErrorCode.UNAVAILABLE, f"cannot read the world host's events: {err.message}") from err
        latest = self.observer.last_oid()

        def cursor(since: int, upto: int = 0, phase: int = 0, after: int = 0) -> str:
            key = feed.region_key(box, source if upto else None)
            return f"rc2.{info.world_uuid[:8]}.{info.epoch}.{key}.{since}.{upto}.{phase}.{after}"

        if not since_cursor:
            return {"changes": 0, "by_source": {}, "events": [], "remaining": 0, "next_cursor": cursor(latest),
                    "complete": True, "resync_required": False,
                    "note": "fresh cursor: changes after this moment will be reported"}
        wid, epoch, since, upto, phase, after = feed.parse_cursor(since_cursor, box, source)
        upto = upto or latest  # an open cursor: this call fixes the range (since, upto]
        reason = ""
        worldid.check("this change cursor", wid, info.world_uuid)
        if wid != info.world_uuid[:8] or epoch != str(info.epoch):
            reason = "the world or its epoch changed since this cursor"
        elif since > latest or upto > latest or since > upto:
            reason = "the cursor is ahead of this journal's log (was the journal reset?)"
        else:
            gap = self.db.one("SELECT reason FROM observed WHERE kind='gap' AND oid>? AND oid<=? ORDER BY oid LIMIT 1",
                              since, upto)
            if gap is not None:
                reason = f"observation was interrupted: {gap['reason']}"
            oldest = History(self.db).oldest_oid()
            if oldest is not None and since < oldest - 1:
                reason = "the change log was trimmed past this cursor"
        if reason:
            raise McbError(ErrorCode.RESYNC_REQUIRED,
                           f"{reason}; read a fresh region_inspect summary, then call region_changes with an "
                           "empty since_cursor to start again",
                           details={"next_cursor": cursor(latest)})
        rows = feed.range_rows(self.db, box, since, upto)
        head = feed.summarise(self.db, caller.project_id, self.part_mask, rows, source)
        return feed.page_of(rows, source, phase, after, head, limit, max_bytes,
                            lambda ph, oid: cursor(upto) if ph is None else cursor(since, upto, ph, oid))
