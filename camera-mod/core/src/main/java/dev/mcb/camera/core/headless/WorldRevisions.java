package dev.mcb.camera.core.headless;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mcb.camera.core.SectionKey;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Where the headless client "receives" sections from: the world host's {@code region_read}
 * over the world protocol (HTTP JSON), one block of the section, whose answer carries the
 * section's current revision — what a real client would hold once the server sent the chunk.
 */
final class WorldRevisions {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI rpc;
    private final String token;

    WorldRevisions(String worldUrl, String token) {
        this.rpc = URI.create(worldUrl.replaceAll("/+$", "") + "/v1/rpc");
        this.token = token;
    }

    /** The section's revision now, or -1 when the host does not have it (not generated/loaded). */
    long revision(SectionKey k) throws IOException, InterruptedException {
        int x = k.cx() * 16, y = k.sy() * 16, z = k.cz() * 16;
        String body = "{\"method\":\"region_read\",\"params\":{\"min\":{\"x\":" + x + ",\"y\":" + y + ",\"z\":" + z
                + "},\"max\":{\"x\":" + x + ",\"y\":" + y + ",\"z\":" + z + "}}}";
        HttpRequest req = HttpRequest.newBuilder(rpc).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> res = http.send(req, HttpResponse.BodyHandlers.ofString());
        JsonObject o = JsonParser.parseString(res.body()).getAsJsonObject();
        if (!o.has("ok") || !o.get("ok").getAsBoolean()) {
            return -1;
        }
        JsonObject result = o.getAsJsonObject("result");
        if (result == null || !result.has("revisions")) {
            return 0; // a section never written has revision 0 (omitted by proto3 JSON)
        }
        for (JsonElement e : result.getAsJsonArray("revisions")) {
            JsonObject s = e.getAsJsonObject();
            if (get(s, "cx") == k.cx() && get(s, "sy") == k.sy() && get(s, "cz") == k.cz()) {
                return get(s, "revision");
            }
        }
        return 0;
    }

    private static long get(JsonObject o, String k) {
        return o.has(k) ? o.get(k).getAsLong() : 0; // proto3 JSON omits zeros; uint64 is a string
    }
}
