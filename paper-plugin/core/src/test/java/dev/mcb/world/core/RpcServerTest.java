package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RpcServerTest {
    @TempDir
    Path secrets;
    DirectScheduler sched;
    RpcServer server;
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws IOException {
        Files.writeString(secrets.resolve("service.token"), "svc-token\n");
        Files.writeString(secrets.resolve("admin.token"), "adm-token\n");
        Files.writeString(secrets.resolve("automation.token"), "auto-token\n");
        Files.writeString(secrets.resolve("agent.token"), "agent-token\n");
        sched = new DirectScheduler();
        WorldHostCore core = new WorldHostCore(HostConfig.defaults("test", "0", 0, false), new FakeWorld(), sched,
                DirectScheduler.NO_PLAYERS, (p, t) -> { });
        server = new RpcServer(core, Tokens.load(secrets, Map.of()), MethodTable.load());
        server.start();
    }

    @AfterEach
    void stop() {
        server.close();
        sched.close();
    }

    HttpResponse<String> call(String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/rpc"))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String code(HttpResponse<String> r) {
        JsonObject o = JsonParser.parseString(r.body()).getAsJsonObject();
        return o.get("ok").getAsBoolean() ? "ok" : o.getAsJsonObject("error").get("code").getAsString();
    }

    @Test
    void tokenScopesFollowMethodsJson() throws Exception {
        String info = "{\"method\":\"world_info\",\"params\":{}}";
        String batch = "{\"method\":\"batch_apply\",\"params\":{\"batchId\":\"x\",\"worldEpoch\":1,\"entries\":"
                + "[{\"x\":0,\"y\":64,\"z\":0,\"expected\":\"air\",\"desired\":\"stone\"}]}}";
        assertEquals("ok", code(call("svc-token", info)));
        assertEquals("ok", code(call("adm-token", info)));
        HttpResponse<String> r = call(null, info);
        assertEquals(401, r.statusCode());
        assertEquals("unauthenticated", code(r));
        assertEquals(401, call("agent-token", info).statusCode(), "agents never talk to the world host");
        assertEquals(401, call("nope", info).statusCode());
        r = call("adm-token", batch);
        assertEquals(403, r.statusCode());
        assertEquals("permission_denied", code(r));
        assertEquals(403, call("auto-token", batch).statusCode());
        assertEquals(403, call("auto-token", info).statusCode());
        // automation is off in this host: even the automation token is refused, saying why
        r = call("auto-token", "{\"method\":\"automation_chat\",\"params\":{\"playerId\":\"a\",\"text\":\"hi\"}}");
        assertEquals(403, r.statusCode());
        assertTrue(r.body().contains("automation"));
        r = call("svc-token", batch);
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void chatMethodsOverRpc() throws Exception {
        String poll = "{\"method\":\"chat_poll\",\"params\":{\"clientId\":\"bridge-1\"}}";
        assertEquals(403, call("svc-token", poll).statusCode());
        assertEquals(403, call("auto-token", poll).statusCode());
        assertEquals(401, call("agent-token", poll).statusCode());
        HttpResponse<String> r = call("adm-token", poll);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"messages\":[]") && r.body().contains("\"tookOver\":false"), r.body());
        r = call("adm-token", "{\"method\":\"chat_reply\",\"params\":{\"id\":\"msg-1\",\"playerId\":\"a\","
                + "\"clientId\":\"bridge-1\",\"text\":\"hi\"}}");
        assertEquals(404, r.statusCode(), r.body());
        r = call("svc-token", "{\"method\":\"player_context\",\"params\":{\"playerId\":\"nobody\"}}");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"online\":false"), r.body());
        // the test-only outbox needs local automation, which is off here
        r = call("auto-token", "{\"method\":\"automation_chat_outbox\",\"params\":{\"playerId\":\"a\"}}");
        assertEquals(403, r.statusCode(), r.body());
    }

    static String manyBody(String... batches) {
        return "{\"method\":\"batch_apply_many\",\"params\":{\"batches\":[" + String.join(",", batches) + "]}}";
    }

    static String manyBatch(String id, int y, int epoch) {
        return "{\"batchId\":\"" + id + "\",\"worldEpoch\":" + epoch + ",\"operationId\":\"op-rpc\",\"entries\":"
                + "[{\"x\":0,\"y\":" + y + ",\"z\":0,\"expected\":\"air\",\"desired\":\"stone\"}]}";
    }

    @Test
    void batchApplyManyAndBatchCancelOverRpc() throws Exception {
        String ok = manyBody(manyBatch("m0", 70, 1), manyBatch("m1", 71, 2), manyBatch("m2", 72, 1));
        assertEquals(403, call("adm-token", ok).statusCode(), "service only");
        HttpResponse<String> r = call("svc-token", ok);
        assertEquals(200, r.statusCode(), r.body());
        JsonObject res = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("result");
        var answers = res.getAsJsonArray("answers");
        assertEquals(3, answers.size());
        JsonObject a0 = answers.get(0).getAsJsonObject();
        assertEquals("m0", a0.get("batchId").getAsString());
        assertEquals("answered", a0.get("outcome").getAsString());
        assertEquals("applied", a0.getAsJsonObject("result").get("status").getAsString());
        JsonObject a1 = answers.get(1).getAsJsonObject();
        assertEquals("error", a1.get("outcome").getAsString());
        JsonObject err = a1.getAsJsonObject("error");
        assertEquals("stale_snapshot", err.get("code").getAsString());
        assertEquals(false, err.get("retryable").getAsBoolean());
        assertTrue(err.get("message").getAsString().contains("epoch"), err.toString());
        assertEquals(1, JsonParser.parseString(err.get("detailsJson").getAsString()).getAsJsonObject()
                .get("worldEpoch").getAsInt());
        JsonObject a2 = answers.get(2).getAsJsonObject();
        assertEquals("not_started", a2.get("outcome").getAsString());
        assertEquals("after_error", a2.get("reason").getAsString());
        // whole-request refusals: the envelope's error, with the HTTP status of its code
        r = call("svc-token", manyBody());
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("invalid_request", code(r));
        String[] many = new String[17];
        for (int i = 0; i < many.length; i++) {
            many[i] = manyBatch("n" + i, 80, 1);
        }
        r = call("svc-token", manyBody(many));
        assertEquals(413, r.statusCode(), r.body());
        assertEquals("budget_exceeded", code(r));
        r = call("svc-token", manyBody(manyBatch("d", 81, 1), manyBatch("d", 82, 1)));
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("invalid_request", code(r));
        r = call("svc-token", "{\"method\":\"batch_apply_many\",\"params\":{\"batches\":[],\"nope\":1}}");
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("nope"), r.body());
        // batch_cancel
        r = call("svc-token", "{\"method\":\"batch_cancel\",\"params\":{\"operationId\":\"op-rpc\"}}");
        assertEquals(200, r.statusCode(), r.body());
        JsonObject c = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("result");
        assertEquals("op-rpc", c.get("operationId").getAsString());
        assertTrue(c.get("cancelled").getAsBoolean());
        assertEquals(403, call("adm-token", "{\"method\":\"batch_cancel\",\"params\":{\"operationId\":\"x\"}}")
                .statusCode());
        r = call("svc-token", "{\"method\":\"batch_cancel\",\"params\":{}}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("invalid_request", code(r));
        r = call("svc-token", manyBody(manyBatch("m3", 73, 1)));
        JsonObject cancelled = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("result")
                .getAsJsonArray("answers").get(0).getAsJsonObject();
        assertEquals("not_started", cancelled.get("outcome").getAsString(), r.body());
        assertEquals("cancelled", cancelled.get("reason").getAsString());
    }

    JsonObject health() throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/health")).GET().build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return JsonParser.parseString(r.body()).getAsJsonObject();
    }

    @Test
    void healthHasUptimeAndTheLastServerSideErrorOnly() throws Exception {
        JsonObject h = health();
        assertTrue(h.get("uptime_s").getAsDouble() >= 0, h.toString());
        assertTrue(h.get("started_at").getAsString().endsWith("Z"), h.toString());
        assertTrue(h.get("last_error").isJsonNull(), h.toString());
        assertEquals(400, call("svc-token", "{nope").statusCode()); // the caller's fault: not recorded
        assertEquals(401, call("nope", "{\"method\":\"world_info\"}").statusCode());
        assertTrue(health().get("last_error").isJsonNull());
        assertEquals(503, call("svc-token", "{\"method\":\"camera_account_pose\",\"params\":{}}").statusCode());
        JsonObject err = health().getAsJsonObject("last_error");
        assertEquals("camera_unavailable", err.get("code").getAsString());
        assertTrue(err.get("message").getAsString().contains("camera"), err.toString());
        assertTrue(err.get("at").getAsString().endsWith("Z"), err.toString());
    }

    @Test
    void envelopeErrorsAndLimits() throws Exception {
        assertEquals(400, call("svc-token", "{nope").statusCode());
        assertEquals(404, call("svc-token", "{\"method\":\"no_such\"}").statusCode());
        HttpResponse<String> r = call("svc-token", "{\"method\":\"region_read\",\"params\":{\"colour\":1}}");
        assertEquals(400, r.statusCode());
        assertTrue(r.body().contains("colour"), r.body());
        r = call("svc-token", "{\"method\":\"camera_account_pose\",\"params\":{}}");
        assertEquals(503, r.statusCode(), r.body()); // this core has no camera account configured
        assertEquals("camera_unavailable", code(r));
        assertTrue(r.body().contains("no_camera_account"), r.body());
        r = call("svc-token", "{\"method\":\"world_info\",\"pad\":\"" + "x".repeat(9 * 1024 * 1024) + "\"}");
        assertEquals(413, r.statusCode());
        assertEquals("budget_exceeded", code(r));
        r = call("svc-token", "{\"method\":\"world_info\",\"requestId\":\"abc\"}");
        assertEquals("abc", JsonParser.parseString(r.body()).getAsJsonObject().get("requestId").getAsString());
    }

    @Test
    void bindsToLoopbackOnly() throws Exception {
        assertTrue(server.address().getAddress().isLoopbackAddress());
        assertThrows(IOException.class, () -> RpcServer.loopbackOnly("0.0.0.0"));
        assertThrows(IOException.class, () -> RpcServer.loopbackOnly("8.8.8.8"));
        WorldHostCore core = new WorldHostCore(new HostConfig("t", "0", "0.0.0.0", 0, false, 1024,
                java.time.Duration.ofSeconds(1), 1), new FakeWorld(), sched, DirectScheduler.NO_PLAYERS, (p, t) -> { });
        assertThrows(IOException.class, () -> new RpcServer(core, new Tokens(Map.of()), MethodTable.load()));
        assertTrue(RpcServer.loopbackOnly("localhost").isLoopbackAddress());
        assertTrue(RpcServer.loopbackOnly("::1").isLoopbackAddress());
    }

    @Test
    void errorTableMatchesThePythonSide() {
        // mcb_rpc/errors.py HTTP_STATUS and mcb_common.errors.RETRYABLE
        assertEquals(423, ErrorCode.PAUSED.httpStatus);
        assertTrue(ErrorCode.PAUSED.retryable);
        assertEquals(409, ErrorCode.STALE_SNAPSHOT.httpStatus);
        assertEquals(413, ErrorCode.BUDGET_EXCEEDED.httpStatus);
        assertEquals(429, ErrorCode.BUSY.httpStatus);
        assertEquals(423, ErrorCode.RECOVERY_REQUIRED.httpStatus);
        assertEquals(504, ErrorCode.CAPTURE_NOT_READY.httpStatus);
    }
}
