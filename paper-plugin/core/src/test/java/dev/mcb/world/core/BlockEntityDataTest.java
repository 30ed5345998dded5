package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.BatchEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Full states with block-entity data: the same canonical text as mcb_common/blockentity.py; CAS on data. */
class BlockEntityDataTest {
    static final String CHEST = "minecraft:chest";
    // canonical forms produced by the Python planner (services/world-host/tests/test_furniture_nbt.py)
    static final String ITEMS = "{\"items\":[{\"count\":3,\"id\":\"minecraft:bread\",\"slot\":0},"
            + "{\"count\":1,\"id\":\"minecraft:diamond_sword\",\"slot\":13}]}";
    static final String SIGN_DATA = "{\"text\":{\"back\":{\"color\":\"red\",\"glowing\":true,"
            + "\"lines\":[\"back\",\"\",\"\",\"\"]},\"front\":{\"lines\":[\"Hello\",\"wörld\",\"\",\"\"]},\"waxed\":true}}";

    @Test
    void canonicalTextMatchesThePythonModel() {
        assertEquals(CHEST + ITEMS, BlockEntityData.canonicalFull(CHEST,
                "{\"items\":[{\"slot\":13,\"id\":\"diamond_sword\"},{\"id\":\"minecraft:bread\",\"count\":3}]}"));
        String sign = "minecraft:oak_sign[rotation=0,waterlogged=false]";
        assertEquals(sign + SIGN_DATA, BlockEntityData.canonicalFull(sign,
                "{\"text\":{\"front\":[\"Hello\",\"wörld\"],\"back\":{\"lines\":[\"back\"],\"color\":\"red\","
                        + "\"glowing\":true},\"waxed\":true}}"));
        assertEquals(sign + SIGN_DATA, BlockEntityData.canonicalFull(sign, SIGN_DATA)); // idempotent
        assertEquals(sign, BlockEntityData.canonicalFull(sign, "{\"text\":{\"front\":[\"\"]}}")); // all default
        assertEquals("minecraft:red_banner[rotation=0]{\"patterns\":[{\"color\":\"white\",\"pattern\":\"minecraft:stripe_top\"}]}",
                BlockEntityData.canonicalFull("minecraft:red_banner[rotation=0]",
                        "{\"patterns\":[{\"pattern\":\"stripe_top\",\"color\":\"white\"}]}"));
        assertEquals("minecraft:player_head[powered=false,rotation=0]{\"profile\":\"Notch\"}",
                BlockEntityData.canonicalFull("minecraft:player_head[powered=false,rotation=0]", "{\"profile\":\"Notch\"}"));
        assertEquals("\"a\\\"b\\\\c\\n\\u0001é\"", BlockEntityData.canonical(new com.google.gson.JsonPrimitive("a\"b\\c\n\u0001é")));
    }

    @Test
    void badOrRefusedDataIsUnsupportedBlock() {
        for (String[] c : List.of(
                new String[] {CHEST, "{\"items\":[{\"id\":\"bread\",\"count\":100}]}"},
                new String[] {CHEST, "{\"items\":[{\"id\":\"bread\",\"slot\":27}]}"},
                new String[] {CHEST, "{\"text\":{}}"},
                new String[] {"minecraft:stone", "{\"items\":[]}"},
                new String[] {"minecraft:oak_sign[rotation=0,waterlogged=false]", "{\"text\":{\"front\":[\"1\",\"2\",\"3\",\"4\",\"5\"]}}"},
                new String[] {"minecraft:player_head[powered=false,rotation=0]", "{\"profile\":\"not a name!\"}"},
                new String[] {"minecraft:spawner", ""})) {
            McbException e = assertThrows(McbException.class, () -> BlockEntityData.canonicalFull(c[0], c[1]), c[0] + c[1]);
            assertEquals(ErrorCode.UNSUPPORTED_BLOCK, e.code);
        }
    }

    @Test
    void compareAndSetIncludesTheData() throws Exception {
        FakeWorld world = new FakeWorld();
        BatchExecutor ex = new BatchExecutor(world, (c, op) -> {}, BatchExecutor.BUDGET_NANOS,
                BatchExecutor.MAX_BLOCKS_PER_TICK, System::nanoTime);
        BatchApplyResult r = run(ex, "f1", "minecraft:air", CHEST + ITEMS);
        assertEquals("applied", r.getStatus());
        assertEquals(CHEST + ITEMS, world.get(0, 64, 0));
        // a player changed the contents: a batch expecting our chest conflicts and names the current data
        String changed = CHEST + "{\"items\":[{\"count\":1,\"id\":\"minecraft:diamond_sword\",\"slot\":13}]}";
        world.set(0, 64, 0, changed);
        r = run(ex, "f2", CHEST + ITEMS, "minecraft:air");
        assertEquals("conflict", r.getStatus());
        assertTrue(r.getProblems(0).getCurrent().contains("diamond_sword"));
        assertEquals(changed, world.get(0, 64, 0));
        // data-only change: the same block with other contents is a write
        r = run(ex, "f3", changed, CHEST);
        assertEquals("applied", r.getStatus());
        assertEquals(CHEST, world.get(0, 64, 0));
    }

    private static BatchApplyResult run(BatchExecutor ex, String id, String expected, String desired) throws Exception {
        BatchApplyParams p = BatchApplyParams.newBuilder().setBatchId(id).setWorldEpoch(1).setOperationId("op")
                .addEntries(BatchEntry.newBuilder().setX(0).setY(64).setZ(0).setExpected(expected).setDesired(desired))
                .build();
        var f = ex.submit(p, 1, -64, 319);
        for (int i = 0; i < 20 && !f.isDone(); i++) {
            ex.tick();
        }
        return f.get(10, TimeUnit.SECONDS);
    }
}
