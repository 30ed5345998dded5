package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.common.v1.Vec3;
import dev.mcb.proto.world.v1.AutomationBlock;
import dev.mcb.proto.world.v1.AutomationSetBlocksParams;
import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchEntry;
import dev.mcb.proto.world.v1.BlocksGetParams;
import dev.mcb.proto.world.v1.BlocksGetResult;
import dev.mcb.proto.world.v1.RegionReadParams;
import dev.mcb.proto.world.v1.RegionReadResult;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The read paths and batches against a world with real chunk rules (HoldingWorld): chunks are loaded
 * only by holds, asynchronously; the tick never touches an unloaded chunk; never-generated chunks are
 * reported missing (complete, across hold windows), never generated; every hold is released.
 */
class WorldReadsTest {
    private final FakeWorld fake = new FakeWorld(); // chunks -8..8 exist
    private final HoldingWorld world = new HoldingWorld(fake);
    private final DirectScheduler sched = new DirectScheduler(); // ticks every 5 ms
    private final WorldHostCore core = new WorldHostCore(HostConfig.defaults("t", "0", 0, true), world, sched,
            DirectScheduler.NO_PLAYERS, (p, t) -> { });

    @AfterEach
    void close() {
        sched.close();
    }

    private static Vec3 v(int x, int y, int z) {
        return Vec3.newBuilder().setX(x).setY(y).setZ(z).build();
    }

    private void noHoldsLeftAndNoSyncLoads() throws InterruptedException {
        for (int i = 0; i < 100 && world.held.get() != 0; i++) {
            Thread.sleep(10); // batch holds end when the batch's future completes
        }
        assertEquals(0, world.held.get(), "every hold was released");
        assertEquals(List.of(), world.syncLoads, "the tick never touched an unloaded chunk");
    }

    @Test
    void aRegionOverMoreThanOneHoldWindowIsReadCorrectly() throws Exception {
        fake.set(-128, 0, -128, "minecraft:glass");
        fake.set(143, 0, 143, "minecraft:dirt");
        // 17 x 17 = 289 chunk columns (> 256: two windows), one layer
        RegionReadResult r = core.regionRead(RegionReadParams.newBuilder().setMin(v(-128, 0, -128)).setMax(v(143, 0, 143))
                .build());
        int n = 272 * 272;
        assertEquals(2 * n, r.getIndices().size());
        int first = r.getIndices().byteAt(0) & 0xFF;
        int last = r.getIndices().byteAt(2 * (n - 1)) & 0xFF;
        assertEquals("minecraft:glass", r.getPalette(first));
        assertEquals("minecraft:dirt", r.getPalette(last));
        assertTrue(world.holds.get() >= 4, "two windows, checked then read: " + world.holds.get());
        noHoldsLeftAndNoSyncLoads();
    }

    @Test
    void neverGeneratedChunksAreReportedCompleteAcrossWindowsAndNothingIsRead() throws Exception {
        // chunks -9..9 in x and z: 361 columns, of which the 72 on the ±9 border were never generated
        McbException e = assertThrows(McbException.class, () -> core.regionRead(RegionReadParams.newBuilder()
                .setMin(v(-144, 0, -144)).setMax(v(159, 0, 159)).build()));
        assertEquals(ErrorCode.NOT_FOUND, e.code);
        assertEquals(72, e.details.get("missingCount").getAsInt());
        assertEquals(64, e.details.getAsJsonArray("missingChunks").size());
        assertEquals("[-9,-9]", e.details.getAsJsonArray("missingChunks").get(0).toString());
        noHoldsLeftAndNoSyncLoads();
    }

    @Test
    void blocksGetAnswersInRequestOrderAcrossWindows() throws Exception {
        BlocksGetParams.Builder p = BlocksGetParams.newBuilder();
        int k = 0;
        // 289 distinct chunks, visited in an order unlike the chunk order
        for (int cz = 8; cz >= -8; cz--) {
            for (int cx = -8; cx <= 8; cx++) {
                int x = cx * 16 + 3;
                int z = cz * 16 + 5;
                fake.set(x, 70, z, (k++ % 2 == 0) ? "minecraft:glass" : "minecraft:dirt");
                p.addXyz(x).addXyz(70).addXyz(z);
            }
        }
        BlocksGetResult r = core.blocksGet(p.build());
        assertEquals(289, r.getStateCount());
        for (int i = 0; i < 289; i++) {
            assertEquals(i % 2 == 0 ? "minecraft:glass" : "minecraft:dirt", r.getPalette(r.getState(i)), "position " + i);
        }
        McbException e = assertThrows(McbException.class, () -> core.blocksGet(BlocksGetParams.newBuilder()
                .addXyz(0).addXyz(64).addXyz(0).addXyz(200).addXyz(64).addXyz(0).build()));
        assertEquals(ErrorCode.NOT_FOUND, e.code);
        assertEquals("[[12,0]]", e.details.getAsJsonArray("missingChunks").toString());
        noHoldsLeftAndNoSyncLoads();
    }

    @Test
    void batchesHoldTheirChunksAndMissingChunksAreRefusedBeforeTheQueue() throws Exception {
        BatchApplyParams p = BatchApplyParams.newBuilder().setBatchId("b1").setWorldEpoch(1).setOperationId("op")
                .addEntries(BatchEntry.newBuilder().setX(100).setY(70).setZ(-100).setExpected("air").setDesired("stone"))
                .addDependencies(BatchEntry.newBuilder().setX(-100).setY(63).setZ(100).setExpected("stone"))
                .build();
        assertEquals("applied", core.batchApply(p).getStatus());
        assertEquals("minecraft:stone", fake.get(100, 70, -100));
        McbException e = assertThrows(McbException.class, () -> core.batchApply(p.toBuilder().setBatchId("b2")
                .addEntries(BatchEntry.newBuilder().setX(500).setY(70).setZ(0).setExpected("air").setDesired("stone"))
                .build()));
        assertEquals(ErrorCode.NOT_FOUND, e.code);
        assertEquals(0, core.executor().queued());
        noHoldsLeftAndNoSyncLoads();
    }

    @Test
    void automationWritesGoThroughHoldsAndTheBudget() throws Exception {
        AutomationSetBlocksParams.Builder p = AutomationSetBlocksParams.newBuilder().setActor("player").setPlayerId("p");
        for (int i = 0; i < 300; i++) {
            p.addBlocks(AutomationBlock.newBuilder().setX(i % 200 - 100).setY(80).setZ(i / 200).setState("glass"));
        }
        long seq = core.events().lastSeq();
        assertEquals(300, core.automationSetBlocks(p.build()).getChanged());
        assertEquals(300, core.events().lastSeq() - seq, "one player event per changed block");
        assertEquals("minecraft:glass", fake.get(-100, 80, 1));
        noHoldsLeftAndNoSyncLoads();
    }
}
