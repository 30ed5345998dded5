package dev.mcb.world.testhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mcb.world.core.BatchExecutor;
import dev.mcb.world.core.HostConfig;
import dev.mcb.world.core.MethodTable;
import dev.mcb.world.core.RpcServer;
import dev.mcb.world.core.Tokens;
import dev.mcb.world.core.WorldHostCore;
import dev.mcb.world.core.port.Players;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The test host as tests/contract starts it (its in-memory world, its 20 TPS server thread, the core's HTTP
 * server) answering batch_apply_many and batch_cancel over HTTP: each batch in a tick of its own, and a cancel
 * sent while a request runs stops it between two batches.
 */
class BatchApplyManyHttpTest {
    private static final String TOKEN = "testhost-service-token";
    private TickScheduler scheduler;
    private WorldHostCore core;
    private RpcServer server;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void start() throws Exception {
        MemoryWorld world = new MemoryWorld(Main.loadRegistry(), "00000000-0000-0000-0000-00000000abcd", "t",
                -32, -32, 31, 31);
        scheduler = new TickScheduler(20);
        core = new WorldHostCore(new HostConfig("java-testhost", Main.VERSION, "127.0.0.1", 0, false,
                HostConfig.MAX_BODY, Duration.ofSeconds(30), 4), world, scheduler, Players.NONE, (p, t) -> { });
        server = new RpcServer(core, new Tokens(Map.of("service", TOKEN)), MethodTable.load());
        scheduler.start();
        server.start();
    }

    @AfterEach
    void stop() {
        server.close();
        scheduler.close();
    }

    private CompletableFuture<JsonObject> rpc(String method, String params) {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/rpc"))
                .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString("{\"method\":\"" + method + "\",\"params\":" + params + "}"))
                .build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> JsonParser.parseString(r.body()).getAsJsonObject());
    }

    private static JsonObject ok(JsonObject envelope) {
        assertTrue(envelope.get("ok").getAsBoolean(), envelope.toString());
        return envelope.getAsJsonObject("result");
    }

    /** {@code n} batches of 32 blocks, batch i on layer y = 70 + i, all of operation {@code op}. */
    private static String batches(String prefix, String op, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            StringBuilder b = new StringBuilder("{\"batchId\":\"" + prefix + i + "\",\"worldEpoch\":1,\"operationId\":\""
                    + op + "\",\"entries\":[");
            for (int k = 0; k < 32; k++) {
                b.append(k == 0 ? "" : ",").append("{\"x\":").append(k % 16).append(",\"y\":").append(70 + i)
                        .append(",\"z\":").append(k / 16).append(",\"expected\":\"minecraft:air\",\"desired\":\"minecraft:stone\"}");
            }
            out.add(b.append("]}").toString());
        }
        return "{\"batches\":[" + String.join(",", out) + "]}";
    }

    @Test
    void sixteenBatchesOverHttpEachInATickOfItsOwn() throws Exception {
        JsonArray caps = ok(rpc("world_info", "{}").get()).getAsJsonArray("capabilities");
        assertTrue(caps.toString().contains("\"batch_apply_many\""), caps.toString());
        long ticksBefore = scheduler.ticks();
        JsonArray answers = ok(rpc("batch_apply_many", batches("h", "op-h", 16)).get()).getAsJsonArray("answers");
        long ticks = scheduler.ticks() - ticksBefore;
        assertEquals(16, answers.size());
        for (int i = 0; i < 16; i++) {
            JsonObject a = answers.get(i).getAsJsonObject();
            assertEquals("h" + i, a.get("batchId").getAsString());
            assertEquals("answered", a.get("outcome").getAsString(), a.toString());
            assertEquals("applied", a.getAsJsonObject("result").get("status").getAsString());
            assertEquals(32, a.getAsJsonObject("result").get("written").getAsInt());
        }
        BatchExecutor.TickStats s = core.executor().stats();
        assertEquals(16, s.batches());
        assertEquals(16, s.busyTicks(), "one batch a tick (512 blocks would fit one tick's cap)");
        assertTrue(ticks >= 16, ticks + " ticks for 16 batches");
        // the same request again: every answer replayed from the records, nothing written
        answers = ok(rpc("batch_apply_many", batches("h", "op-h", 16)).get()).getAsJsonArray("answers");
        for (int i = 0; i < 16; i++) {
            assertTrue(answers.get(i).getAsJsonObject().getAsJsonObject("result").get("replayed").getAsBoolean());
        }
        assertEquals(16, core.executor().stats().batches());
    }

    @Test
    void aCancelSentWhileARequestRunsStopsItBetweenBatches() throws Exception {
        CompletableFuture<JsonObject> call = rpc("batch_apply_many", batches("c", "op-c", 16));
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (core.executor().stats().batches() < 2) {
            assertTrue(System.nanoTime() < deadline, "two batches did not run within 20 s");
            Thread.sleep(2);
        }
        JsonObject c = ok(rpc("batch_cancel", "{\"operationId\":\"op-c\"}").get());
        assertTrue(c.get("cancelled").getAsBoolean());
        long ranWhenAnswered = core.executor().stats().batches();
        JsonArray answers = ok(call.get()).getAsJsonArray("answers");
        int applied = 0;
        for (int i = 0; i < 16; i++) {
            JsonObject a = answers.get(i).getAsJsonObject();
            if (a.get("outcome").getAsString().equals("answered")) {
                assertEquals(i, applied, "the applied batches come first: " + answers);
                assertEquals("applied", a.getAsJsonObject("result").get("status").getAsString());
                applied++;
            } else {
                assertEquals("not_started", a.get("outcome").getAsString(), a.toString());
                assertEquals("cancelled", a.get("reason").getAsString(), a.toString());
            }
        }
        assertTrue(applied >= 2 && applied <= ranWhenAnswered + 1,
                applied + " applied; " + ranWhenAnswered + " had run when batch_cancel answered: at most the one being written finishes");
        assertEquals(applied, core.executor().stats().batches());
    }
}
