"""The journal core: what the model asks of one project — its context, inspection, apply (an
operation queued for the executor, idempotent by key), status and cancel — and the state a
previous process left behind (recovery at start, verdicts a full disk kept in memory).

The jobs live beside it, one module each: projects.py (who may build where), prepare.py (plans),
operations.py (the only writer of operation state), executor.py (the batch pipeline), undo.py,
recovery.py, parts.py, changes.py (the feed), observer.py. Transport-free: it receives its ports
(ports.py: the world host, the planner; the progress queue) from app.py and speaks McbError;
servicer.py is the only gRPC-facing code.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.assets import AssetLibrary
from mcb_common.diskfull import is_disk_full
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import OPERATION_TYPES
from mcb_common.registry import AIR_NAMES

from . import operations, worldid
from .blobs import BlobStore
from .consent import refusal as consent_refusal
from .db import Database, now_ms
from .history import last_oid
from .inspect import inspect_into
from .packer import Packer
from .pbconv import box_from_pb, box_pb, iso, vec
from .plans import Plan
from .ports import CameraPort, PlannerPort, ProgressPort, WorldPort
from .prepare import Prepare
from .projects import Caller, Projects
from .reads import Reads
from .settings import JournalSettings
from .states import OpState
from .worldread import read_region

if TYPE_CHECKING:  # they import this module
    from .changes import Changes
    from .observer import Observer
    from .parts import Parts
    from .recovery import Recovery
    from .undo import Undo

log = logging.getLogger("mcb.journal")


@dataclass
class Limits:
    max_changed_blocks: int = 100_000
    max_examined_positions: int = 2_000_000
    batch_blocks: int = 512
    inspect_blocks_page: int = 4096
    inspect_summary_positions: int = 2_000_000
    plan_ttl_seconds: int = 600
    max_recipe_bytes: int = 256 * 1024
    sample_limit: int = 20


@dataclass
class JournalCore:
    db: Database
    blobs: BlobStore
    world: WorldPort
    planner: PlannerPort
    queue: ProgressPort  # the progress stream (Redis mcb:progress); the apply work never goes through Redis
    limits: Limits = field(default_factory=Limits)
    settings: JournalSettings = field(default_factory=JournalSettings)  # app.py: from the environment
    minecraft_version: str = "1.21.11"
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set when an operation is queued (executor.py)
    # Set by app.py: the observer of block events and the jobs that read it (undo.py, recovery.py,
    # parts.py, changes.py); None in tests that need none of them.
    observer: Observer | None = None
    parts: Parts | None = None
    undo: Undo | None = None
    recovery: Recovery | None = None
    changes: Changes | None = None
    max_waiting_operations: int = 32
    assets: AssetLibrary | None = None  # the schematic library, opened at first use (schematics.py)
    camera: CameraPort | None = None  # the camera worker, for an operation's Before picture (before.py)
    # op_id -> (state, message, error): verdicts reached while the disk was full (record_verdict)
    unrecorded: dict[str, tuple[OpState, str, McbError]] = field(default_factory=dict)
    # The projects (app.py points projects.file at the runtime config: its `projects` are re-read
    # when the file changes, players create projects and move areas in game) and plan preparation.
    projects: Projects = field(init=False)
    prepare: Prepare = field(init=False)
    packer: Packer = field(init=False)  # packing and compaction, in a child process (packer.py)
    reads: Reads = field(init=False)  # history questions on worker threads, off the event loop (reads.py)

    def __post_init__(self) -> None:
        self.projects = Projects(self.db)
        self.prepare = Prepare(self)
        self.packer = Packer(self.db.path, self.blobs.root)
        self.reads = Reads(self.db.path)

    # ---------------------------------------------------------------- recovery
    def recover_at_start(self) -> list[str]:
        """Decide what a previous process left behind. Returns ops now recovery_required.

        - ``applying``: the process died while the operation was writing — inside a batch (an
          intent without completion: its writes may or may not have happened) or between two
          batches. Either way the operation becomes ``recovery_required``: an admin reviews the
          live world over its mask and decides; nothing is replayed or resumed silently.
        - ``prepared`` / ``queued``: nothing was written -> stays; the executor takes it (oldest first)
          from SQLite as soon as it runs.
        - ``waiting_for_resume``: nothing was written, no intent exists -> stays; queued again when
          the executor sees the host's writes resumed.
        """
        needing = []
        for r in self.db.all("SELECT op_id FROM operations WHERE state='applying'"):
            open_intent = self.db.one("SELECT seq FROM batches WHERE op_id=? AND state='intent'", r["op_id"])
            where = (f"while batch {open_intent['seq'] + 1} was being written" if open_intent is not None
                     else "between two batches")
            operations.set_state(
                self.db, r["op_id"], OpState.RECOVERY_REQUIRED,
                message=f"the journal stopped {where}; new writes are refused until an admin reviews it "
                        "(mcb recovery review) and decides",
            )
            needing.append(r["op_id"])
        return needing

    def pending_recovery(self) -> list[str]:
        stored = [r["op_id"] for r in self.db.all("SELECT op_id FROM operations WHERE state='recovery_required'")]
        return stored + [op for op, v in self.unrecorded.items() if v[0] == OpState.RECOVERY_REQUIRED and op not in stored]

    # ---------------------------------------------------------------- verdicts on a full disk
    def record_verdict(self, op_id: str, state: OpState, message: str, error: McbError) -> bool:
        """Set an operation's state; when the disk is too full to record it, keep it in memory
        (reported at once by ``report``, refusing new applies if it needs recovery) until
        ``flush_unrecorded`` can write it. A crash before that: ``recover_at_start`` reaches the
        same verdict from what is on disk. Returns whether it is on disk."""
        try:
            operations.set_state(self.db, op_id, state, message=message, error=error)
        except McbError as exc:
            if not is_disk_full(exc):
                raise
            self.unrecorded[op_id] = (state, message, error)
            return False
        self.unrecorded.pop(op_id, None)
        return True

    def flush_unrecorded(self) -> None:
        for op_id, (state, message, error) in list(self.unrecorded.items()):
            if self.record_verdict(op_id, state, message, error):
                log.info("operation %s: %s recorded now that the disk has room", op_id, state)

    def runnable(self) -> list[str]:
        """Operations waiting for the writer, oldest first (``prepared`` only in journals written
        before build_apply committed ``queued`` at once)."""
        return [r["op_id"] for r in self.db.all(
            "SELECT op_id FROM operations WHERE state IN ('prepared','queued') ORDER BY created_ms, rowid")]

    def waiting_for_resume(self) -> list[str]:
        """Operations that found writes paused when their turn came, oldest first."""
        return [r["op_id"] for r in self.db.all(
            "SELECT op_id FROM operations WHERE state='waiting_for_resume' ORDER BY created_ms, rowid")]

    # ---------------------------------------------------------------- operations
    def report(self, op_id: str, replayed: bool = False) -> jpb.OperationReport:
        r = self.db.one("SELECT * FROM operations WHERE op_id=?", op_id)
        if r is None:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found")
        rep = jpb.OperationReport(
            operation_id=r["op_id"], plan_id=r["plan_id"], state=r["state"],
            planned=r["planned"], written=r["written"], already=r["already"],
            conflicts=r["conflicts"], batches_total=r["batches_total"],
            batches_done=r["batches_done"], message=r["message"],
            created_at=iso(r["created_ms"]), updated_at=iso(r["updated_ms"]),
            replayed=replayed,
        )
        for c in json.loads(r["conflict_samples_json"]):
            rep.conflict_samples.append(jpb.Conflict(
                pos=vec(tuple(c["pos"])), expected=c["expected"], current=c["current"],
                desired=c["desired"], source=c.get("source", "unknown"), part_id=c.get("part_id", "")))
        for p in json.loads(r["written_samples_json"]):
            rep.written_samples.append(vec(tuple(p)))
        rep.notices.extend(n["text"] for n in self.db.all(
            "SELECT text FROM op_notices WHERE op_id=? ORDER BY at_ms", op_id))
        cap = self.db.one("SELECT before_capture_id FROM op_captures WHERE op_id=?", op_id)
        if cap is not None:
            rep.before_capture_id = cap["before_capture_id"]
        error_json = r["error_json"]
        if op_id in self.unrecorded:  # a verdict not yet on disk (full): the truth, at once
            state, message, err = self.unrecorded[op_id]
            rep.state, rep.message, error_json = str(state), message, json.dumps(err.to_dict())
        if error_json:
            e = McbError.from_dict(json.loads(error_json))
            rep.error.CopyFrom(common_pb2.Error(code=str(e.code), message=e.message, retryable=bool(e.retryable),
                                                details_json=json.dumps(e.details) if e.details else ""))
        return rep

    def operation_status(self, caller: Caller, op_id: str) -> jpb.OperationReport:
        self._own_operation(caller, op_id)
        return self.report(op_id)

    def _own_operation(self, caller: Caller, op_id: str) -> None:
        project = self.projects.project_for(caller)
        if not op_id:
            raise McbError(ErrorCode.INVALID_REQUEST, "operation_id is required")
        row = self.db.one("SELECT project_id FROM operations WHERE op_id=?", op_id)
        if row is None or row["project_id"] != project.project_id:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found in project {project.project_id!r}")

    def operation_cancel(self, caller: Caller, op_id: str) -> jpb.OperationReport:
        self._own_operation(caller, op_id)
        row = self.db.one("SELECT state FROM operations WHERE op_id=?", op_id)
        assert row is not None
        with self.db.tx() as c:
            c.execute("UPDATE operations SET cancel_requested=1, updated_ms=? WHERE op_id=?", (now_ms(), op_id))
        if row["state"] in (OpState.PREPARED, OpState.QUEUED, OpState.WAITING_FOR_RESUME):
            operations.set_state(self.db, op_id, OpState.CANCELLED, message="cancelled before any block was written")
        # An applying operation sees the flag before its next batch (executor.py).
        return self.report(op_id)

    # ---------------------------------------------------------------- context / inspect
    async def project_context(self, caller: Caller, include_old_worlds: bool = False) -> jpb.ProjectContextResponse:
        project = self.projects.project_for(caller)
        info = await self.world.world_info()
        L = self.limits
        resp = jpb.ProjectContextResponse(
            project=jpb.Project(project_id=project.project_id, name=project.name,
                                owner_player_id=project.owner_player_id, area=box_pb(project.area),
                                world_uuid=info.world_uuid),
            world=info,
            limits=jpb.PlanLimits(
                max_changed_blocks=L.max_changed_blocks, max_examined_positions=L.max_examined_positions,
                batch_blocks=L.batch_blocks, inspect_blocks_page=L.inspect_blocks_page,
                inspect_summary_positions=L.inspect_summary_positions, plan_ttl_seconds=L.plan_ttl_seconds),
            capabilities=["region_inspect.summary", "region_inspect.blocks", "region_inspect.heightmap",
                          "build_prepare",
                          "build_apply", "operation_status", "operation_cancel",
                          "asset_list", "schematic_export", "schematic_import_prepare"],
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
        select = (f"SELECT o.*, {worldid.OLD_WORLD_SQL} AS old_world FROM operations o"
                  " LEFT JOIN plans p ON p.plan_id=o.plan_id WHERE o.project_id=?")

        def brief(r: Any) -> jpb.OperationBrief:
            return jpb.OperationBrief(operation_id=r["op_id"], state=r["state"], plan_id=r["plan_id"],
                                      written=r["written"], message=r["message"], old_world=bool(r["old_world"]))

        for r in self.db.all(select + " AND o.state IN ('recovery_required','conflict')"
                             " ORDER BY o.updated_ms DESC LIMIT 10", w, w, project.project_id):
            resp.needs_attention.append(brief(r))
        only_current = "" if include_old_worlds else f" AND NOT {worldid.OLD_WORLD_SQL}"
        for r in self.db.all(select + only_current + " ORDER BY o.created_ms DESC LIMIT 5",
                             w, w, project.project_id, *(() if include_old_worlds else (w, w))):
            resp.recent_operations.append(brief(r))
        if not include_old_worlds:
            resp.old_world_operations = self.db.row(
                f"SELECT COUNT(*) AS n FROM operations o LEFT JOIN plans p ON p.plan_id=o.plan_id"
                f" WHERE o.project_id=? AND {worldid.OLD_WORLD_SQL}", project.project_id, w, w)["n"]
        return resp

    async def region_inspect(self, caller: Caller, req: jpb.RegionInspectRequest) -> jpb.RegionInspectResponse:
        self.projects.project_for(caller)
        if not req.HasField("min") or not req.HasField("max"):
            raise McbError(ErrorCode.INVALID_REQUEST, "region_inspect needs min and max as {x,y,z}")
        box = box_from_pb(req.min, req.max)
        detail = req.detail or "summary"
        if detail not in ("summary", "blocks", "heightmap"):
            raise McbError(ErrorCode.INVALID_REQUEST,
                           f"detail {detail!r} is unknown; use 'summary', 'blocks' or 'heightmap'")
        if box.volume > self.limits.inspect_summary_positions:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"region has {box.volume:,} positions; the limit is {self.limits.inspect_summary_positions:,}. "
                "Inspect a smaller region or several parts.",
                details={"positions": box.volume, "limit": self.limits.inspect_summary_positions},
            )
        resp = jpb.RegionInspectResponse(region=box_pb(box), detail=detail, positions=box.volume)
        if detail in ("summary", "heightmap"):
            # bounded palette, occupied boxes, heightmap; missing chunks marked unknown (issue 4)
            await inspect_into(self.world, resp, box, detail, req.step)
            return resp
        # blocks: one page of positions in YZX order, starting at the cursor's offset
        offset = self._parse_cursor(req.cursor, box)
        page = self.limits.inspect_blocks_page
        layer = box.size.x * box.size.z
        y0 = box.min.y + offset // layer
        end = min(box.volume, offset + page)
        y1 = box.min.y + (end - 1) // layer
        slab = Box(Vec3(box.min.x, y0, box.min.z), Vec3(box.max.x, y1, box.max.z))
        palette, idx = await read_region(self.world, slab)
        base = (y0 - box.min.y) * layer
        sel = idx[offset - base: end - base]
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
            raise McbError(ErrorCode.INVALID_REQUEST,
                           "cursor belongs to another region; repeat the call with the same min/max")
        return offset

    # ---------------------------------------------------------------- apply
    async def build_apply(self, caller: Caller, req: jpb.BuildApplyRequest) -> jpb.OperationReport:
        project = self.projects.project_for(caller)
        key = req.idempotency_key.strip()
        if not key or len(key) > 128:
            raise McbError(ErrorCode.INVALID_REQUEST,
                           "idempotency_key is required (1–128 characters); reuse it when you retry this same apply")
        if not req.plan_id or not req.plan_hash:
            raise McbError(ErrorCode.INVALID_REQUEST, "plan_id and plan_hash (from build_prepare) are required")
        # Same key: answer with the operation it created, or refuse a different plan.
        replay = self._replay(project.project_id, key, req)
        if replay is not None:
            return replay
        plan_row = self.db.one("SELECT * FROM plans WHERE plan_id=? AND project_id=?", req.plan_id, project.project_id)
        if plan_row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"plan {req.plan_id} not found; call build_prepare first")
        if plan_row["plan_hash"] != req.plan_hash:
            raise McbError(ErrorCode.INVALID_REQUEST,
                           f"plan_hash does not match plan {req.plan_id}; pass the hash build_prepare returned")
        if plan_row["expires_ms"] < now_ms():
            raise McbError(ErrorCode.STALE_SNAPSHOT,
                           f"plan {req.plan_id} expired at {iso(plan_row['expires_ms'])}; prepare it again")
        if not req.replace_player_blocks:  # consent before replacing a person's work (consent.py)
            refused = consent_refusal(json.loads(plan_row["summary_json"] or "{}").get("replaced"))
            if refused is not None:
                raise refused
        pending = self.pending_recovery()
        if pending:
            raise McbError(ErrorCode.RECOVERY_REQUIRED,
                           f"new writes are refused until an admin decides operation(s) {', '.join(pending)}",
                           details={"operations": pending})
        info = await self.world.world_info()
        worldid.check(f"plan {req.plan_id}", plan_row["world_uuid"], info.world_uuid)
        if info.epoch != plan_row["world_epoch"]:
            raise McbError(ErrorCode.STALE_SNAPSHOT,
                           "the world changed identity or epoch since this plan was prepared; prepare again")
        waiting = self.db.row("SELECT COUNT(*) AS n FROM operations WHERE state IN ('prepared','queued','waiting_for_resume')")["n"]
        if waiting >= self.max_waiting_operations:
            raise McbError(ErrorCode.BUSY, f"{waiting} operations are already waiting for the writer; "
                                           "retry when some have finished (operation_status)")
        if self.parts is not None:
            self.parts.check_write_set(caller, project.project_id, self.load_plan(req.plan_id).xyz, "")
        op_id = "op_" + secrets.token_hex(8)
        t = now_ms()
        n = plan_row["total"]
        with self.db.tx() as c:
            # Checked again inside the write transaction: a concurrent call with the same key may
            # have created its operation while this one awaited the world host (issue 12).
            replay = self._replay(project.project_id, key, req)
            if replay is not None:
                return replay
            c.execute(
                "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, planned,"
                " batches_total, message, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (op_id, project.project_id, req.plan_id, req.plan_hash, key, str(OpState.QUEUED),
                 plan_row["changed"], -(-n // self.limits.batch_blocks), "queued", t, t),
            )
            c.execute("INSERT INTO op_extra(op_id, player_id, observed_at_start) VALUES (?,?,?)",
                      (op_id, caller.player_id, self.observed_oid()))
        # Committed as `queued` above: the executor (same process) takes it from SQLite.
        self.wake.set()
        return self.report(op_id)

    def _replay(self, project_id: str, key: str, req: jpb.BuildApplyRequest) -> jpb.OperationReport | None:
        """The operation an earlier apply with this key created (``replayed``), None when the key
        is new; the key used for another plan is ``invalid_request``."""
        prev = self.db.one("SELECT op_id, plan_id, plan_hash FROM operations WHERE project_id=? AND idempotency_key=?",
                           project_id, key)
        if prev is None:
            return None
        if prev["plan_id"] == req.plan_id and prev["plan_hash"] == req.plan_hash:
            return self.report(prev["op_id"], replayed=True)
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"idempotency_key {key!r} was already used for plan {prev['plan_id']}; "
            "a different plan needs a new key",
            details={"operation_id": prev["op_id"]},
        )

    def observed_oid(self) -> int:
        return last_oid(self.db)  # packing deletes observed rows, never this number

    def load_plan(self, plan_id: str) -> Plan:
        row = self.db.one("SELECT blob_sha256 FROM plans WHERE plan_id=?", plan_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"plan {plan_id} not found")
        return Plan.decode(self.blobs.get(row["blob_sha256"]))
