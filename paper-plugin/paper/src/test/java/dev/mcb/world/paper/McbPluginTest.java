package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.net.ConnectException;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The real plugin under MockBukkit: enable, refuse, the protocol server on loopback, disable. */
class McbPluginTest {

    @Test
    void enablesWithWorldAndServesHealthAndWorldInfo() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            assertTrue(h.plugin().isEnabled());
            assertTrue(h.port() > 0, "the log names the port: " + h.logLines());
            HttpResponse<String> health = h.get("/health");
            assertEquals(200, health.statusCode());
            JsonObject hb = JsonParser.parseString(health.body()).getAsJsonObject();
            assertEquals("paper-plugin", hb.get("service").getAsString(), hb.toString());

            JsonObject info = h.rpcOk("service", "world_info", "{}");
            assertEquals(h.world.getUID().toString(), info.get("worldUuid").getAsString(), info.toString());
            assertEquals("world", info.get("worldName").getAsString());
            assertEquals(1, info.get("epoch").getAsInt());
            assertTrue(h.lastTicks() >= 1, "world_info runs on the server thread, i.e. in a tick");
        }
    }

    @Test
    void refusesWithoutTokenAndWithAWrongOne() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            String body = "{\"method\":\"world_info\",\"params\":{}}";
            HttpResponse<String> r = h.post(null, body);
            assertEquals(401, r.statusCode());
            assertEquals("unauthenticated", JsonParser.parseString(r.body()).getAsJsonObject()
                    .getAsJsonObject("error").get("code").getAsString());
            assertEquals(401, h.post("not-the-token", body).statusCode());
            assertEquals(200, h.post(h.token("admin"), body).statusCode());
        }
    }

    @Test
    void refusesToStartWhenTheWorldIsMissing() throws Exception {
        try (PluginHarness h = PluginHarness.startWithWorld("other", Map.of())) {
            assertFalse(h.plugin().isEnabled(), "no world 'world': the plugin disables itself");
            assertEquals(-1, h.port());
            assertTrue(h.logLines().stream().anyMatch(l -> l.contains("world 'world' is not loaded")), h.logLines().toString());
            assertEquals(0, h.pendingTasks());
        }
    }

    @Test
    void configNamesTheWorld() throws Exception {
        try (PluginHarness h = PluginHarness.startWithWorld("builds", Map.of("world", "builds"))) {
            assertTrue(h.plugin().isEnabled());
            assertEquals("builds", h.rpcOk("service", "world_info", "{}").get("worldName").getAsString());
        }
    }

    @Test
    void disableClosesTheServerAndCancelsTasks() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            int port = h.port();
            assertTrue(h.pendingTasks() >= 1, "the per-tick task is scheduled");
            h.disable();
            assertFalse(h.plugin().isEnabled());
            assertEquals(0, h.pendingTasks(), "no task of the plugin survives disable");
            java.net.http.HttpClient c = java.net.http.HttpClient.newHttpClient();
            assertThrows(ConnectException.class, () -> c.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + port + "/health")).build(), HttpResponse.BodyHandlers.ofString()));
        }
    }
}
