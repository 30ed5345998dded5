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
import java.util.HashMap;
import java.util.Map;

/**
 * Where the headless client "receives" sections from: the world host's {@code region_read}
 * over the world protocol (HTTP JSON), one block-thick layer, whose answer carries the
 * sections' current revisions — what a real client would hold once the server sent the chunks.
 */
final class WorldRevisions {
    // HTTP/1.1: the default (HTTP/2) proposes an h2c upgrade on http://, and a server may then
    // answer without reading the request body (uvicorn's httptools protocol does)
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final URI rpc;
    private final String token;

    WorldRevisions(String worldUrl, String token) {
        this.rpc = URI.create(worldUrl.replaceAll("/+$", "") + "/v1/rpc");
        this.token = token;
    }

    /**
     * The revisions now of the sections of layer {@code sy} for chunks cx0..cx1 x cz0..cz1 (one thin
     * {@code region_read}, like the worker's own revision check); null when the host does not
     * have them (not generated/loaded).
     */
    Map<SectionKey, Long> layer(int cx0, int cz0, int cx1, int cz1, int sy) throws IOException, InterruptedException {
        int y = sy * 16;
        String body = "{\"method\":\"region_read\",\"params\":{\"min\":{\"x\":" + cx0 * 16 + ",\"y\":" + y
                + ",\"z\":" + cz0 * 16 + "},\"max\":{\"x\":" + (cx1 * 16 + 15) + ",\"y\":" + y + ",\"z\":"
                + (cz1 * 16 + 15) + "}}}";
        HttpRequest req = HttpRequest.newBuilder(rpc).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> res = http.send(req, HttpResponse.BodyHandlers.ofString());
        JsonObject o = JsonParser.parseString(res.body()).getAsJsonObject();
        if (!o.has("ok") || !o.get("ok").getAsBoolean()) {
            return null;
        }
        Map<SectionKey, Long> out = new HashMap<>();
        for (int cx = cx0; cx <= cx1; cx++) {
            for (int cz = cz0; cz <= cz1; cz++) {
                out.put(new SectionKey(cx, sy, cz), 0L); // a section never written has revision 0
            }
        }
        JsonObject result = o.getAsJsonObject("result");
        if (result != null && result.has("revisions")) {
            for (JsonElement e : result.getAsJsonArray("revisions")) {
                JsonObject r = e.getAsJsonObject();
                out.put(new SectionKey((int) get(r, "cx"), (int) get(r, "sy"), (int) get(r, "cz")), get(r, "revision"));
            }
        }
        return out;
    }

    private static long get(JsonObject o, String k) {
        return o.has(k) ? o.get(k).getAsLong() : 0; // proto3 JSON omits zeros; uint64 is a string
    }
}
