package dev.mcb.camera.core;

import java.util.Map;

/**
 * A capture that ends without a picture: sent to the worker as {@code failed} with a code the
 * worker maps to its error tree once (link.py): {@code capture_not_ready}, {@code out_of_bounds},
 * {@code invalid_request}, {@code camera_unavailable}.
 */
public final class CaptureFailure extends Exception {
    private final String code;
    private final Map<String, Object> details;

    public CaptureFailure(String code, String message, Map<String, Object> details) {
        super(message);
        this.code = code;
        this.details = Map.copyOf(details);
    }

    public String code() {
        return code;
    }

    public Map<String, Object> details() {
        return details;
    }
}
