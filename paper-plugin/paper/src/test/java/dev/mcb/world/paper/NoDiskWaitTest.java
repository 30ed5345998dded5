package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * Nothing the plugin does makes the server thread wait for the disk. On Paper, {@code isChunkGenerated} of a
 * chunk that is not loaded blocks the server thread until the chunk system has read it (CraftWorld.java
 * l.401-420); {@link HarnessWorld} counts each such call in {@code diskWaits()}, and its chunk loads complete
 * only on a later tick, on the server thread, as Paper's do.
 */
class NoDiskWaitTest {
    private static boolean bit(byte[] bits, int i) {
        return (bits[i >> 3] & (1 << (i & 7))) != 0;
    }

    @Test
    void chunksExistAsksTheChunkSystemNotTheDisk() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            h.world.ungenerate(5, 2);
            h.world.getChunkAt(0, 0); // loaded: answered on the tick at once
            JsonObject r = h.rpcOk("service", "chunks_exist", "{\"minCx\":0,\"minCz\":0,\"maxCx\":7,\"maxCz\":7}");
            assertEquals(63, r.get("count").getAsInt(), r.toString());
            byte[] bits = Base64.getDecoder().decode(r.get("bitmap").getAsString());
            assertTrue(bit(bits, 0));
            assertTrue(!bit(bits, 2 * 8 + 5), "the never generated chunk (5,2) does not exist");
            assertEquals(0, h.world.diskWaits(), "no isChunkGenerated of an unloaded chunk on the server thread");
            h.tick(); // the holds are released on the server thread
            assertEquals(0, h.world.ticketCount(h.plugin()), "chunks_exist keeps no chunk held");
        }
    }

    @Test
    void readsAndBatchesNeverWaitOnTheDisk() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            h.rpcOk("service", "batch_apply", h.batch("w", PluginHarness.slab(40, 65, 40, 32), "minecraft:air",
                    "minecraft:stone"));
            h.rpcOk("service", "region_read", "{\"min\":{\"x\":30,\"y\":60,\"z\":30},\"max\":{\"x\":80,\"y\":70,\"z\":80}}");
            h.rpcOk("service", "blocks_get", "{\"xyz\":[100,65,100,-100,65,-100]}");
            assertEquals(0, h.world.diskWaits());
        }
    }

    /**
     * After a crash the plugin re-reads its writes made after the last save: off the server thread's back
     * (chunks held asynchronously, at most 256 at a time) and in budgeted slices over several ticks, never
     * asking the disk on the server thread. All of them are lost here (the new MockBukkit world is empty).
     */
    @Test
    void theRestartCheckReadsInSlicesWithoutDiskWaits() throws Exception {
        PluginHarness first = PluginHarness.start();
        for (int y = 65; y < 73; y++) { // 8 x 512 positions over 4 chunks
            first.rpcOk("service", "batch_apply", first.batch("a" + y, PluginHarness.slab(0, y, 0, 512), "minecraft:air",
                    "minecraft:stone"));
        }
        try (PluginHarness h = first.crashServer()) {
            JsonObject restart = h.rpcOk("service", "world_info", "{}").getAsJsonObject("lastRestart");
            assertEquals("unclean", restart.get("previousStop").getAsString(), restart.toString());
            int ticks = 0;
            while (!h.core().state().restartInfo().getWritesChecked()) {
                h.tick();
                ticks++;
                assertTrue(ticks < 2000, "the restart check did not finish: " + h.core().state().restartInfo());
                Thread.sleep(1);
            }
            restart = h.rpcOk("service", "world_info", "{}").getAsJsonObject("lastRestart");
            assertEquals(4096, restart.get("lostWrites").getAsInt(), restart.toString());
            assertTrue(ticks > 1, "read in slices over several ticks, not in one task: " + ticks);
            assertEquals(0, h.world.diskWaits());
        }
    }
}
