package dev.mcb.world.core;

import com.google.gson.JsonObject;

/** A structured error: code, a message a person can act on, optional machine-readable details. */
public final class McbException extends RuntimeException {
    public final ErrorCode code;
    public final JsonObject details;

    public McbException(ErrorCode code, String message) {
        this(code, message, null);
    }

    public McbException(ErrorCode code, String message, JsonObject details) {
        super(message, null, false, false);
        this.code = code;
        this.details = details;
    }

    public static McbException invalid(String message) {
        return new McbException(ErrorCode.INVALID_REQUEST, message);
    }

    public JsonObject toJson() {
        JsonObject o = new JsonObject();
        o.addProperty("code", code.wire);
        o.addProperty("message", getMessage());
        o.addProperty("retryable", code.retryable);
        if (details != null) {
            o.add("details", details);
        }
        return o;
    }
}
