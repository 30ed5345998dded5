package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reads and batches hold their chunks with plugin chunk tickets (loaded by getChunkAtAsync without
 * generation) while they run, release them afterwards, and report never-generated chunks as missing.
 */
class ChunkHoldTest {
    PluginHarness h;

    @BeforeEach
    void start() {
        h = PluginHarness.start();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    private boolean ticketed(int cx, int cz) {
        return h.world.getPluginChunkTickets(cx, cz).contains(h.plugin());
    }

    @Test
    void aRegionReadHoldsItsChunksOnlyWhileItReads() throws Exception {
        Future<JsonObject> read = h.rpcAsync("service", "region_read",
                "{\"min\":{\"x\":0,\"y\":60,\"z\":0},\"max\":{\"x\":31,\"y\":70,\"z\":15}}");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!(ticketed(0, 0) && ticketed(1, 0)) && System.nanoTime() < deadline) {
            h.world.tick(); // the loads complete on the server thread (Paper); no scheduler tick, so nothing is read
            Thread.sleep(5);
        }
        assertTrue(ticketed(0, 0) && ticketed(1, 0), "both chunks are held before the read runs");
        assertFalse(read.isDone(), "the positions are read by ticks");
        JsonObject r = h.ticking(read);
        assertTrue(r.get("ok").getAsBoolean(), r.toString());
        h.tick(); // the release runs on the server thread
        assertFalse(ticketed(0, 0) || ticketed(1, 0), "the tickets are removed when the read is done");
    }

    @Test
    void neverGeneratedChunksAreReportedAndNeitherGeneratedNorHeld() throws Exception {
        h.world.ungenerate(3, 0);
        JsonObject r = h.rpc("service", "region_read",
                "{\"min\":{\"x\":16,\"y\":60,\"z\":0},\"max\":{\"x\":63,\"y\":60,\"z\":0}}");
        assertFalse(r.get("ok").getAsBoolean(), r.toString());
        JsonObject err = r.getAsJsonObject("error");
        assertEquals("not_found", err.get("code").getAsString());
        assertEquals("[[3,0]]", err.getAsJsonObject("details").getAsJsonArray("missingChunks").toString());
        h.tick();
        for (int cx = 1; cx <= 3; cx++) {
            assertFalse(ticketed(cx, 0), "no ticket left on chunk " + cx);
        }
        assertFalse(h.world.isChunkLoaded(3, 0), "the missing chunk was not loaded (not generated)");
        // a batch touching it is refused before it is queued
        JsonObject b = h.rpc("service", "batch_apply", h.batch("b1", java.util.List.of(new int[] {50, 65, 0}),
                "minecraft:air", "minecraft:stone"));
        assertEquals("not_found", b.getAsJsonObject("error").get("code").getAsString(), b.toString());
        assertEquals(0, h.core().executor().queued());
    }
}
