"""Undo (ARCHITECTURE §3): an operation's confirmed writes turned back into an ordinary plan.

``undo_rule`` is the rule, pure (beside merge.py's three-way merge): given each position our
operation wrote — the state it replaced, the state it wrote, the world's state now and what
happened there after our write — which positions return to their previous state and which are
conflicts left as they are. ``Undo.undo_prepare`` gathers those facts from the journal
(history.py: ``written`` and ``observed``) and the world, and stores the plan for
``build_apply``; it never writes the world itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError

from . import worldid
from .context import JournalContext
from .history import History, Pos, box6_around, box_around
from .pbconv import box_pb, vec
from .plans import Plan, PlanOrigin
from .planstore import store_plan
from .states import OpState
from .worldread import read_states

if TYPE_CHECKING:
    from .db import Database
    from .projects import Caller

MAX_MASK = 200_000


@dataclass(frozen=True)
class UndoWrite:
    """One position our operation wrote, with what is known about it now."""

    pos: Pos
    before: str  # the state our write replaced
    after: str  # the state we wrote
    current: str  # the world's state now
    later_op: str | None = None  # a later operation of ours that wrote here
    foreign_source: str | None = None  # the source of the first foreign event here after our write


@dataclass(frozen=True)
class UndoConflict:
    pos: Pos
    expected: str  # what we wrote
    current: str
    desired: str  # what undo would restore
    source: str  # ours / player / environment / external
    why: str


def undo_rule(writes: Iterable[UndoWrite]) -> tuple[list[tuple[Pos, str, str]], list[UndoConflict]]:
    """(keep, conflicts): ``keep`` as plan entries (pos, current, before), top-down (upper blocks
    removed first); ``conflicts`` in the order of ``writes``. A position returns to its previous
    state only when nothing touched it after our write: no later operation of ours, no observed
    foreign event (even one that changed it back), and it still holds what we wrote."""
    keep: list[tuple[Pos, str, str]] = []
    conflicts: list[UndoConflict] = []
    for w in writes:
        reason = None
        if w.later_op is not None:
            reason = ("ours", f"later written by operation {w.later_op}")
        elif w.foreign_source is not None:
            reason = (
                w.foreign_source,
                f"changed by a {w.foreign_source} after our write"
                + (" (and changed back)" if w.current == w.after else ""),
            )
        elif w.current != w.after:
            reason = ("external", "holds another state than we wrote, with no observed event")
        if reason is None:
            keep.append((w.pos, w.current, w.before))
        else:
            conflicts.append(UndoConflict(w.pos, w.after, w.current, w.before, reason[0], reason[1]))
    keep.sort(key=lambda k: (-k[0][1], k[0][2], k[0][0]))  # top-down: remove upper blocks first
    return keep, conflicts


class Undo:
    def __init__(self, ctx: JournalContext):
        self.ctx = ctx
        self.db = ctx.db
        self.observer = ctx.observer

    async def undo_prepare(self, caller: Caller, op_id: str) -> jpb.PlanSummary:
        core = self.ctx
        project = core.projects.project_for(caller)
        core.own_operation(caller, op_id)
        op = self.db.one("SELECT * FROM operations WHERE op_id=?", op_id)
        assert op is not None
        extra = self.db.one("SELECT * FROM op_extra WHERE op_id=?", op_id)
        if extra is not None and extra["undo_forbidden"]:
            raise McbError(
                ErrorCode.PERMISSION_DENIED,
                f"operation {op_id} was abandoned after a crash; its undo is forbidden for good",
            )
        if op["state"] in (
            OpState.PREPARED,
            OpState.QUEUED,
            OpState.WAITING_FOR_RESUME,
            OpState.APPLYING,
            OpState.RECOVERY_REQUIRED,
        ):
            raise McbError(
                ErrorCode.BUSY if op["state"] != OpState.RECOVERY_REQUIRED else ErrorCode.RECOVERY_REQUIRED,
                f"operation {op_id} is {op['state']}; undo needs a finished operation",
            )
        n = History(self.db).write_count(op_id)  # counted, not decoded: a refusal costs nothing
        if n > MAX_MASK:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"operation wrote {n:,} blocks; undo handles {MAX_MASK:,}")
        rows = await core.reads.run(lambda db: History(db).writes_of(op_id, certain_only=True))
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
        gaps_after = self.db.row("SELECT COUNT(*) AS n FROM observed WHERE kind='gap' AND at_ms>=?", op["created_ms"])[
            "n"
        ]
        writes = await core.reads.run(lambda db: _undo_writes(db, op_id, rows, current))
        keep, found = undo_rule(writes)
        conflicts = [
            jpb.Conflict(pos=vec(c.pos), expected=c.expected, current=c.current, desired=c.desired, source=c.source)
            for c in found
        ]
        warnings = [
            f"undo of {op_id}: {len(keep)} blocks return to their previous state; "
            f"{len(conflicts)} are conflicts and stay as they are"
        ]
        if gaps_after or not observed_ok:
            warnings.append(
                "block events were not observed for part of the time since this operation "
                "(world host restart or link loss): for those moments only the current state was checked"
            )
        plan = Plan.from_entries(keep, info.world_uuid, info.epoch, f"undo:{op_id}")
        bounds = box_pb(box_around([k[0] for k in keep])) if keep else common_pb2.Box()
        return await store_plan(core, project, plan, bounds, warnings, conflicts, PlanOrigin(undo_of=op_id))


def _undo_writes(db: Database, op_id: str, rows: list[dict[str, Any]], current: list[str]) -> list[UndoWrite]:
    """Each write of ``op_id`` with what came after it at its position: a later write of ours or
    else the first foreign event since our own echo there (reads.py: one snapshot, off the loop)."""
    history = History(db, box6_around([(r["x"], r["y"], r["z"]) for r in rows]) if rows else None)
    start = db.one("SELECT observed_at_start FROM op_extra WHERE op_id=?", op_id)
    oid_at_start = int(start["observed_at_start"]) if start is not None else 0
    writes = []
    for r, cur in zip(rows, current, strict=True):
        p = (r["x"], r["y"], r["z"])
        later_ours = history.later_write(p, r["wid"])
        ev = None
        if later_ours is None:
            ours = history.last_ours_oid(op_id, p)
            ev = history.first_event_after(p, ours if ours is not None else oid_at_start, op_id)
        writes.append(UndoWrite(p, r["before"], r["after"], cur, later_ours, ev["source"] if ev is not None else None))
    return writes
