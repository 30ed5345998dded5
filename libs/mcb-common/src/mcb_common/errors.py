"""The one error tree of minecraft-builder-mcp.

Every failure a person or an agent can see is an ``McbError`` with a stable ``code``::

    McbError(code, message, retryable, details)
      code ∈ ErrorCode:
        invalid_request     the request is malformed or contradicts itself
        unauthenticated     no token, or an unknown token
        permission_denied   a known principal may not do this (scope, protected part, area owner)
        not_found           no such plan / operation / part / asset / chunk
        out_of_bounds       outside the project area or the world's height limits
        unsupported_block   unknown block, property or value; a block the writer refuses
        stale_snapshot      the plan expired or the world moved on since it was prepared
        world_changed       the plan, operation, part or cursor belongs to another world (the save was
                            replaced: `mcb world reset`, a new world folder, another server world);
                            never applied or regenerated against the current one
        conflict            a block is not what the plan expected; nothing is overwritten
        player_blocks_would_be_replaced  the plan replaces blocks a player placed and the apply
                            did not carry replace_player_blocks: true (consent)
        budget_exceeded     a limit (blocks, positions, depth, bytes, time) was hit
        busy                the writer is occupied; retry later
        paused              writes are paused (``/ai stop``, ``pause``); resume first
        resync_required     a change cursor is stale; read a fresh summary
        recovery_required   an operation needs an admin decision before any new write
        version_mismatch    the world/registry version differs from what the request assumed
        camera_unavailable  no camera driver, or its link dropped
        capture_not_ready   the scene did not become ready in time
        unavailable         a service this one depends on cannot be reached (retryable)
        internal            a bug; the message says where to look

This module has no transport. Boundaries translate the tree exactly once each, from the tables
in ``mcb_rpc.errors`` (``GRPC_STATUS``, ``HTTP_STATUS``): gRPC services through
``mcb_rpc.errors.abort_with``, which ``mcb_rpc.boundary`` wraps (status + the full error as JSON
in the ``mcb-error`` trailer), the world host's HTTP server through ``HTTP_STATUS``, and the
bridge's MCP adapter (``mcb_bridge.errors``: a tool result with ``isError``).
tests/cross_package/test_error_tables.py fails when a code is missing from a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    INVALID_REQUEST = "invalid_request"
    UNAUTHENTICATED = "unauthenticated"
    PERMISSION_DENIED = "permission_denied"
    NOT_FOUND = "not_found"
    OUT_OF_BOUNDS = "out_of_bounds"
    UNSUPPORTED_BLOCK = "unsupported_block"
    STALE_SNAPSHOT = "stale_snapshot"
    WORLD_CHANGED = "world_changed"
    CONFLICT = "conflict"
    PLAYER_BLOCKS_WOULD_BE_REPLACED = "player_blocks_would_be_replaced"
    BUDGET_EXCEEDED = "budget_exceeded"
    BUSY = "busy"
    PAUSED = "paused"
    RESYNC_REQUIRED = "resync_required"
    RECOVERY_REQUIRED = "recovery_required"
    VERSION_MISMATCH = "version_mismatch"
    CAMERA_UNAVAILABLE = "camera_unavailable"
    CAPTURE_NOT_READY = "capture_not_ready"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"


# Whether repeating the same call (unchanged) can succeed later.
RETRYABLE: dict[ErrorCode, bool] = {
    ErrorCode.INVALID_REQUEST: False,
    ErrorCode.UNAUTHENTICATED: False,
    ErrorCode.PERMISSION_DENIED: False,
    ErrorCode.NOT_FOUND: False,
    ErrorCode.OUT_OF_BOUNDS: False,
    ErrorCode.UNSUPPORTED_BLOCK: False,
    ErrorCode.STALE_SNAPSHOT: False,
    ErrorCode.WORLD_CHANGED: False,
    ErrorCode.CONFLICT: False,
    ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED: False,
    ErrorCode.BUDGET_EXCEEDED: False,
    ErrorCode.BUSY: True,
    ErrorCode.PAUSED: True,
    ErrorCode.RESYNC_REQUIRED: False,
    ErrorCode.RECOVERY_REQUIRED: True,
    ErrorCode.VERSION_MISMATCH: False,
    ErrorCode.CAMERA_UNAVAILABLE: True,
    ErrorCode.CAPTURE_NOT_READY: True,
    ErrorCode.UNAVAILABLE: True,
    ErrorCode.INTERNAL: False,
}


@dataclass
class McbError(Exception):
    code: ErrorCode
    message: str
    retryable: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.code = ErrorCode(self.code)
        if self.retryable is None:
            self.retryable = RETRYABLE[self.code]
        super().__init__(f"{self.code}: {self.message}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": str(self.code),
            "message": self.message,
            "retryable": bool(self.retryable),
        }
        if self.details:
            out["details"] = self.details
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> McbError:
        try:
            code = ErrorCode(data.get("code", "internal"))
        except ValueError:
            code = ErrorCode.INTERNAL
        return cls(
            code,
            str(data.get("message", "")),
            data.get("retryable"),
            dict(data.get("details") or {}),
        )


def invalid(message: str, **details: Any) -> McbError:
    return McbError(ErrorCode.INVALID_REQUEST, message, details=details)
