"""The journal's context: what every job shares and nothing else — storage (the database, the
blobs, the history reads off the event loop, the packer), the ports (the world host, its
observer, the planner, the camera, the progress stream), the limits and settings, the projects
(who may build where, policy.py), and the lookups every job makes: an operation of the caller's
project, a plan, a report, the verdicts a full disk kept in memory.

It sits below the jobs (prepare.py, parts.py, apply.py, views.py, undo.py, recovery.py,
changes.py, executor.py, schematics.py, overview.py, preview.py, before.py) and imports none of
them; core.py (the facade the servicer calls) builds the jobs on it. Every field is given at
construction: a job never finds a port or the observer missing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.assets import AssetLibrary
from mcb_common.diskfull import is_disk_full
from mcb_common.errors import ErrorCode, McbError

from . import operations
from .blobs import BlobStore
from .db import Database
from .history import last_oid
from .observer import Observer
from .packer import Packer
from .pbconv import iso, vec
from .plans import Plan
from .ports import CameraPort, PlannerPort, ProgressPort, WorldPort
from .projects import Caller, Projects
from .reads import Reads
from .settings import JournalSettings
from .states import OpState

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
class JournalContext:
    db: Database
    blobs: BlobStore
    world: WorldPort
    planner: PlannerPort
    queue: ProgressPort  # the progress stream (Redis mcb:progress); the apply work never goes through Redis
    observer: Observer  # the world host's block events (parts, undo, the feed, consent, conflict sources)
    limits: Limits = field(default_factory=Limits)
    settings: JournalSettings = field(default_factory=JournalSettings)  # app.py: from the environment
    minecraft_version: str = "1.21.11"
    camera: CameraPort | None = None  # the camera worker, for an operation's Before picture (before.py)
    max_waiting_operations: int = 32
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set when an operation is queued (executor.py)
    assets: AssetLibrary | None = None  # the schematic library, opened at first use (schematics.py)
    # op_id -> (state, message, error): verdicts reached while the disk was full (record_verdict)
    unrecorded: dict[str, tuple[OpState, str, McbError]] = field(default_factory=dict)
    # The projects (app.py points projects.file at the runtime config: its `projects` are re-read
    # when the file changes, players create projects and move areas in game).
    projects: Projects = field(init=False)
    packer: Packer = field(init=False)  # packing and compaction, in a child process (packer.py)
    reads: Reads = field(init=False)  # history questions on worker threads, off the event loop (reads.py)
    # The last plan decoded, by its blob's sha256: build_apply and then the executor load the same
    # plan (a 100k-block plan's JSON decodes in ~30 ms). Callers only read a plan.
    _last_plan: tuple[str, Plan] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.projects = Projects(self.db)
        self.packer = Packer(self.db.path, self.blobs.root)
        self.reads = Reads(self.db.path)

    # ---------------------------------------------------------------- shared lookups
    def own_operation(self, caller: Caller, op_id: str) -> None:
        """Refuse an operation that is not in the caller's project (as if it did not exist)."""
        project = self.projects.project_for(caller)
        if not op_id:
            raise McbError(ErrorCode.INVALID_REQUEST, "operation_id is required")
        row = self.db.one("SELECT project_id FROM operations WHERE op_id=?", op_id)
        if row is None or row["project_id"] != project.project_id:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found in project {project.project_id!r}")

    def load_plan(self, plan_id: str) -> Plan:
        row = self.db.one("SELECT blob_sha256 FROM plans WHERE plan_id=?", plan_id)
        if row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"plan {plan_id} not found")
        sha = row["blob_sha256"]
        raw = self.blobs.get(sha)  # read and verified every time: a missing or damaged blob is refused as ever
        last = self._last_plan
        if last is not None and last[0] == sha:  # the same verified bytes: the same plan
            return last[1]
        plan = Plan.decode(raw)
        self._last_plan = (sha, plan)
        return plan

    def observed_oid(self) -> int:
        return last_oid(self.db)  # packing deletes observed rows, never this number

    def report(self, op_id: str, replayed: bool = False) -> jpb.OperationReport:
        r = self.db.one("SELECT * FROM operations WHERE op_id=?", op_id)
        if r is None:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found")
        rep = jpb.OperationReport(
            operation_id=r["op_id"],
            plan_id=r["plan_id"],
            state=r["state"],
            planned=r["planned"],
            written=r["written"],
            already=r["already"],
            conflicts=r["conflicts"],
            batches_total=r["batches_total"],
            batches_done=r["batches_done"],
            message=r["message"],
            created_at=iso(r["created_ms"]),
            updated_at=iso(r["updated_ms"]),
            replayed=replayed,
        )
        for c in json.loads(r["conflict_samples_json"]):
            rep.conflict_samples.append(
                jpb.Conflict(
                    pos=vec(tuple(c["pos"])),
                    expected=c["expected"],
                    current=c["current"],
                    desired=c["desired"],
                    source=c.get("source", "unknown"),
                    part_id=c.get("part_id", ""),
                )
            )
        for p in json.loads(r["written_samples_json"]):
            rep.written_samples.append(vec(tuple(p)))
        rep.notices.extend(
            n["text"] for n in self.db.all("SELECT text FROM op_notices WHERE op_id=? ORDER BY at_ms", op_id)
        )
        cap = self.db.one("SELECT before_capture_id FROM op_captures WHERE op_id=?", op_id)
        if cap is not None:
            rep.before_capture_id = cap["before_capture_id"]
        error_json = r["error_json"]
        if op_id in self.unrecorded:  # a verdict not yet on disk (full): the truth, at once
            state, message, err = self.unrecorded[op_id]
            rep.state, rep.message, error_json = str(state), message, json.dumps(err.to_dict())
        if error_json:
            e = McbError.from_dict(json.loads(error_json))
            rep.error.CopyFrom(
                common_pb2.Error(
                    code=str(e.code),
                    message=e.message,
                    retryable=bool(e.retryable),
                    details_json=json.dumps(e.details) if e.details else "",
                )
            )
        return rep

    # ---------------------------------------------------------------- the writer's queue
    def pending_recovery(self) -> list[str]:
        stored = [r["op_id"] for r in self.db.all("SELECT op_id FROM operations WHERE state='recovery_required'")]
        return stored + [
            op for op, v in self.unrecorded.items() if v[0] == OpState.RECOVERY_REQUIRED and op not in stored
        ]

    def runnable(self) -> list[str]:
        """Operations waiting for the writer, oldest first (``prepared`` only in journals written
        before build_apply committed ``queued`` at once)."""
        return [
            r["op_id"]
            for r in self.db.all(
                "SELECT op_id FROM operations WHERE state IN ('prepared','queued') ORDER BY created_ms, rowid"
            )
        ]

    def waiting_for_resume(self) -> list[str]:
        """Operations that found writes paused when their turn came, oldest first."""
        return [
            r["op_id"]
            for r in self.db.all(
                "SELECT op_id FROM operations WHERE state='waiting_for_resume' ORDER BY created_ms, rowid"
            )
        ]

    # ---------------------------------------------------------------- verdicts on a full disk
    def record_verdict(self, op_id: str, state: OpState, message: str, error: McbError) -> bool:
        """Set an operation's state; when the disk is too full to record it, keep it in memory
        (reported at once by ``report``, refusing new applies if it needs recovery) until
        ``flush_unrecorded`` can write it. A crash before that: ``Recovery.recover_at_start``
        reaches the same verdict from what is on disk. Returns whether it is on disk."""
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
