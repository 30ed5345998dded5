package dev.mcb.world.testhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.world.core.ErrorCode;
import dev.mcb.world.core.McbException;
import org.junit.jupiter.api.Test;

class TestHostTest {
    @Test
    void registryCanonicalFormMatchesThePythonSide() throws Exception {
        JsonBlockRegistry r = Main.loadRegistry();
        assertTrue(r.size() > 1000);
        assertEquals(64, r.sha256.length());
        assertEquals("minecraft:stone", r.canonical("stone"));
        assertEquals("minecraft:grass_block[snowy=false]", r.canonical("minecraft:grass_block"));
        assertEquals("minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]",
                r.canonical("oak_stairs[facing=east]"));
        assertEquals(ErrorCode.UNSUPPORTED_BLOCK, assertThrows(McbException.class, () -> r.canonical("no_such_block")).code);
        assertEquals(ErrorCode.UNSUPPORTED_BLOCK, assertThrows(McbException.class,
                () -> r.canonical("oak_stairs[facing=up]")).code);
        assertEquals(ErrorCode.UNSUPPORTED_BLOCK, assertThrows(McbException.class, () -> r.canonical("stone[x=1]")).code);
    }

    @Test
    void flatWorldLayersAndChunks() throws Exception {
        MemoryWorld w = new MemoryWorld(Main.loadRegistry(), "u", "n", -32, -32, 31, 31);
        assertEquals("minecraft:bedrock", w.get(0, -64, 0));
        assertEquals("minecraft:stone", w.get(0, 59, 0));
        assertEquals("minecraft:dirt", w.get(0, 60, 0));
        assertEquals("minecraft:grass_block[snowy=false]", w.get(0, 63, 0));
        assertEquals("minecraft:air", w.get(0, 64, 0));
        assertTrue(w.chunkExists(-2, 1));
        assertFalse(w.chunkExists(2, 0));
        w.set(5, 64, 5, "minecraft:glass");
        assertEquals("minecraft:glass", w.get(5, 64, 5));
        assertEquals("minecraft:air", w.get(5, 65, 5));
        assertEquals("minecraft:grass_block[snowy=false]", w.get(5, 63, 5), "untouched blocks of a changed section keep the base");
    }
}
