"""Crash recovery decisions (ARCHITECTURE §3): review and abandon an operation left
``recovery_required`` (an intent without completion, or a stop between batches).

The review reads the live world over the operation's mask (its confirmed writes plus the
potential writes of its unfinished batch) and answers with a digest of what it saw; an admin's
abandon must name that digest, so a decision is always about the blocks as reviewed. Recovery
only records: it never writes the world, and the operation's state changes through
operations.py.
"""

from __future__ import annotations

import hashlib
import json
import zlib

from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError

from . import operations
from .context import JournalContext
from .db import Database, now_ms
from .history import History, Pos
from .states import OpState
from .worldread import read_states


def digest_of(states: dict[Pos, str]) -> str:
    h = hashlib.sha256()
    for x, y, z in sorted(states):
        h.update(f"{x},{y},{z}={states[(x, y, z)]}\n".encode())
    return h.hexdigest()


def mask_of(db: Database, op_id: str) -> dict[Pos, tuple[str, str]]:
    """Confirmed writes of settled batches + potential writes of the unfinished one (off the
    event loop, reads.py)."""
    mask: dict[Pos, tuple[str, str]] = {}
    for r in History(db).writes_of(op_id):
        mask[(r["x"], r["y"], r["z"])] = (r["before"], r["after"])
    for b in db.all("SELECT seq, entries, entries_sha256 FROM batches WHERE op_id=? AND state='intent'", op_id):
        raw = zlib.decompress(b["entries"])
        if hashlib.sha256(raw).hexdigest() != b["entries_sha256"]:
            raise McbError(
                ErrorCode.INTERNAL,
                f"the intent record of batch {b['seq']} of {op_id} fails its checksum; "
                "the journal database is damaged — restore a backup",
            )
        for x, y, z, exp, des in json.loads(raw):
            if exp != des:
                mask[(x, y, z)] = (exp, des)
    return mask


class Recovery:
    def __init__(self, ctx: JournalContext):
        self.ctx = ctx
        self.db = ctx.db

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
        for r in self.ctx.db.all("SELECT op_id FROM operations WHERE state='applying'"):
            open_intent = self.ctx.db.one("SELECT seq FROM batches WHERE op_id=? AND state='intent'", r["op_id"])
            where = (
                f"while batch {open_intent['seq'] + 1} was being written"
                if open_intent is not None
                else "between two batches"
            )
            operations.set_state(
                self.ctx.db,
                r["op_id"],
                OpState.RECOVERY_REQUIRED,
                message=f"the journal stopped {where}; new writes are refused until an admin reviews it "
                "(mcb recovery review) and decides",
            )
            needing.append(r["op_id"])
        return needing

    async def recovery_review(self, op_id: str) -> jpb.RecoveryReviewResponse:
        op = self.db.one("SELECT state, plan_id FROM operations WHERE op_id=?", op_id)
        if op is None:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found")
        if op["state"] != OpState.RECOVERY_REQUIRED:
            raise McbError(ErrorCode.INVALID_REQUEST, f"operation {op_id} is {op['state']}, not recovery_required")
        mask = await self.ctx.reads.run(lambda db: mask_of(db, op_id))
        positions = sorted(mask)
        flat = [c for p in positions for c in p]
        current = await read_states(self.ctx.world, flat) if positions else []
        states = dict(zip(positions, current, strict=True))
        before = sum(1 for p in positions if states[p] == mask[p][0])
        after = sum(1 for p in positions if states[p] == mask[p][1] and mask[p][1] != mask[p][0])
        foreign = sum(1 for p in positions if states[p] not in mask[p])
        return jpb.RecoveryReviewResponse(
            operation_id=op_id,
            plan_id=op["plan_id"] or "",
            positions=len(positions),
            matches_before=before,
            matches_after=after,
            foreign_states=foreign,
            current_digest=digest_of(states),
            sampled_at_millis=now_ms(),
        )

    async def recovery_abandon(self, op_id: str, expected_digest: str, principal: str) -> jpb.OperationReport:
        review = await self.recovery_review(op_id)
        if not expected_digest or review.current_digest != expected_digest:
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                "the blocks of this operation changed since the review (digest differs); "
                "run recovery review again and decide on the new digest",
                details={"current_digest": review.current_digest},
            )
        mask = await self.ctx.reads.run(lambda db: mask_of(db, op_id))
        t = now_ms()
        with self.db.tx() as c:
            # Decision first, in the same transaction as its effects: durable before the answer.
            c.execute(
                "INSERT INTO decisions(op_id, decision, digest, decided_ms, principal) VALUES (?,?,?,?,?)",
                (op_id, "abandon", expected_digest, t, principal),
            )
            c.execute(
                "INSERT INTO op_extra(op_id, undo_forbidden) VALUES (?, 1)"
                " ON CONFLICT(op_id) DO UPDATE SET undo_forbidden=1",
                (op_id,),
            )
            confirmed = {(r["x"], r["y"], r["z"]) for r in History(self.db).writes_of(op_id)}
            # Potential writes count as later writes for every earlier operation's undo.
            for (x, y, z), (b, a) in mask.items():
                if (x, y, z) not in confirmed:
                    c.execute(
                        "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES (?,?,?,?,?,?,1,?)",
                        (op_id, x, y, z, b, a, t),
                    )
            c.execute("UPDATE batches SET state='abandoned', done_ms=? WHERE op_id=? AND state='intent'", (t, op_id))
            operations.set_state(
                self.db,
                op_id,
                OpState.FAILED,
                conn=c,
                message=f"abandoned by an admin after a crash: blocks left as they are ({review.matches_after} match "
                f"our write, {review.matches_before} the previous state, {review.foreign_states} other); "
                "undo is forbidden for this operation",
            )
        return self.ctx.report(op_id)
