package dev.mcb.camera.core;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One {@code capture} message of the camera link (docs/camera-link.md). {@code sections} are
 * the sections of the scene with the revision the worker read from the world host just before
 * asking; the picture may only be taken when the client holds each of them at that revision or
 * later (the render-readiness rule). {@code format} is {@code png} (default) or {@code jpeg}.
 */
public record CaptureJob(String id, Pose pose, long timeoutMs, int stableFrames, boolean hideHud, String world,
                         Map<SectionKey, Long> sections, String format) {
    public static final long MAX_TIMEOUT_MS = 120_000;

    public static CaptureJob parse(JsonObject m) throws CaptureFailure {
        String id = str(m, "id", "");
        if (id.isEmpty()) {
            throw new CaptureFailure("invalid_request", "a capture needs an id", Map.of());
        }
        try {
            JsonObject p = m.getAsJsonObject("pose");
            if (p == null) {
                throw new CaptureFailure("invalid_request", "a capture needs a pose", Map.of("id", id));
            }
            Pose pose = new Pose(num(p, "x", Double.NaN), num(p, "y", Double.NaN), num(p, "z", Double.NaN),
                    (float) num(p, "yaw", 0), (float) num(p, "pitch", 0), (float) num(p, "fov", 70),
                    (int) num(p, "width", 1280), (int) num(p, "height", 720));
            JsonObject r = m.has("readiness") && m.get("readiness").isJsonObject() ? m.getAsJsonObject("readiness")
                    : new JsonObject();
            long timeout = (long) num(r, "timeoutMs", 20_000);
            int stable = (int) num(r, "stableFrames", 3);
            if (timeout < 0 || timeout > MAX_TIMEOUT_MS || stable < 0 || stable > 600) {
                throw new CaptureFailure("invalid_request", "readiness needs timeoutMs 0.." + MAX_TIMEOUT_MS
                        + " and stableFrames 0..600", Map.of("id", id));
            }
            Map<SectionKey, Long> sections = new LinkedHashMap<>();
            JsonElement se = m.get("sections");
            if (se != null && se.isJsonArray()) {
                for (JsonElement e : (JsonArray) se) {
                    JsonObject s = e.getAsJsonObject();
                    sections.put(new SectionKey(s.get("cx").getAsInt(), s.get("sy").getAsInt(), s.get("cz").getAsInt()),
                            s.get("revision").getAsLong());
                }
            }
            String format = str(m, "format", "png");
            if (!format.equals("png") && !format.equals("jpeg")) {
                throw new CaptureFailure("invalid_request", "format must be png or jpeg, got " + format, Map.of("id", id));
            }
            boolean hideHud = !m.has("hideHud") || m.get("hideHud").getAsBoolean();
            return new CaptureJob(id, pose, timeout, stable, hideHud, str(m, "world", ""), sections, format);
        } catch (ClassCastException | IllegalStateException | NumberFormatException | UnsupportedOperationException
                 | NullPointerException e) {
            throw new CaptureFailure("invalid_request", "the capture message is malformed: " + e.getMessage(),
                    Map.of("id", id));
        }
    }

    private static String str(JsonObject o, String k, String dflt) {
        JsonElement e = o.get(k);
        return e == null || e.isJsonNull() ? dflt : e.getAsString();
    }

    private static double num(JsonObject o, String k, double dflt) {
        JsonElement e = o.get(k);
        return e == null || e.isJsonNull() ? dflt : e.getAsDouble();
    }
}
