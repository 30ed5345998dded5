"""Apply (ARCHITECTURE §3): ``build_apply`` turns a prepared plan into an operation queued for the
executor — idempotent by key, refused without consent (consent.py), during a recovery, for another
world or off protected parts (parts.py) — and an operation's status and cancel. On the context
(context.py); the executor (executor.py) takes the queued operation from SQLite.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError

from . import operations, worldid
from .consent import refusal as consent_refusal
from .context import JournalContext
from .db import now_ms
from .parts import Parts
from .pbconv import iso
from .plans import PlanMeta
from .projects import Caller
from .states import OpState

log = logging.getLogger("mcb.journal.apply")


class Apply:
    def __init__(self, ctx: JournalContext, parts: Parts):
        self.ctx = ctx
        self.parts = parts  # required: the protected-part check of every apply

    def operation_status(self, caller: Caller, op_id: str) -> jpb.OperationReport:
        self.ctx.own_operation(caller, op_id)
        return self.ctx.report(op_id)

    async def operation_cancel(self, caller: Caller, op_id: str) -> jpb.OperationReport:
        self.ctx.own_operation(caller, op_id)
        row = self.ctx.db.one("SELECT state FROM operations WHERE op_id=?", op_id)
        assert row is not None
        with self.ctx.db.tx() as c:
            c.execute("UPDATE operations SET cancel_requested=1, updated_ms=? WHERE op_id=?", (now_ms(), op_id))
        if row["state"] in (OpState.PREPARED, OpState.QUEUED, OpState.WAITING_FOR_RESUME):
            operations.set_state(
                self.ctx.db, op_id, OpState.CANCELLED, message="cancelled before any block was written"
            )
        elif row["state"] == OpState.APPLYING:
            await self._stop_at_host(op_id)
        # An applying operation sees the flag before its next request (executor.py); the host, told
        # by batch_cancel, starts no further batch of a request already sent.
        return self.ctx.report(op_id)

    async def _stop_at_host(self, op_id: str) -> None:
        """``batch_cancel`` to the world host: once it answers, no batch of the operation starts there
        (a batch_apply_many request carries several). A host without it (an older one answers
        invalid_request) or one that does not answer within 2 s leaves the journal's own check before
        each request: the cancel is never refused for it."""
        try:
            await asyncio.wait_for(
                self.ctx.world.call("batch_cancel", {"operationId": op_id}, world_pb2.BatchCancelResult), 2.0
            )
        except (McbError, TimeoutError) as err:
            log.info("operation %s: batch_cancel not taken by the world host (%s)", op_id, err)

    # ---------------------------------------------------------------- apply
    async def build_apply(self, caller: Caller, req: jpb.BuildApplyRequest) -> jpb.OperationReport:
        project = self.ctx.projects.project_for(caller)
        key = req.idempotency_key.strip()
        if not key or len(key) > 128:
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                "idempotency_key is required (1–128 characters); reuse it when you retry this same apply",
            )
        if not req.plan_id or not req.plan_hash:
            raise McbError(ErrorCode.INVALID_REQUEST, "plan_id and plan_hash (from build_prepare) are required")
        # Same key: answer with the operation it created, or refuse a different plan.
        replay = self._replay(project.project_id, key, req)
        if replay is not None:
            return replay
        plan_row = self.ctx.db.one(
            "SELECT * FROM plans WHERE plan_id=? AND project_id=?", req.plan_id, project.project_id
        )
        if plan_row is None:
            raise McbError(ErrorCode.NOT_FOUND, f"plan {req.plan_id} not found; call build_prepare first")
        if plan_row["plan_hash"] != req.plan_hash:
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"plan_hash does not match plan {req.plan_id}; pass the hash build_prepare returned",
            )
        if plan_row["expires_ms"] < now_ms():
            raise McbError(
                ErrorCode.STALE_SNAPSHOT,
                f"plan {req.plan_id} expired at {iso(plan_row['expires_ms'])}; prepare it again",
            )
        if not req.replace_player_blocks:  # consent before replacing a person's work (consent.py)
            refused = consent_refusal(PlanMeta.from_json(plan_row["summary_json"]).replaced)
            if refused is not None:
                raise refused
        pending = self.ctx.pending_recovery()
        if pending:
            raise McbError(
                ErrorCode.RECOVERY_REQUIRED,
                f"new writes are refused until an admin decides operation(s) {', '.join(pending)}",
                details={"operations": pending},
            )
        info = await self.ctx.world.world_info()
        worldid.check(f"plan {req.plan_id}", plan_row["world_uuid"], info.world_uuid)
        if info.epoch != plan_row["world_epoch"]:
            raise McbError(
                ErrorCode.STALE_SNAPSHOT,
                "the world changed identity or epoch since this plan was prepared; prepare again",
            )
        waiting = self.ctx.db.row(
            "SELECT COUNT(*) AS n FROM operations WHERE state IN ('prepared','queued','waiting_for_resume')"
        )["n"]
        if waiting >= self.ctx.max_waiting_operations:
            raise McbError(
                ErrorCode.BUSY,
                f"{waiting} operations are already waiting for the writer; "
                "retry when some have finished (operation_status)",
            )
        self.parts.check_write_set(caller, project.project_id, self.ctx.load_plan(req.plan_id).xyz, "")
        op_id = "op_" + secrets.token_hex(8)
        t = now_ms()
        n = plan_row["total"]
        with self.ctx.db.tx() as c:
            # Checked again inside the write transaction: a concurrent call with the same key may
            # have created its operation while this one awaited the world host (issue 12).
            replay = self._replay(project.project_id, key, req)
            if replay is not None:
                return replay
            c.execute(
                "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, planned,"
                " batches_total, message, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    op_id,
                    project.project_id,
                    req.plan_id,
                    req.plan_hash,
                    key,
                    str(OpState.QUEUED),
                    plan_row["changed"],
                    -(-n // self.ctx.limits.batch_blocks),
                    "queued",
                    t,
                    t,
                ),
            )
            c.execute(
                "INSERT INTO op_extra(op_id, player_id, observed_at_start) VALUES (?,?,?)",
                (op_id, caller.player_id, self.ctx.observed_oid()),
            )
        # Committed as `queued` above: the executor (same process) takes it from SQLite.
        self.ctx.wake.set()
        return self.ctx.report(op_id)

    def _replay(self, project_id: str, key: str, req: jpb.BuildApplyRequest) -> jpb.OperationReport | None:
        """The operation an earlier apply with this key created (``replayed``), None when the key
        is new; the key used for another plan is ``invalid_request``."""
        prev = self.ctx.db.one(
            "SELECT op_id, plan_id, plan_hash FROM operations WHERE project_id=? AND idempotency_key=?", project_id, key
        )
        if prev is None:
            return None
        if prev["plan_id"] == req.plan_id and prev["plan_hash"] == req.plan_hash:
            return self.ctx.report(prev["op_id"], replayed=True)
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"idempotency_key {key!r} was already used for plan {prev['plan_id']}; a different plan needs a new key",
            details={"operation_id": prev["op_id"]},
        )
