"""Which world the journal's records belong to (issue 19 item 3).

Every plan stores the world uuid it was prepared against (``plans.world_uuid``); an operation
belongs to its plan's world, a part to its operation's, a change cursor names the world in its
prefix. When the save is replaced (`mcb world reset`, a deleted world folder, another server
world) the world host answers with a new uuid, and everything recorded for another world is
refused with ``world_changed`` — never planned, applied, undone or regenerated against the new
one. The history stays readable (operation_status, the journal's files).

``meta.worlds`` keeps the worlds this journal has seen, in order, with the epoch it first saw
each at (``note_world``: at the journal's start, at every build_prepare and when an operation
starts).

Views of the history list the current world's records by default (issue 31 item 4):
``project_context.recent_operations``, the dashboard's operations and parts (``OperationList``,
``ProjectList``) and through them chat ``status`` and ``undo``; earlier worlds' records are
marked ``old_world`` and listed only when asked for (``include_old_worlds``), and counted.
``OLD_WORLD_SQL`` is that rule for a query that joins the operation's plan as ``p``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcb_common.errors import ErrorCode, McbError

from .db import Database, now_ms

log = logging.getLogger("mcb.journal.world")


def changed(what: str, recorded: str, current: str) -> McbError:
    return McbError(
        ErrorCode.WORLD_CHANGED,
        f"{what} belongs to world {recorded}, but the world host now serves world {current} (the save was "
        "replaced): it is never used on the new world. Inspect the new world and prepare anew.",
        details={"recorded_world": recorded, "current_world": current},
    )


def check(what: str, recorded: str | None, current: str) -> None:
    """Raise world_changed when ``recorded`` (a uuid, or an 8-character cursor prefix) names
    another world than ``current``. Records without a world (empty) pass."""
    if not recorded:
        return
    if (len(recorded) == 8 and not current.startswith(recorded)) or (len(recorded) != 8 and recorded != current):
        raise changed(what, recorded, current)


def of_operation(db: Database, op_id: str) -> str:
    """The world uuid an operation was planned against ('' when unknown)."""
    row = db.one("SELECT p.world_uuid FROM operations o JOIN plans p ON p.plan_id=o.plan_id WHERE o.op_id=?", op_id)
    return str(row["world_uuid"]) if row is not None else ""


# An operation (its plan joined as ``p``) of an earlier world: its plan names a world, and not the
# current one (bind the current world's uuid twice). Records without a world count as current,
# as ``check`` lets them pass; with no current world known nothing is old.
OLD_WORLD_SQL = "(? != '' AND COALESCE(p.world_uuid, '') != '' AND p.world_uuid != ?)"


def current(db: Database) -> str:
    """The world this journal saw last (``meta.worlds``; noted at its start, every prepare and
    every operation start); '' when it has seen none."""
    seen = worlds(db)
    return str(seen[-1].get("world_uuid") or "") if seen else ""


def worlds(db: Database) -> list[dict[str, Any]]:
    row = db.one("SELECT value FROM meta WHERE key='worlds'")
    try:
        out = json.loads(row["value"]) if row is not None else []
    except ValueError:
        out = []
    return out if isinstance(out, list) else []


def note_world(db: Database, world_uuid: str, epoch: int) -> bool:
    """Record the world the host serves; True (and a warning in the log) when it differs from the
    last one this journal saw — a new world: old operations, parts and cursors are refused."""
    seen = worlds(db)
    if seen and seen[-1].get("world_uuid") == world_uuid:
        return False
    seen.append({"world_uuid": world_uuid, "epoch": epoch, "first_seen_ms": now_ms()})
    with db.tx() as c:
        c.execute(
            "INSERT INTO meta(key, value) VALUES ('worlds', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (json.dumps(seen[-100:]),),
        )
    if len(seen) > 1:
        log.warning(
            "the world host serves a new world %s (epoch %d; was %s): operations, parts and change "
            "cursors of earlier worlds are refused with world_changed",
            world_uuid,
            epoch,
            seen[-2].get("world_uuid"),
        )
    return len(seen) > 1
