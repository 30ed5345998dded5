"""McbError -> MCP tool error result: the bridge's one error boundary towards the model.

A failed tool call is an ordinary ``CallToolResult`` with ``isError: true`` (so the model sees
it and can correct itself, as the MCP spec asks), whose text content is the JSON

    {"error": {"code": ..., "message": ..., "retryable": ..., "hint": ..., "details"?: {...}}}

and whose ``structuredContent`` is the same object. ``hint`` is what the agent should do next
(``HINTS``, one entry per ``ErrorCode``; a test fails if a code is missing).

Unexpected exceptions become ``internal`` with a reference id; the exception and its stack
trace go to the bridge log only, never to the model.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import mcp_types as types
from mcb_common.errors import ErrorCode, McbError

log = logging.getLogger("mcb.bridge")

# What the agent should do when it sees each code.
HINTS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_REQUEST: "Fix the arguments as the message says and call again; repeating the same call will fail the same way.",
    ErrorCode.UNAUTHENTICATED: "The bridge's agent token was refused. Tell the user to check the bridge configuration (`mcb status`); do not retry.",
    ErrorCode.PERMISSION_DENIED: "This project or player may not do that (outside its rights or a protected part). Choose another target or ask the user.",
    ErrorCode.NOT_FOUND: "The plan, operation, part or chunk does not exist (or expired). Re-read project_context or prepare a new plan.",
    ErrorCode.OUT_OF_BOUNDS: "Stay inside the project area and the world's height limits reported by project_context.",
    # names every reason mcb_journal.blockrules refuses with this code (a test checks it)
    ErrorCode.UNSUPPORTED_BLOCK: "Use a valid block state (see block_states_help in project_context). details.reason "
    "names any other refusal: places_fluid (fluids, waterlogged=true), "
    "unsupported_gravity (a gravity block over air), unsupported_attachment (nothing "
    "to hang or stand on: place that first), unsupported_block_entity (spawners, "
    "command, structure, jigsaw blocks…; furniture such as chests, signs and beds is "
    "allowed). Change or leave out the positions it names.",
    ErrorCode.STALE_SNAPSHOT: "The plan expired or the world changed since it was prepared: call build_prepare again and apply the new plan with a new idempotency_key.",
    ErrorCode.WORLD_CHANGED: "The world was replaced since (a new save): this plan, operation, part or cursor belongs to the old one and is never used on the new world. Call project_context, inspect the new world and prepare anew.",
    ErrorCode.CONFLICT: "Blocks differ from what the plan expected (someone built there). Inspect the region, then prepare a plan that respects the current blocks.",
    ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED: "The plan replaces blocks a player placed (details list them). Ask the user; only with their consent repeat build_apply with replace_player_blocks: true, otherwise prepare a plan that leaves them.",
    ErrorCode.BUDGET_EXCEEDED: "A limit was hit: split the work into smaller regions or recipes (limits are in project_context).",
    ErrorCode.BUSY: "The writer is busy: wait a few seconds and repeat the same call.",
    ErrorCode.PAUSED: "Writes are paused (the user ran /ai stop or pause). Ask the user to resume; then repeat the same call.",
    ErrorCode.RESYNC_REQUIRED: "Your view of the world is stale: read a fresh region_inspect summary before continuing.",
    ErrorCode.RECOVERY_REQUIRED: "An interrupted operation waits for an admin decision; no new writes until then. Tell the user (project_context lists it).",
    ErrorCode.VERSION_MISMATCH: "The world or block registry version changed: re-read project_context and prepare again.",
    ErrorCode.CAMERA_UNAVAILABLE: "No camera is available right now; continue without a picture or retry later.",
    ErrorCode.CAPTURE_NOT_READY: "The capture is not ready yet: poll again with the same capture id in a few seconds.",
    ErrorCode.UNAVAILABLE: "A service is not answering: retry the same call shortly. After a build_apply timeout use the SAME idempotency_key or operation_status, never a new key.",
    ErrorCode.INTERNAL: "A bug in the server: tell the user the reference in the message; do not retry the same call in a loop.",
}

_MAX_DETAILS_BYTES = 4096


def error_payload(err: McbError) -> dict[str, Any]:
    body: dict[str, Any] = {
        "code": str(err.code),
        "message": err.message,
        "retryable": bool(err.retryable),
        "hint": HINTS[ErrorCode(err.code)],
    }
    if err.details:
        text = json.dumps(err.details, ensure_ascii=False, default=str)
        if len(text.encode()) <= _MAX_DETAILS_BYTES:
            body["details"] = err.details
        else:
            body["details_truncated"] = True
            body["details_preview"] = text.encode()[:_MAX_DETAILS_BYTES].decode(errors="ignore")
    return {"error": body}


def tool_error(err: McbError) -> types.CallToolResult:
    payload = error_payload(err)
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False, separators=(",", ":")))],
        structured_content=payload,
        is_error=True,
    )


def internal_error(tool: str, exc: BaseException) -> types.CallToolResult:
    """An unexpected exception: log it with a reference; tell the model only the reference."""
    ref = uuid.uuid4().hex[:12]
    log.error("tool %s failed unexpectedly (ref %s)", tool, ref, exc_info=exc)
    return tool_error(
        McbError(
            ErrorCode.INTERNAL,
            f"unexpected error in the bridge while running {tool} (reference {ref}; the details are in the bridge log)",
        )
    )
