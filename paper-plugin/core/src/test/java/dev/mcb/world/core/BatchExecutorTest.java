package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.BatchEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class BatchExecutorTest {
    static final String AIR = "minecraft:air";
    static final String STONE = "minecraft:stone";
    static final String GLASS = "minecraft:glass";

    final FakeWorld world = new FakeWorld();
    final List<BatchExecutor.Change> ours = new ArrayList<>();
    final BatchExecutor ex = new BatchExecutor(world, (c, op) -> ours.addAll(c), BatchExecutor.BUDGET_NANOS,
            BatchExecutor.MAX_BLOCKS_PER_TICK, () -> world.simulated ? world.fakeNanos.get() : System.nanoTime());

    static BatchEntry e(int x, int y, int z, String expected, String desired) {
        return BatchEntry.newBuilder().setX(x).setY(y).setZ(z).setExpected(expected).setDesired(desired).build();
    }

    static BatchApplyParams batch(String id, BatchEntry... entries) {
        return BatchApplyParams.newBuilder().setBatchId(id).setWorldEpoch(1).setOperationId("op-" + id)
                .addAllEntries(List.of(entries)).build();
    }

    BatchApplyResult run(BatchApplyParams p) throws Exception {
        CompletableFuture<BatchApplyResult> f = ex.submit(p, 1, -64, 319);
        for (int i = 0; i < 20 && !f.isDone(); i++) {
            ex.tick();
        }
        return f.get(10, java.util.concurrent.TimeUnit.SECONDS);
    }

    static McbException failure(CompletableFuture<?> f) {
        ExecutionException ee = assertThrows(ExecutionException.class, () -> f.get(10, java.util.concurrent.TimeUnit.SECONDS));
        return (McbException) ee.getCause();
    }

    @Test
    void casWrittenAlreadyConflictAndAllOrNothing() throws Exception {
        BatchApplyResult r = run(batch("b1", e(0, 64, 0, AIR, STONE), e(1, 64, 0, AIR, AIR)));
        assertEquals("applied", r.getStatus());
        assertEquals(1, r.getWritten());
        assertEquals(1, r.getAlready());
        assertEquals(STONE, world.get(0, 64, 0));
        assertEquals(1, ours.size(), "only the written block is ours; 'already' is not");
        // one conflict anywhere: nothing of the batch is written
        r = run(batch("b2", e(20, 64, 20, AIR, GLASS), e(0, 64, 0, AIR, GLASS), e(-20, 64, -20, AIR, GLASS)));
        assertEquals("conflict", r.getStatus());
        assertEquals(0, r.getWritten());
        assertEquals(1, r.getConflicts());
        assertEquals(STONE, r.getProblems(0).getCurrent());
        assertEquals(AIR, world.get(20, 64, 20));
        assertEquals(AIR, world.get(-20, 64, -20));
        // a changed dependency refuses the batch
        BatchApplyParams dep = batch("b3", e(2, 64, 0, AIR, GLASS)).toBuilder()
                .addDependencies(e(0, 64, 0, AIR, "")).build();
        r = run(dep);
        assertEquals("dependency_changed", r.getProblems(0).getResult());
        assertEquals(AIR, world.get(2, 64, 0));
    }

    @Test
    void failureWhileWritingRollsBackAndReadBackIsChecked() throws Exception {
        world.failSetAfter = 2;
        CompletableFuture<BatchApplyResult> f = ex.submit(batch("w", e(0, 70, 0, AIR, STONE), e(1, 70, 0, AIR, STONE),
                e(2, 70, 0, AIR, STONE)), 1, -64, 319);
        ex.tick();
        assertEquals(ErrorCode.INTERNAL, failure(f).code);
        for (int x = 0; x < 3; x++) {
            assertEquals(AIR, world.get(x, 70, 0), "rolled back");
        }
        assertTrue(ours.isEmpty());
    }

    @Test
    void blockEntityAndMissingChunkRefuseTheWholeBatch() throws Exception {
        // a block entity whose data the model cannot carry (a loot chest) is never overwritten
        String lootChest = "minecraft:chest{\"unsupported\":\"LootTable\"}";
        world.blocks.put(FakeWorld.key(3, 64, 3), lootChest);
        CompletableFuture<BatchApplyResult> f = ex.submit(batch("be", e(2, 64, 2, AIR, STONE),
                e(3, 64, 3, lootChest, STONE)), 1, -64, 319);
        ex.tick();
        assertEquals(ErrorCode.UNSUPPORTED_BLOCK, failure(f).code);
        f = ex.submit(batch("mc", e(2, 64, 2, AIR, STONE), e(900, 64, 0, AIR, STONE)), 1, -64, 319);
        ex.tick();
        McbException m = failure(f);
        assertEquals(ErrorCode.NOT_FOUND, m.code);
        assertEquals("[[56,0]]", m.details.get("missingChunks").toString());
        assertEquals(AIR, world.get(2, 64, 2));
        // refused batches are not remembered: the same id may be tried again
        world.blocks.remove(FakeWorld.key(3, 64, 3));
        assertEquals("applied", run(batch("be", e(2, 64, 2, AIR, STONE), e(3, 64, 3, AIR, STONE))).getStatus());
    }

    @Test
    void validationBeforeAnythingIsQueued() {
        assertEquals(ErrorCode.UNSUPPORTED_BLOCK, assertThrows(McbException.class,
                () -> ex.submit(batch("v1", e(0, 64, 0, AIR, "no_such_block")), 1, -64, 319)).code);
        assertEquals(ErrorCode.OUT_OF_BOUNDS, assertThrows(McbException.class,
                () -> ex.submit(batch("v2", e(0, 400, 0, AIR, STONE)), 1, -64, 319)).code);
        assertEquals(ErrorCode.STALE_SNAPSHOT, assertThrows(McbException.class,
                () -> ex.submit(batch("v3", e(0, 64, 0, AIR, STONE)), 2, -64, 319)).code);
        assertEquals(ErrorCode.INVALID_REQUEST, assertThrows(McbException.class,
                () -> ex.submit(batch("v4", e(0, 64, 0, AIR, STONE), e(0, 64, 0, AIR, GLASS)), 1, -64, 319)).code);
        BatchEntry[] big = new BatchEntry[513];
        for (int i = 0; i < big.length; i++) {
            big[i] = e(i % 16, 70 + i / 256, (i / 16) % 16, AIR, STONE);
        }
        assertEquals(ErrorCode.BUDGET_EXCEEDED, assertThrows(McbException.class,
                () -> ex.submit(batch("v5", big), 1, -64, 319)).code);
        assertEquals(0, ex.queued());
    }

    @Test
    void idempotentBatchIds() throws Exception {
        BatchApplyResult first = run(batch("idem", e(5, 64, 5, AIR, GLASS)));
        assertFalse(first.getReplayed());
        world.blocks.clear(); // even if the world changed since, the stored answer is replayed, nothing rewritten
        BatchApplyResult again = ex.submit(batch("idem", e(5, 64, 5, AIR, GLASS)), 1, -64, 319).get();
        assertTrue(again.getReplayed());
        assertEquals(first.getWritten(), again.getWritten());
        assertEquals(AIR, world.get(5, 64, 5));
        assertEquals(ErrorCode.INVALID_REQUEST, assertThrows(McbException.class,
                () -> ex.submit(batch("idem", e(5, 64, 5, AIR, STONE)), 1, -64, 319)).code);
        // a conflict answer is replayed too; a replay works while paused
        run(batch("c", e(0, 10, 0, AIR, GLASS)));
        ex.pause("test");
        assertTrue(ex.submit(batch("c", e(0, 10, 0, AIR, GLASS)), 1, -64, 319).get().getReplayed());
        // the same id while the first is still queued: both get the one answer
        ex.resume();
        CompletableFuture<BatchApplyResult> a = ex.submit(batch("q", e(6, 64, 6, AIR, GLASS)), 1, -64, 319);
        CompletableFuture<BatchApplyResult> b = ex.submit(batch("q", e(6, 64, 6, AIR, GLASS)), 1, -64, 319);
        assertEquals(1, ex.queued());
        ex.tick();
        assertEquals(1, a.get().getWritten());
        assertTrue(b.get().getReplayed());
    }

    @Test
    void pauseIsCheckedBeforeEveryBatch() throws Exception {
        ex.pause("before submit");
        assertEquals(ErrorCode.PAUSED, assertThrows(McbException.class,
                () -> ex.submit(batch("p0", e(0, 64, 0, AIR, STONE)), 1, -64, 319)).code);
        ex.resume();
        CompletableFuture<BatchApplyResult> f1 = ex.submit(batch("p1", e(0, 64, 0, AIR, STONE)), 1, -64, 319);
        CompletableFuture<BatchApplyResult> f2 = ex.submit(batch("p2", e(1, 64, 0, AIR, STONE)), 1, -64, 319);
        ex.pause("/ai stop"); // set after queueing: still no batch starts
        for (int i = 0; i < 5 && ex.queued() > 0; i++) {
            ex.tick();
        }
        assertEquals(ErrorCode.PAUSED, failure(f1).code);
        assertEquals(ErrorCode.PAUSED, failure(f2).code);
        assertTrue(failure(f1).code.retryable);
        assertEquals(AIR, world.get(0, 64, 0));
        ex.resume();
        assertEquals("applied", run(batch("p1", e(0, 64, 0, AIR, STONE))).getStatus());
        // stopActive fails what is queued without running it
        CompletableFuture<BatchApplyResult> f3 = ex.submit(batch("p3", e(2, 64, 0, AIR, STONE)), 1, -64, 319);
        assertEquals(1, ex.stopActive("new bridge"));
        assertEquals(ErrorCode.PAUSED, failure(f3).code);
        assertTrue(ex.paused());
    }

    @Test
    void tickBudgetUnderASlowWorld() throws Exception {
        // a simulated clock: every world access costs 20 µs, so a 50-entry batch (50 reads, 50 writes,
        // 50 read-backs) costs exactly 3 ms of executor time
        world.simulated = true;
        world.nanosPerAccess = 20_000;
        List<CompletableFuture<BatchApplyResult>> fs = new ArrayList<>();
        for (int b = 0; b < 12; b++) {
            BatchEntry[] es = new BatchEntry[50];
            for (int i = 0; i < 50; i++) {
                es[i] = e(i % 16, 70 + b, i / 16, AIR, STONE);
            }
            fs.add(ex.submit(batch("slow" + b, es), 1, -64, 319));
        }
        int ticks = 0;
        while (ex.queued() > 0 && ticks < 100) {
            ex.tick();
            ticks++;
        }
        for (var f : fs) {
            assertEquals("applied", f.get().getStatus());
        }
        BatchExecutor.TickStats s = ex.stats();
        assertEquals(12, ticks, "two 3 ms batches never share a 5 ms tick");
        assertEquals(3_000_000L, s.maxOwnNanos(), "no tick went over its budget");
        assertTrue(s.recommendedBatchSize() < 512, "batch size hint shrinks under pressure: " + s.recommendedBatchSize());
        // 10 µs per access: 1.5 ms a batch, three fit (4.5 ms), the fourth waits
        world.nanosPerAccess = 10_000;
        for (int b = 0; b < 3; b++) {
            run(batch("learn" + b, e(b, 95, 0, AIR, STONE)));
        }
        for (int b = 0; b < 8; b++) {
            BatchEntry[] es = new BatchEntry[50];
            for (int i = 0; i < 50; i++) {
                es[i] = e(i % 16, 100 + b, i / 16, AIR, STONE);
            }
            ex.submit(batch("mid" + b, es), 1, -64, 319);
        }
        long before = ex.stats().batches();
        ex.tick();
        long ran = ex.stats().batches() - before;
        assertTrue(ran >= 1 && ran <= 3, "ran " + ran);
        assertTrue(ex.stats().lastOwnNanos() <= BatchExecutor.BUDGET_NANOS, "own time " + ex.stats().lastOwnNanos());
        while (ex.queued() > 0) {
            ex.tick();
            assertTrue(ex.stats().lastOwnNanos() <= BatchExecutor.BUDGET_NANOS);
        }
        // a fast world: many small batches fit in one tick, capped at 512 blocks
        world.nanosPerAccess = 100;
        for (int b = 0; b < 40; b++) {
            run(batch("warm" + b, e(b % 16, 90 + b / 32, (b / 16) % 2, AIR, STONE)));
        }
        for (int b = 0; b < 10; b++) {
            BatchEntry[] es = new BatchEntry[100];
            for (int i = 0; i < 100; i++) {
                es[i] = e(i % 16, 120 + b, i / 16, AIR, STONE);
            }
            ex.submit(batch("fast" + b, es), 1, -64, 319);
        }
        long blocksBefore = ex.stats().blocks();
        ex.tick();
        assertEquals(500, ex.stats().blocks() - blocksBefore, "5 batches of 100 fit under the 512-block cap, the 6th waits");
    }

    @Test
    void aBatchNotStartedWithinTheCallTimeLimitIsWithdrawnAsBusy() {
        dev.mcb.world.core.port.Scheduler stalled = new dev.mcb.world.core.port.Scheduler() {
            @Override
            public void everyTick(Runnable tick) {
                // a lagging server: the tick never comes
            }

            @Override
            public <T> CompletableFuture<T> call(java.util.concurrent.Callable<T> task) {
                return new CompletableFuture<>();
            }
        };
        WorldHostCore core = new WorldHostCore(new HostConfig("t", "0", "127.0.0.1", 0, false, 1024,
                java.time.Duration.ofMillis(200), 1), world, stalled, DirectScheduler.NO_PLAYERS, (p, t) -> { });
        McbException m = assertThrows(McbException.class, () -> core.batchApply(batch("late", e(0, 64, 0, AIR, STONE))));
        assertEquals(ErrorCode.BUSY, m.code);
        assertTrue(m.code.retryable);
        assertEquals(0, core.executor().queued(), "withdrawn: it will never run later");
        core.executor().tick();
        assertEquals(AIR, world.get(0, 64, 0));
        // the same id may be sent again
        assertEquals(ErrorCode.BUSY, assertThrows(McbException.class,
                () -> core.batchApply(batch("late", e(0, 64, 0, AIR, STONE)))).code);
        // reads time out the same way
        assertEquals(ErrorCode.BUSY, assertThrows(McbException.class,
                () -> core.blocksGet(dev.mcb.proto.world.v1.BlocksGetParams.newBuilder().addXyz(0).addXyz(64).addXyz(0).build())).code);
    }

    @Test
    void resumeTakesEffectOnlyOnceItIsStoredAndAPauseMeanwhileWins() {
        CompletableFuture<Void> stored = new CompletableFuture<>();
        List<Boolean> asked = new ArrayList<>();
        ex.restore(true, "after /ai stop", List.of(), storingResumeIn(stored, asked));
        CompletableFuture<Void> resumed = ex.resume();
        assertTrue(ex.paused(), "still paused until 'not paused' is on disk");
        stored.completeExceptionally(new java.io.IOException("disk gone"));
        assertTrue(resumed.isCompletedExceptionally());
        assertTrue(ex.paused(), "the state file failed: writes stay paused");
        // a resume that succeeds, but a pause arrives before it is stored: the pause wins
        CompletableFuture<Void> later = new CompletableFuture<>();
        ex.restore(true, "r", List.of(), storingResumeIn(later, new ArrayList<>()));
        ex.resume();
        ex.pause("/ai stop again");
        later.complete(null);
        assertTrue(ex.paused());
        assertEquals("/ai stop again", ex.pauseReason());
        assertEquals(List.of(false), asked);
    }

    /** Durability that stores batches and pauses at once, and "not paused" when {@code resumeStored} completes. */
    private static BatchExecutor.Durability storingResumeIn(CompletableFuture<Void> resumeStored, List<Boolean> asked) {
        return new BatchExecutor.Durability() {
            @Override
            public CompletableFuture<Void> batch(String batchId, String digest, String operationId,
                                                 BatchApplyResult result, boolean wroteBlocks) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> pause(boolean paused, String reason) {
                asked.add(paused);
                return paused ? CompletableFuture.completedFuture(null) : resumeStored;
            }
        };
    }
}
