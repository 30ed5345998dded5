package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bukkit.Material;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/** /ai stop and /ai resume through the command path, and plugin/server restarts. */
class PauseRestartTest {

    static boolean paused(PluginHarness h) throws Exception {
        return h.rpcOk("service", "world_info", "{}").get("paused").getAsBoolean();
    }

    /** /ai resume answers at once and takes effect once "not paused" is stored (a writer thread): wait for it. */
    static boolean resumed(PluginHarness h) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (paused(h)) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    static String errorCode(JsonObject envelope) {
        return envelope.get("ok").getAsBoolean() ? "ok" : envelope.getAsJsonObject("error").get("code").getAsString();
    }

    @Test
    void aiStopPausesWritesAndAiResumeAllowsThem() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            PlayerMock op = h.player("owner", true);
            assertTrue(op.performCommand("ai stop"));
            assertTrue(paused(h), "/ai stop pauses the host");
            List<int[]> pos = PluginHarness.slab(0, 65, 0, 16);
            JsonObject refused = h.rpc("service", "batch_apply", h.batch("p1", pos, "minecraft:air", "minecraft:stone"));
            assertEquals("paused", errorCode(refused), refused.toString());
            assertEquals(Material.AIR, h.world.getBlockAt(0, 65, 0).getType());

            assertTrue(op.performCommand("ai resume"));
            assertTrue(resumed(h), "/ai resume allows writes once stored");
            JsonObject ok = h.rpcOk("service", "batch_apply", h.batch("p2", pos, "minecraft:air", "minecraft:stone"));
            assertEquals(16, ok.get("written").getAsInt());
            assertEquals(Material.STONE, h.world.getBlockAt(0, 65, 0).getType());
        }
    }

    @Test
    void aiStopFailsABatchThatWaitsForItsTick() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            PlayerMock op = h.player("owner", true);
            Future<JsonObject> call = h.rpcAsync("service", "batch_apply",
                    h.batch("w1", PluginHarness.slab(0, 65, 0, 64), "minecraft:air", "minecraft:stone"));
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (h.core().executor().queued() < 1 && System.nanoTime() < deadline) {
                h.world.tick(); // its chunks load on the server thread (Paper); no scheduler tick runs the batch
                Thread.sleep(5);
            }
            assertEquals(1, h.core().executor().queued());
            assertTrue(op.performCommand("ai stop"));
            JsonObject r = call.get(10, TimeUnit.SECONDS); // answered without any tick
            assertEquals("paused", errorCode(r), r.toString());
            h.tick();
            assertEquals(Material.AIR, h.world.getBlockAt(0, 65, 0).getType(), "the stopped batch never runs");
            assertEquals(0, h.core().executor().stats().blocks());
        }
    }

    @Test
    void withoutPermissionResumeIsRefused() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            PlayerMock op = h.player("owner", true);
            PlayerMock guest = h.player("guest", false);
            assertTrue(op.performCommand("ai stop"));
            guest.performCommand("ai resume");
            assertTrue(paused(h), "a player without mcb.ai.manage cannot resume");
        }
    }

    @Test
    void aPluginReloadServesAgainWithOneTickTask() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            long tasks = h.pendingTasks();
            h.rpcOk("service", "batch_apply", h.batch("r1", PluginHarness.slab(0, 65, 0, 32), "minecraft:air",
                    "minecraft:stone"));
            h.restartPlugin();
            assertTrue(h.plugin().isEnabled());
            assertTrue(h.port() > 0);
            assertEquals(tasks, h.pendingTasks(), "a reload leaves exactly the tasks of one enable");
            JsonObject info = h.rpcOk("service", "world_info", "{}");
            assertEquals(h.world.getUID().toString(), info.get("worldUuid").getAsString());
            // the blocks are in the world; a batch written before is now `already`
            JsonObject again = h.rpcOk("service", "batch_apply", h.batch("r2", PluginHarness.slab(0, 65, 0, 32),
                    "minecraft:air", "minecraft:stone"));
            assertEquals(32, again.get("already").getAsInt(), again.toString());
            assertEquals(0, again.get("written").getAsInt());
        }
    }

    @Test
    void aiStopSurvivesAServerRestartAndAReplayIsAnswered() throws Exception {
        PluginHarness first = PluginHarness.start();
        List<int[]> pos = PluginHarness.slab(0, 65, 0, 32);
        String batch = first.batch("keep1", pos, "minecraft:air", "minecraft:stone");
        JsonObject applied = first.rpcOk("service", "batch_apply", batch);
        assertEquals(32, applied.get("written").getAsInt());
        assertTrue(first.player("owner", true).performCommand("ai stop"));
        assertTrue(paused(first));
        try (PluginHarness h = first.restartServer()) {
            assertTrue(h.plugin().isEnabled());
            assertTrue(paused(h), "the pause flag is kept in the data folder (state/)");
            // the idempotency record survived: the same batch id and content is answered, not refused
            JsonObject replay = h.rpcOk("service", "batch_apply", batch);
            assertTrue(replay.get("replayed").getAsBoolean(), replay.toString());
            assertTrue(h.player("owner", true).performCommand("ai resume"));
            assertTrue(resumed(h), "/ai resume allows writes once stored");
        }
    }

    @Test
    void aServerRestartKeepsTheDataFolder() throws Exception {
        PluginHarness first = PluginHarness.start();
        String token = first.token("service");
        int oldPort = first.port();
        try (PluginHarness h = first.restartServer()) {
            assertTrue(h.plugin().isEnabled());
            assertEquals(token, h.token("service"), "the token files survive the restart");
            JsonObject info = h.rpcOk("service", "world_info", "{}"); // authenticated with the kept token
            assertEquals("world", info.get("worldName").getAsString());
            assertNotEquals("", info.get("hostInstance").getAsString());
            assertTrue(h.port() > 0 && oldPort > 0);
        }
    }
}
