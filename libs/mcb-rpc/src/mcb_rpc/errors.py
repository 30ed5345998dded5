"""Error tables at the transport boundaries: McbError <-> gRPC status and HTTP status.

One table per boundary (STYLE habit 3); tests/cross_package/test_error_tables.py fails if an
ErrorCode is missing from any of them. gRPC carries the full structured error as JSON in
the trailing metadata key ``mcb-error`` so no detail is lost between services.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
from mcb_common.errors import ErrorCode, McbError

from mcb_rpc.health import record_error, record_exception

GRPC_STATUS: dict[ErrorCode, grpc.StatusCode] = {
    ErrorCode.INVALID_REQUEST: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    ErrorCode.PERMISSION_DENIED: grpc.StatusCode.PERMISSION_DENIED,
    ErrorCode.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    ErrorCode.OUT_OF_BOUNDS: grpc.StatusCode.OUT_OF_RANGE,
    ErrorCode.UNSUPPORTED_BLOCK: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.STALE_SNAPSHOT: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.WORLD_CHANGED: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.CONFLICT: grpc.StatusCode.ABORTED,
    ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.BUDGET_EXCEEDED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    ErrorCode.BUSY: grpc.StatusCode.UNAVAILABLE,
    ErrorCode.PAUSED: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.RESYNC_REQUIRED: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.RECOVERY_REQUIRED: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.VERSION_MISMATCH: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.CAMERA_UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    ErrorCode.CAPTURE_NOT_READY: grpc.StatusCode.DEADLINE_EXCEEDED,
    ErrorCode.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    ErrorCode.INTERNAL: grpc.StatusCode.INTERNAL,
}

HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.OUT_OF_BOUNDS: 400,
    ErrorCode.UNSUPPORTED_BLOCK: 400,
    ErrorCode.STALE_SNAPSHOT: 409,
    ErrorCode.WORLD_CHANGED: 409,
    ErrorCode.CONFLICT: 409,
    ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED: 409,
    ErrorCode.BUDGET_EXCEEDED: 413,
    ErrorCode.BUSY: 429,
    ErrorCode.PAUSED: 423,
    ErrorCode.RESYNC_REQUIRED: 409,
    ErrorCode.RECOVERY_REQUIRED: 423,
    ErrorCode.VERSION_MISMATCH: 409,
    ErrorCode.CAMERA_UNAVAILABLE: 503,
    ErrorCode.CAPTURE_NOT_READY: 504,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.INTERNAL: 500,
}

# Statuses a gRPC client may see without an mcb-error trailer (transport failures).
_BARE_GRPC: dict[grpc.StatusCode, ErrorCode] = {
    grpc.StatusCode.UNAVAILABLE: ErrorCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: ErrorCode.UNAVAILABLE,
    grpc.StatusCode.UNAUTHENTICATED: ErrorCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED: ErrorCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT: ErrorCode.INVALID_REQUEST,
    grpc.StatusCode.NOT_FOUND: ErrorCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ErrorCode.BUDGET_EXCEEDED,
}

TRAILER = "mcb-error"


async def abort_with(context: grpc.aio.ServicerContext, err: McbError) -> None:
    """Abort the current RPC with the structured error (servicer side); a server-side failure
    is remembered for ``/health`` (mcb_rpc.health)."""
    record_error(err)
    context.set_trailing_metadata(((TRAILER, json.dumps(err.to_dict())),))
    await context.abort(GRPC_STATUS[err.code], err.message)


async def abort_internal(context: grpc.aio.ServicerContext, exc: BaseException, message: str) -> None:
    """A bug at the gRPC boundary: ``/health`` gets its class and redacted text, the caller only
    ``message`` (``internal``); the caller logs the traceback."""
    record_exception(exc)
    err = McbError(ErrorCode.INTERNAL, message)
    context.set_trailing_metadata(((TRAILER, json.dumps(err.to_dict())),))
    await context.abort(GRPC_STATUS[err.code], err.message)


def from_rpc_error(exc: grpc.RpcError, service: str, timeout: float | None = None) -> McbError:
    """Translate a gRPC client-side error back into the McbError it carried.

    ``timeout``: the deadline the call was given, in seconds, so that a call the service did not
    finish in time says so ("took longer than N s") instead of claiming it cannot be reached."""
    trailers: Any = ()
    try:
        trailers = exc.trailing_metadata() or ()
    except Exception:  # noqa: BLE001 - some RpcErrors carry no call object
        trailers = ()
    for key, value in trailers:
        if key == TRAILER:
            try:
                return McbError.from_dict(json.loads(value))
            except (ValueError, TypeError):
                break
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    mapped = _BARE_GRPC.get(code, ErrorCode.INTERNAL)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        took = f"{timeout:g} s" if timeout else "its deadline"
        return McbError(
            mapped,
            f"the {service} service took longer than {took} to answer; it may still be "
            "working on it (a large request or a slow world host): retry, or ask for less",
            details={"reason": "deadline", **({"deadline_s": timeout} if timeout else {})},
        )
    if mapped is ErrorCode.UNAVAILABLE:
        return McbError(mapped, f"the {service} service cannot be reached; is it running? (`mcb status`)")
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return McbError(mapped, f"{service}: {details}")


def http_error_body(err: McbError, request_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"ok": False, "error": err.to_dict()}
    if request_id is not None:
        body["requestId"] = request_id
    return body
