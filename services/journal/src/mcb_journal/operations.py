"""Operation state: the only writer of ``operations.state`` (ARCHITECTURE §3).

Every change of an operation's state goes through ``set_state``, which checks it against the
state table in states.py; no other module runs an ``UPDATE operations SET state=...``
(tests/static: services/journal/tests/test_operations.py checks the source). Creating an
operation (``queued``, build_apply) is an INSERT, not a transition.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from mcb_common.errors import ErrorCode, McbError

from .db import Database, now_ms
from .states import OpState, check_transition


def set_state(
    db: Database,
    op_id: str,
    new: OpState,
    message: str | None = None,
    error: McbError | None = None,
    conn: sqlite3.Connection | None = None,
    **counters: Any,
) -> None:
    """The one way an operation's state and counters change (transition-checked); inside the
    caller's open transaction ``conn`` when given (the executor's group commit, an admin's
    abandon decision), else its own."""
    row = (conn or db.conn).execute("SELECT state FROM operations WHERE op_id=?", (op_id,)).fetchone()
    if row is None:
        raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found")
    if row["state"] != new:
        check_transition(row["state"], new)
    sets = ["state=?", "updated_ms=?"]
    args: list[Any] = [str(new), now_ms()]
    if message is not None:
        sets.append("message=?")
        args.append(message)
    if error is not None:
        sets.append("error_json=?")
        args.append(json.dumps(error.to_dict()))
    for k, v in counters.items():
        sets.append(f"{k}=?")
        args.append(v)
    args.append(op_id)
    if conn is not None:
        conn.execute(f"UPDATE operations SET {', '.join(sets)} WHERE op_id=?", args)
        return
    with db.tx() as c:
        c.execute(f"UPDATE operations SET {', '.join(sets)} WHERE op_id=?", args)
