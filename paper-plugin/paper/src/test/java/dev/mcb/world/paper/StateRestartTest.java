package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.bukkit.event.world.WorldSaveEvent;
import org.junit.jupiter.api.Test;

/** The plugin's data folder across server restarts (HostState): pause flag, records, save events. */
class StateRestartTest {
    static final String AIR = "minecraft:air";
    static final String STONE = "minecraft:stone";

    @Test
    void thePauseFlagAndTheRecordsSurviveAServerRestart() throws Exception {
        PluginHarness first = PluginHarness.start();
        JsonObject applied = first.rpcOk("service", "batch_apply",
                first.batch("s1", PluginHarness.slab(0, 65, 0, 8), AIR, STONE));
        first.rpcOk("service", "pause", "{\"reason\":\"owner asked\"}");
        assertTrue(Files.exists(first.dataFolder().resolve("state").resolve("running")), "marker while enabled");
        try (PluginHarness h = first.restartServer()) {
            JsonObject info = h.rpcOk("service", "world_info", "{}");
            assertTrue(info.get("paused").getAsBoolean(), "the pause flag survives");
            assertTrue(info.getAsJsonArray("capabilities").toString().contains("durable_state"));
            JsonObject restart = info.getAsJsonObject("lastRestart");
            assertEquals("clean", restart.get("previousStop").getAsString(), restart.toString());
            // the disable's world save covered the batch: its replay is the stored answer (the harness's
            // new world is empty, which a real restart would not be: the answer is not re-checked)
            h.rpcOk("service", "resume", "{}");
            JsonObject replay = h.rpcOk("service", "batch_apply", h.batch("s1", PluginHarness.slab(0, 65, 0, 8), AIR,
                    STONE));
            assertTrue(replay.get("replayed").getAsBoolean(), replay.toString());
            assertEquals(applied.get("written"), replay.get("written"));
        }
    }

    @Test
    void saveEventsAndTheSaveAtDisableCoverTheRecords() throws Exception {
        PluginHarness h = PluginHarness.start();
        {
            h.rpcOk("service", "batch_apply", h.batch("a", PluginHarness.slab(0, 66, 0, 4), AIR, STONE));
            var state = h.core().state();
            long afterA = state.saveMark();
            h.server.getPluginManager().callEvent(new WorldSaveEvent(h.world)); // save 1 begins
            h.rpcOk("service", "batch_apply", h.batch("b", PluginHarness.slab(0, 67, 0, 4), AIR, STONE));
            h.server.getPluginManager().callEvent(new WorldSaveEvent(h.world)); // save 2 begins: save 1 is done
            state.sync().get();
            assertTrue(afterA < state.saveMark());
            int saves = h.world.saves();
            try (PluginHarness again = h.restartServer()) {
                assertEquals(saves + 1, h.world.saves(), "the plugin saves its world when it is disabled");
                assertEquals(1, h.world.flushedSaves(), "and waits for the chunk writer (save(true))");
                JsonObject restart = again.rpcOk("service", "world_info", "{}").getAsJsonObject("lastRestart");
                assertEquals("clean", restart.get("previousStop").getAsString(), restart.toString());
                assertEquals(0, restart.get("doubtfulBatches").getAsInt(), "the disable's save covers a and b");
            }
        }
    }

    /** Two batches with a world-save event after each, then a crash: how many batches are still doubtful. */
    private static int doubtfulAfterTwoSaveEvents(Map<String, Object> config, boolean autosave) throws Exception {
        PluginHarness h = PluginHarness.start(config);
        h.world.setAutoSave(autosave);
        h.rpcOk("service", "batch_apply", h.batch("a", PluginHarness.slab(0, 66, 0, 4), AIR, STONE));
        h.server.getPluginManager().callEvent(new WorldSaveEvent(h.world));
        h.rpcOk("service", "batch_apply", h.batch("b", PluginHarness.slab(0, 67, 0, 4), AIR, STONE));
        h.server.getPluginManager().callEvent(new WorldSaveEvent(h.world));
        try (PluginHarness again = h.crashServer()) {
            JsonObject restart = again.rpcOk("service", "world_info", "{}").getAsJsonObject("lastRestart");
            assertEquals("unclean", restart.get("previousStop").getAsString(), restart.toString());
            return restart.get("doubtfulBatches").getAsInt();
        }
    }

    /** A server folder holding bukkit.yml and config/paper-world-defaults.yml with these texts ("" = no file). */
    private static Map<String, Object> serverFolder(String bukkit, String worldDefaults) throws Exception {
        Path dir = Files.createTempDirectory("mcb-server");
        Files.createDirectories(dir.resolve("config"));
        if (!bukkit.isEmpty()) {
            Files.writeString(dir.resolve("bukkit.yml"), bukkit);
        }
        if (!worldDefaults.isEmpty()) {
            Files.writeString(dir.resolve("config").resolve("paper-world-defaults.yml"), worldDefaults);
        }
        return Map.of("server-folder", dir.toString());
    }

    /**
     * Paper fires WorldSaveEvent at each autosave while the chunks are written on their own timers
     * (0020-Incremental-chunk-and-player-saving.patch): with Paper's defaults an event covers the writes
     * handed over before the previous one; with a chunk interval longer than the autosave period, or the
     * world's autosave off, the events cover nothing and every batch stays doubtful after a crash.
     */
    @Test
    void saveEventsCountOnlyWhereTheAutosaveSettingsMakeThemChunkSaves() throws Exception {
        assertEquals(1, doubtfulAfterTwoSaveEvents(serverFolder("", ""), true), "defaults: a is covered, b is not");
        assertEquals(2, doubtfulAfterTwoSaveEvents(serverFolder("ticks-per:\n  autosave: 6000\n",
                "chunks:\n  auto-save-interval: 12000\n"), true), "chunks saved less often than the events");
        assertEquals(2, doubtfulAfterTwoSaveEvents(serverFolder("", "chunks:\n  max-auto-save-chunks-per-tick: 0\n"),
                true));
        assertEquals(2, doubtfulAfterTwoSaveEvents(serverFolder("", ""), false), "/save-off");
    }
}
