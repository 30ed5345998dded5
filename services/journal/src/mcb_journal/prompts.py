"""The chat request that started an operation (issue 32 item 3: history names "operation and its
prompt"). The journal sees tool calls, never the person's words: the chat bridge, when a player's
`/ai` turn ends, names the operations the turn started and the player's request
(``OperationPrompt``). Only the caller player's own operations in the caller's project take it,
and only once (a later turn cannot rewrite what an earlier one asked); region_history and the
dashboard's history show it beside the operation."""

from __future__ import annotations

from typing import Any

from mcb_common.errors import ErrorCode, McbError

from .db import Database
from .projects import Caller

PROMPT_MAX = 200  # characters kept: enough to recognise a request, short for a history page
OPERATIONS_MAX = 100  # operations named in one call (a turn starts a handful)


def note_prompt(db: Database, caller: Caller, op_ids: list[str], prompt: str) -> int:
    """Attach ``prompt`` to those of ``op_ids`` that the caller's player started in the caller's
    project and that carry none yet; -> how many took it."""
    if not caller.player_id:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            "a prompt belongs to a player's operations: this call names no player (x-mcb-player)",
        )
    text = " ".join(prompt.split())[:PROMPT_MAX]
    if not text:
        raise McbError(ErrorCode.INVALID_REQUEST, "prompt is empty")
    if len(op_ids) > OPERATIONS_MAX:
        raise McbError(ErrorCode.INVALID_REQUEST, f"at most {OPERATIONS_MAX} operations per call")
    noted = 0
    with db.tx() as c:
        for op in dict.fromkeys(op_ids):
            noted += c.execute(
                "UPDATE op_extra SET prompt=? WHERE op_id=? AND prompt='' AND player_id=?"
                " AND op_id IN (SELECT op_id FROM operations WHERE project_id=?)",
                (text, op, caller.player_id, caller.project_id),
            ).rowcount
    return noted


async def operation_prompt(ctx: Any, caller: Caller, op_ids: list[str], prompt: str) -> int:
    """The RPC: the caller's project must exist and be theirs to use."""
    ctx.projects.project_for(caller)
    return note_prompt(ctx.db, caller, op_ids, prompt)
