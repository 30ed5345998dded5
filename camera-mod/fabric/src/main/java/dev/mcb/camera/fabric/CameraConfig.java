package dev.mcb.camera.fabric;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mcb.camera.core.AllowedAreas;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * NOT COMPILED HERE. {@code config/mcb-camera.json}:
 * {@code {"url": "ws://127.0.0.1:8766/", "keyFile": "/path/to/camera-link.token",
 * "areas": ["-100,50,-100,100,200,100"]}}. The key is read from its file, never logged.
 */
record CameraConfig(String url, String key, List<AllowedAreas.Area> areas) {
    static CameraConfig load(Path file) {
        if (!Files.exists(file)) {
            return null;
        }
        try {
            JsonObject o = JsonParser.parseString(Files.readString(file)).getAsJsonObject();
            String key = Files.readString(Path.of(o.get("keyFile").getAsString())).strip();
            List<AllowedAreas.Area> areas = new ArrayList<>();
            if (o.has("areas")) {
                for (JsonElement a : o.getAsJsonArray("areas")) {
                    areas.add(AllowedAreas.Area.parse(a.getAsString()));
                }
            }
            return new CameraConfig(o.has("url") ? o.get("url").getAsString() : "ws://127.0.0.1:8766/", key, areas);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("mcb-camera.json: " + e.getMessage(), e);
        }
    }
}
