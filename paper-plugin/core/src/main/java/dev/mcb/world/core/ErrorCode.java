package dev.mcb.world.core;

/**
 * The structured error codes of the project (mcb_common/errors.py), with the HTTP status of
 * mcb_rpc/errors.py HTTP_STATUS and the retryable flag of mcb_common.errors.RETRYABLE.
 * Keep these three tables in step with the Python side: tests/cross_package/test_error_tables.py compares them in full.
 */
public enum ErrorCode {
    INVALID_REQUEST("invalid_request", 400, false),
    UNAUTHENTICATED("unauthenticated", 401, false),
    PERMISSION_DENIED("permission_denied", 403, false),
    NOT_FOUND("not_found", 404, false),
    OUT_OF_BOUNDS("out_of_bounds", 400, false),
    UNSUPPORTED_BLOCK("unsupported_block", 400, false),
    STALE_SNAPSHOT("stale_snapshot", 409, false),
    WORLD_CHANGED("world_changed", 409, false),
    CONFLICT("conflict", 409, false),
    PLAYER_BLOCKS_WOULD_BE_REPLACED("player_blocks_would_be_replaced", 409, false),
    BUDGET_EXCEEDED("budget_exceeded", 413, false),
    BUSY("busy", 429, true),
    PAUSED("paused", 423, true),
    RESYNC_REQUIRED("resync_required", 409, false),
    RECOVERY_REQUIRED("recovery_required", 423, true),
    VERSION_MISMATCH("version_mismatch", 409, false),
    CAMERA_UNAVAILABLE("camera_unavailable", 503, true),
    CAPTURE_NOT_READY("capture_not_ready", 504, true),
    UNAVAILABLE("unavailable", 503, true),
    INTERNAL("internal", 500, false);

    public final String wire;
    public final int httpStatus;
    public final boolean retryable;

    ErrorCode(String wire, int httpStatus, boolean retryable) {
        this.wire = wire;
        this.httpStatus = httpStatus;
        this.retryable = retryable;
    }
}
