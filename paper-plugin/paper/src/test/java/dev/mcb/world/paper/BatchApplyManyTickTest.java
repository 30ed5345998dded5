package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mcb.world.core.BatchExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bukkit.Material;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * batch_apply_many through the real plugin (its HTTP server, the core, the BukkitScheduler, its data folder):
 * written only by scheduler ticks, one batch a tick even where the budget has room for all of them, and stopped
 * between two batches by pause, batch_cancel and /ai stop. The test thread is the server thread.
 */
class BatchApplyManyTickTest {
    static final int BATCHES = 8;
    static final int BLOCKS = 64; // 8 x 64 = 512: all of them would fit one tick's cap if sent as plain batches
    PluginHarness h;

    @BeforeEach
    void start() {
        h = PluginHarness.start();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    /** batch_apply_many params: {@code n} batches of operation {@code op}, batch i on layer y = 65 + i. */
    String request(String prefix, String op, int n) {
        return request(prefix, op, n, 65);
    }

    /** As above, batch i on layer y = y0 + i. */
    String request(String prefix, String op, int n, int y0) {
        List<String> batches = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batches.add(h.batch(prefix + i, PluginHarness.slab(0, y0 + i, 0, BLOCKS), "minecraft:air", "minecraft:stone")
                    .replace("\"operationId\":\"op-" + prefix + i + "\"", "\"operationId\":\"" + op + "\""));
        }
        return "{\"batches\":[" + String.join(",", batches) + "]}";
    }

    long batchesRun() {
        return h.core().executor().stats().batches();
    }

    /** Tick one tick at a time until {@code f} is answered; no tick runs more than one batch of the request. */
    JsonObject tickingOneBatchATick(Future<JsonObject> f) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long before = batchesRun();
        while (!f.isDone()) {
            assertTrue(System.nanoTime() < deadline, "no answer within 20 s");
            h.tick();
            long now = batchesRun();
            assertTrue(now - before <= 1, (now - before) + " batches of one request in one tick");
            before = now;
            Thread.sleep(1);
        }
        return f.get();
    }

    /** Tick until the executor has run {@code n} batches in all (one a tick), then stop ticking. */
    void tickUntilRun(long n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (batchesRun() < n) {
            assertTrue(System.nanoTime() < deadline, batchesRun() + " batches run, waiting for " + n);
            h.tick();
            assertTrue(batchesRun() <= n, "one batch a tick");
            Thread.sleep(1);
        }
    }

    static List<String> outcomes(JsonObject result) {
        List<String> out = new ArrayList<>();
        for (var e : result.getAsJsonArray("answers")) {
            JsonObject a = e.getAsJsonObject();
            String o = a.get("outcome").getAsString();
            out.add(o + ":" + switch (o) {
                case "answered" -> a.getAsJsonObject("result").get("status").getAsString()
                        + (a.getAsJsonObject("result").get("replayed").getAsBoolean() ? "+replayed" : "");
                case "error" -> a.getAsJsonObject("error").get("code").getAsString();
                default -> a.get("reason").getAsString();
            });
        }
        return out;
    }

    static List<String> expected(int applied, int total, String rest) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            out.add(i < applied ? "answered:applied" : rest);
        }
        return out;
    }

    boolean layerWritten(int i) {
        for (int[] p : PluginHarness.slab(0, 65 + i, 0, BLOCKS)) {
            if (h.world.getBlockAt(p[0], p[1], p[2]).getType() != Material.STONE) {
                return false;
            }
        }
        return true;
    }

    boolean layerUntouched(int i) {
        for (int[] p : PluginHarness.slab(0, 65 + i, 0, BLOCKS)) {
            if (h.world.getBlockAt(p[0], p[1], p[2]).getType() != Material.AIR) {
                return false;
            }
        }
        return true;
    }

    @Test
    void eachBatchOfARequestIsWrittenOnATickOfItsOwn() throws Exception {
        JsonArray caps = h.rpcOk("service", "world_info", "{}").getAsJsonArray("capabilities");
        assertTrue(caps.toString().contains("\"batch_apply_many\""), caps.toString());
        Future<JsonObject> call = h.rpcAsync("service", "batch_apply_many", request("m", "op-m", BATCHES));
        Thread.sleep(300); // the HTTP thread has the request; no tick has run
        assertFalse(call.isDone(), "nothing answers before a tick");
        assertTrue(layerUntouched(0));
        JsonObject r = tickingOneBatchATick(call);
        assertTrue(r.get("ok").getAsBoolean(), r.toString());
        JsonObject res = r.getAsJsonObject("result");
        assertEquals(expected(BATCHES, BATCHES, ""), outcomes(res), res.toString());
        for (int i = 0; i < BATCHES; i++) {
            JsonObject a = res.getAsJsonArray("answers").get(i).getAsJsonObject();
            assertEquals("m" + i, a.get("batchId").getAsString());
            assertEquals(BLOCKS, a.getAsJsonObject("result").get("written").getAsInt());
            assertTrue(layerWritten(i), "layer " + i);
        }
        BatchExecutor.TickStats s = h.core().executor().stats();
        assertEquals(BATCHES, s.batches());
        assertEquals(BATCHES, s.busyTicks(), "one batch a tick");
        assertEquals(BATCHES * BLOCKS, s.blocks());
        assertEquals(0, h.world.diskWaits(), "the server thread never waited for the disk");

        // every answer was stored in the data folder before it was given: the same request replays them all
        JsonObject again = h.rpcOk("service", "batch_apply_many", request("m", "op-m", BATCHES));
        List<String> replayed = new ArrayList<>();
        for (int i = 0; i < BATCHES; i++) {
            replayed.add("answered:applied+replayed");
        }
        assertEquals(replayed, outcomes(again));
        assertEquals(BATCHES, h.core().executor().stats().batches(), "nothing run again");
    }

    @Test
    void aPauseBetweenTwoBatchesStopsTheRest() throws Exception {
        Future<JsonObject> call = h.rpcAsync("service", "batch_apply_many", request("p", "op-p", BATCHES));
        tickUntilRun(2);
        // pause answers on its HTTP thread without a tick (its flag is stored by the state writer)
        JsonObject paused = h.rpcAsync("admin", "pause", "{\"reason\":\"test\"}").get(10, TimeUnit.SECONDS);
        assertTrue(paused.get("ok").getAsBoolean(), paused.toString());
        JsonObject res = h.ticking(call).getAsJsonObject("result");
        assertEquals(expected(2, BATCHES, "not_started:paused"), outcomes(res), res.toString());
        assertTrue(layerWritten(1));
        assertTrue(layerUntouched(2), "no batch started after pause answered");
        assertEquals(2, h.core().executor().stats().batches());
    }

    @Test
    void batchCancelBetweenTwoBatchesStopsTheRestOfThatOperation() throws Exception {
        Future<JsonObject> call = h.rpcAsync("service", "batch_apply_many", request("c", "op-c", BATCHES));
        tickUntilRun(3);
        JsonObject cancelled = h.rpcAsync("service", "batch_cancel", "{\"operationId\":\"op-c\"}").get(10, TimeUnit.SECONDS);
        assertTrue(cancelled.get("ok").getAsBoolean(), cancelled.toString());
        assertTrue(cancelled.getAsJsonObject("result").get("cancelled").getAsBoolean());
        JsonObject res = h.ticking(call).getAsJsonObject("result");
        assertEquals(expected(3, BATCHES, "not_started:cancelled"), outcomes(res), res.toString());
        assertTrue(layerUntouched(3));
        assertFalse(h.core().executor().paused(), "a cancel is not a pause");
        // another operation's request runs
        JsonObject other = h.rpcOk("service", "batch_apply_many", request("o", "op-other", 2, 80));
        assertEquals(expected(2, 2, ""), outcomes(other));
    }

    @Test
    void aiStopBetweenTwoBatchesStopsTheRest() throws Exception {
        PlayerMock op = h.player("owner", true);
        Future<JsonObject> call = h.rpcAsync("service", "batch_apply_many", request("s", "op-s", BATCHES));
        tickUntilRun(1);
        assertTrue(op.performCommand("ai stop")); // on the server thread, between two ticks
        JsonObject res = h.ticking(call).getAsJsonObject("result");
        assertEquals(expected(1, BATCHES, "not_started:paused"), outcomes(res), res.toString());
        assertTrue(layerUntouched(1));
    }

    @Test
    void aConflictEndsTheRequest() throws Exception {
        h.world.getBlockAt(5, 67, 0).setType(Material.GLASS); // batch 2's layer
        JsonObject res = h.rpcOk("service", "batch_apply_many", request("k", "op-k", 4));
        assertEquals(List.of("answered:applied", "answered:applied", "answered:conflict", "not_started:after_conflict"),
                outcomes(res));
        assertTrue(layerUntouched(3));
        assertEquals(Material.AIR, h.world.getBlockAt(0, 67, 0).getType(), "the conflicting batch wrote nothing");
    }
}
