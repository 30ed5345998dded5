package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import dev.mcb.proto.world.v1.BatchAnswer;
import dev.mcb.proto.world.v1.BatchApplyManyParams;
import dev.mcb.proto.world.v1.BatchApplyManyResult;
import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.BatchCancelParams;
import dev.mcb.proto.world.v1.BatchEntry;
import dev.mcb.proto.world.v1.PauseParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * batch_apply_many and batch_cancel in the core (docs/world-protocol.md): batches in order, each exactly as
 * batch_apply takes it and each in its own tick; stops at a conflict, an error, a pause or a cancel between
 * batches; replays; whole-request refusals. The "RPC thread" is a background thread; this thread is the server
 * thread and ticks ({@link QueuedTickScheduler}), so nothing runs between ticks.
 */
class BatchApplyManyTest {
    static final String AIR = BatchExecutorTest.AIR;
    static final String STONE = BatchExecutorTest.STONE;
    static final String GLASS = BatchExecutorTest.GLASS;
    static final int BASE_Y = 70;

    final FakeWorld world = new FakeWorld();
    final QueuedTickScheduler sched = new QueuedTickScheduler();
    final WorldHostCore core = new WorldHostCore(HostConfig.defaults("t", "0", 0, false), world, sched,
            DirectScheduler.NO_PLAYERS, (p, t) -> { });
    final ExecutorService rpc = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "test-rpc");
        t.setDaemon(true);
        return t;
    });
    /** layer y -> the ticks in which its blocks were written (the server thread records it) */
    final Map<Integer, TreeSet<Long>> ticksOfLayer = new ConcurrentHashMap<>();

    BatchApplyManyTest() {
        world.onSetAt = (x, y, z, s) -> ticksOfLayer.computeIfAbsent(y, k -> new TreeSet<>()).add(sched.ticks() + 1);
    }

    @AfterEach
    void stop() {
        rpc.shutdownNow();
    }

    /** Batch {@code i}: four blocks of layer y = 70 + i, so a written block names its batch. */
    static BatchApplyParams layer(String id, String op, int i, String expected, String desired) {
        BatchApplyParams.Builder b = BatchApplyParams.newBuilder().setBatchId(id).setWorldEpoch(1).setOperationId(op);
        for (int x = 0; x < 4; x++) {
            b.addEntries(BatchEntry.newBuilder().setX(x).setY(BASE_Y + i).setZ(0).setExpected(expected)
                    .setDesired(desired));
        }
        return b.build();
    }

    static List<BatchApplyParams> layers(String prefix, String op, int n) {
        List<BatchApplyParams> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(layer(prefix + i, op, i, AIR, STONE));
        }
        return out;
    }

    static BatchApplyManyParams many(List<BatchApplyParams> batches) {
        return BatchApplyManyParams.newBuilder().addAllBatches(batches).build();
    }

    Future<BatchApplyManyResult> send(BatchApplyManyParams p) {
        return rpc.submit(() -> core.batchApplyMany(p));
    }

    /** Tick (this thread is the server thread) until {@code f} is answered; at most 20 s. */
    <T> T ticking(Future<T> f) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!f.isDone()) {
            assertTrue(System.nanoTime() < deadline, "no answer within 20 s");
            sched.tick();
            Thread.sleep(1);
        }
        return f.get();
    }

    /** Tick until {@code done} holds (at most 20 s). */
    void tickUntil(java.util.function.BooleanSupplier done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not reached within 20 s");
            sched.tick();
            Thread.sleep(1);
        }
    }

    /** Wait, without ticking, until {@code done} holds (the RPC thread acts between ticks). */
    static void await(java.util.function.BooleanSupplier done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not reached within 20 s");
            Thread.sleep(1);
        }
    }

    BatchApplyManyResult call(BatchApplyManyParams p) throws Exception {
        return ticking(send(p));
    }

    boolean written(int i) {
        return world.get(0, BASE_Y + i, 0).equals(STONE);
    }

    /** The outcomes as "answered:applied", "answered:conflict", "error:<code>", "not_started:<reason>". */
    static List<String> outcomes(BatchApplyManyResult r) {
        List<String> out = new ArrayList<>();
        for (BatchAnswer a : r.getAnswersList()) {
            out.add(a.getOutcome() + ":" + switch (a.getOutcome()) {
                case "answered" -> a.getResult().getStatus() + (a.getResult().getReplayed() ? "+replayed" : "");
                case "error" -> a.getError().getCode();
                default -> a.getReason();
            });
        }
        return out;
    }

    static List<String> repeat(String s, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(s);
        }
        return out;
    }

    static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    // ---- order, one tick each ------------------------------------------------------------------------

    @Test
    void sixteenBatchesInOrderEachInItsOwnTick() throws Exception {
        assertTrue(core.worldInfo().getCapabilitiesList().contains("batch_apply_many"));
        List<BatchApplyParams> batches = layers("t", "op-t", 16);
        BatchApplyManyResult r = call(many(batches));
        assertEquals(repeat("answered:applied", 16), outcomes(r));
        for (int i = 0; i < 16; i++) {
            BatchAnswer a = r.getAnswers(i);
            assertEquals("t" + i, a.getBatchId(), "answers in the request's order");
            assertEquals(4, a.getResult().getWritten());
            assertEquals("t" + i, a.getResult().getBatchId());
            assertFalse(a.hasError());
            assertEquals("", a.getReason());
            assertTrue(written(i));
        }
        // every batch was written within one tick, each in a tick of its own, in the request's order
        long previous = 0;
        for (int i = 0; i < 16; i++) {
            TreeSet<Long> t = ticksOfLayer.get(BASE_Y + i);
            assertEquals(1, t.size(), "batch " + i + " written in one tick: " + t);
            assertTrue(t.first() > previous, "batch " + i + " in a later tick than batch " + (i - 1) + ": " + ticksOfLayer);
            previous = t.first();
        }
        BatchExecutor.TickStats s = core.executor().stats();
        assertEquals(16, s.batches());
        assertEquals(16, s.busyTicks(), "one batch a tick");

        // (that 16 such batches would share one tick without the rule: the next test, with a clock that makes
        // the budget's room certain)
    }

    @Test
    void aBatchQueuedWhileItsPredecessorRunsWaitsForTheNextTick() throws Exception {
        // the executor alone: batch b is submitted while a is being written (in the same tick); without the
        // sequence it would run in that tick too (the budget has room), with it only in the next one
        for (boolean sequenced : new boolean[] {true, false}) {
            // a clock standing still: the budget certainly has room for the second batch in the same tick
            BatchExecutor ex = new BatchExecutor(world, null, BatchExecutor.BUDGET_NANOS,
                    BatchExecutor.MAX_BLOCKS_PER_TICK, () -> 0L);
            BatchExecutor.Sequence seq = sequenced ? new BatchExecutor.Sequence() : null;
            String tag = sequenced ? "s" : "p";
            List<CompletableFuture<BatchApplyResult>> next = new ArrayList<>();
            world.onSetAt = (x, y, z, s) -> {
                if (next.isEmpty()) {
                    next.add(ex.submit(layer(tag + "b", "op", sequenced ? 31 : 33, AIR, STONE), 1, -64, 319, seq));
                }
            };
            CompletableFuture<BatchApplyResult> a = ex.submit(layer(tag + "a", "op", sequenced ? 30 : 32, AIR, STONE),
                    1, -64, 319, seq);
            ex.tick();
            world.onSetAt = null;
            assertEquals("applied", a.get().getStatus());
            assertEquals(1, next.size());
            assertEquals(!sequenced, next.get(0).isDone(), sequenced ? "waits for the next tick" : "shares the tick");
            ex.tick();
            assertEquals("applied", next.get(0).get().getStatus());
        }
    }

    // ---- stops: conflict, error ------------------------------------------------------------------------

    @Test
    void aConflictEndsTheRequest() throws Exception {
        world.blocks.put(FakeWorld.key(2, BASE_Y + 1, 0), GLASS); // batch 1 expects air there
        BatchApplyManyResult r = call(many(layers("c", "op-c", 4)));
        assertEquals(List.of("answered:applied", "answered:conflict", "not_started:after_conflict",
                "not_started:after_conflict"), outcomes(r));
        BatchApplyResult conflict = r.getAnswers(1).getResult();
        assertEquals(1, conflict.getConflicts());
        assertEquals(GLASS, conflict.getProblems(0).getCurrent());
        assertEquals(0, conflict.getWritten());
        assertTrue(written(0));
        for (int i = 1; i < 4; i++) {
            assertEquals(AIR, world.get(0, BASE_Y + i, 0), "batch " + i + " wrote nothing");
        }
        assertNull(ticksOfLayer.get(BASE_Y + 2));
        // the batches not started were not recorded: their ids may be sent again, and run then
        world.blocks.remove(FakeWorld.key(2, BASE_Y + 1, 0));
        BatchApplyManyResult again = call(many(layers("c", "op-c", 4).subList(2, 4)));
        assertEquals(List.of("answered:applied", "answered:applied"), outcomes(again));
        // the conflict is recorded like batch_apply's: the same id replays it
        assertEquals(List.of("answered:conflict+replayed"), outcomes(call(many(List.of(layer("c1", "op-c", 1, AIR, STONE))))));
    }

    @Test
    void anErrorEndsTheRequestWithWhatBatchApplyWouldSay() throws Exception {
        BatchApplyParams stale = layer("e1", "op-e", 1, AIR, STONE).toBuilder().setWorldEpoch(2).build();
        BatchApplyManyResult r = call(many(List.of(layer("e0", "op-e", 0, AIR, STONE), stale,
                layer("e2", "op-e", 2, AIR, STONE))));
        assertEquals(List.of("answered:applied", "error:stale_snapshot", "not_started:after_error"), outcomes(r));
        dev.mcb.proto.common.v1.Error err = r.getAnswers(1).getError();
        McbException alone = assertThrows(McbException.class, () -> core.batchApply(stale));
        assertEquals(alone.code.wire, err.getCode());
        assertEquals(alone.getMessage(), err.getMessage());
        assertFalse(err.getRetryable());
        assertEquals(1, JsonParser.parseString(err.getDetailsJson()).getAsJsonObject().get("worldEpoch").getAsInt());
        assertFalse(r.getAnswers(1).hasResult());
        assertFalse(written(2));

        // refusals found on the server thread, and for the first batch: the same codes and details
        world.blocks.put(FakeWorld.key(1, BASE_Y + 5, 0), "minecraft:chest{\"unsupported\":\"LootTable\"}");
        BatchApplyParams loot = layer("e5", "op-e", 5, AIR, STONE).toBuilder()
                .setEntries(1, BatchEntry.newBuilder().setX(1).setY(BASE_Y + 5).setZ(0)
                        .setExpected("minecraft:chest{\"unsupported\":\"LootTable\"}").setDesired(STONE)).build();
        r = call(many(List.of(loot, layer("e6", "op-e", 6, AIR, STONE))));
        assertEquals(List.of("error:unsupported_block", "not_started:after_error"), outcomes(r));
        assertEquals(AIR, world.get(0, BASE_Y + 5, 0), "nothing of the refused batch was written");
        BatchApplyParams far = layer("e7", "op-e", 7, AIR, STONE).toBuilder()
                .addEntries(BatchEntry.newBuilder().setX(900).setY(BASE_Y + 7).setZ(0).setExpected(AIR).setDesired(STONE))
                .build();
        r = call(many(List.of(layer("e8", "op-e", 8, AIR, STONE), far)));
        assertEquals(List.of("answered:applied", "error:not_found"), outcomes(r));
        assertEquals("[[56,0]]", JsonParser.parseString(r.getAnswers(1).getError().getDetailsJson()).getAsJsonObject()
                .get("missingChunks").toString());
        // an id already used for other content: invalid_request for that batch, as batch_apply says it
        r = call(many(List.of(layer("e0", "op-e", 9, AIR, STONE), layer("e10", "op-e", 10, AIR, STONE))));
        assertEquals(List.of("error:invalid_request", "not_started:after_error"), outcomes(r));
        assertFalse(written(9));
        assertFalse(written(10));
    }

    // ---- whole-request refusals --------------------------------------------------------------------------

    @Test
    void zeroTooManyOrATwiceUsedIdRefuseTheWholeRequest() throws Exception {
        McbException none = assertThrows(McbException.class, () -> core.batchApplyMany(many(List.of())));
        assertEquals(ErrorCode.INVALID_REQUEST, none.code);
        McbException tooMany = assertThrows(McbException.class, () -> core.batchApplyMany(many(layers("m", "op-m", 17))));
        assertEquals(ErrorCode.BUDGET_EXCEEDED, tooMany.code);
        assertEquals(16, tooMany.details.get("max").getAsInt());
        List<BatchApplyParams> twice = new ArrayList<>(layers("d", "op-d", 3));
        twice.add(layer("d0", "op-d", 5, AIR, GLASS));
        McbException dup = assertThrows(McbException.class, () -> core.batchApplyMany(many(twice)));
        assertEquals(ErrorCode.INVALID_REQUEST, dup.code);
        assertEquals("d0", dup.details.get("batchId").getAsString());
        // nothing was read, written or recorded: no tick was needed, and every id is still free
        assertEquals(0, sched.ticks());
        assertTrue(ticksOfLayer.isEmpty());
        assertEquals(0, core.executor().queued());
        BatchApplyManyResult r = call(many(layers("d", "op-d", 3)));
        assertEquals(repeat("answered:applied", 3), outcomes(r));
        BatchApplyManyResult m = call(many(layers("m", "op-m", 16).subList(3, 16)));
        assertEquals(repeat("answered:applied", 13), outcomes(m));
    }

    // ---- pause between batches -----------------------------------------------------------------------------

    @Test
    void aPauseWhileBatchKIsWrittenLetsOnlyThatBatchFinish() throws Exception {
        // pause is called (and answers) on another thread while batch 2 is being written on the server thread
        world.onSetAt = (x, y, z, s) -> {
            if (y == BASE_Y + 2 && x == 0) {
                Thread t = new Thread(() -> core.pause(PauseParams.newBuilder().setReason("/ai stop").build()));
                t.start();
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        List<BatchApplyParams> batches = layers("p", "op-p", 5);
        BatchApplyManyResult r = call(many(batches));
        assertEquals(List.of("answered:applied", "answered:applied", "answered:applied", "not_started:paused",
                "not_started:paused"), outcomes(r));
        assertTrue(written(2), "the batch being written when the pause answered finished whole");
        for (int x = 0; x < 4; x++) {
            assertEquals(STONE, world.get(x, BASE_Y + 2, 0));
        }
        assertFalse(written(3));
        assertFalse(written(4));
        // after resume the same request again: the applied ones replay, the others run now
        world.onSetAt = null;
        core.resume(PauseParams.getDefaultInstance());
        assertEquals(List.of("answered:applied+replayed", "answered:applied+replayed", "answered:applied+replayed",
                "answered:applied", "answered:applied"), outcomes(call(many(batches))));
    }

    @Test
    void aPauseAfterTheNextBatchWasQueuedStopsItBeforeItStarts() throws Exception {
        Future<BatchApplyManyResult> f = send(many(layers("q", "op-q", 3)));
        tickUntil(() -> written(0));
        await(() -> core.executor().queued() == 1); // batch 1 waits for its tick
        core.pause(PauseParams.newBuilder().setReason("stop").build());
        BatchApplyManyResult r = ticking(f);
        assertEquals(List.of("answered:applied", "not_started:paused", "not_started:paused"), outcomes(r));
        assertFalse(written(1));
        // /ai stop (stopActive) fails a queued batch of a request the same way
        core.resume(PauseParams.getDefaultInstance());
        f = send(many(List.of(layer("s0", "op-s", 5, AIR, STONE), layer("s1", "op-s", 6, AIR, STONE))));
        tickUntil(() -> written(5));
        await(() -> core.executor().queued() == 1);
        assertEquals(1, core.executor().stopActive("/ai stop"));
        assertEquals(List.of("answered:applied", "not_started:paused"), outcomes(f.get(10, TimeUnit.SECONDS)));
        assertFalse(written(6));
    }

    @Test
    void aPausedHostRefusesTheFirstBatchAsBatchApplyWould() throws Exception {
        BatchApplyParams first = layer("h0", "op-h", 0, AIR, STONE);
        call(many(List.of(first)));
        core.pause(PauseParams.newBuilder().setReason("maintenance").build());
        BatchApplyManyResult r = call(many(List.of(layer("h1", "op-h", 1, AIR, STONE), layer("h2", "op-h", 2, AIR, STONE))));
        assertEquals(List.of("error:paused", "not_started:after_error"), outcomes(r));
        assertTrue(r.getAnswers(0).getError().getRetryable());
        // a replay of an answered batch works while paused (as batch_apply); the next batch then is not started
        r = call(many(List.of(first, layer("h1", "op-h", 1, AIR, STONE))));
        assertEquals(List.of("answered:applied+replayed", "not_started:paused"), outcomes(r));
        assertFalse(written(1));
    }

    // ---- batch_cancel ----------------------------------------------------------------------------------------

    static BatchCancelParams cancel(String op) {
        return BatchCancelParams.newBuilder().setOperationId(op).build();
    }

    @Test
    void aCancelWhileBatchKIsWrittenLetsOnlyThatBatchFinish() throws Exception {
        world.onSetAt = (x, y, z, s) -> {
            if (y == BASE_Y + 1 && x == 0) {
                Thread t = new Thread(() -> core.batchCancel(cancel("op-k")));
                t.start();
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        BatchApplyManyResult r = call(many(layers("k", "op-k", 4)));
        assertEquals(List.of("answered:applied", "answered:applied", "not_started:cancelled", "not_started:cancelled"),
                outcomes(r));
        assertTrue(written(1));
        assertFalse(written(2));
        assertFalse(written(3));
        world.onSetAt = null;
        // no later request starts a batch of that operation, not even its first
        r = call(many(List.of(layer("k2", "op-k", 2, AIR, STONE), layer("x0", "op-other", 12, AIR, STONE))));
        assertEquals(List.of("not_started:cancelled", "not_started:cancelled"), outcomes(r));
        assertFalse(written(2));
        // another operation is not affected, a plain batch_apply neither, and writes are not paused
        assertEquals(List.of("answered:applied"), outcomes(call(many(List.of(layer("x0", "op-other", 12, AIR, STONE))))));
        assertFalse(core.executor().paused());
        Future<BatchApplyResult> plain = rpc.submit(() -> core.batchApply(layer("k3", "op-k", 3, AIR, STONE)));
        assertEquals("applied", ticking(plain).getStatus());
    }

    @Test
    void aCancelAfterTheNextBatchWasQueuedStopsItBeforeItStarts() throws Exception {
        Future<BatchApplyManyResult> f = send(many(layers("w", "op-w", 3)));
        tickUntil(() -> written(0));
        await(() -> core.executor().queued() == 1); // batch 1 passed the caller's check and waits for its tick
        assertTrue(core.batchCancel(cancel("op-w")).getCancelled());
        BatchApplyManyResult r = ticking(f);
        assertEquals(List.of("answered:applied", "not_started:cancelled", "not_started:cancelled"), outcomes(r));
        assertFalse(written(1));
        assertEquals(0, core.executor().queued());
        // the batch stopped before it began was not recorded: sent alone (batch_apply ignores cancels) it runs now
        BatchApplyResult alone = ticking(rpc.submit(() -> core.batchApply(layer("w1", "op-w", 1, AIR, STONE))));
        assertEquals("applied", alone.getStatus());
        assertFalse(alone.getReplayed());
    }

    @Test
    void batchCancelNamesAreKeptForTheLast4096Operations() {
        assertEquals(ErrorCode.INVALID_REQUEST, assertThrows(McbException.class, () -> core.batchCancel(cancel(""))).code);
        var res = core.batchCancel(cancel("op-0"));
        assertEquals("op-0", res.getOperationId());
        assertTrue(res.getCancelled());
        String longName = "o".repeat(5000);
        core.batchCancel(cancel(longName));
        assertTrue(core.executor().cancelled(longName));
        assertFalse(core.executor().cancelled("o".repeat(4999)));
        for (int i = 1; i < BatchExecutor.MAX_CANCELLED; i++) {
            core.batchCancel(cancel("op-" + i));
        }
        assertFalse(core.executor().cancelled("op-0"), "the oldest of 4,097 names is forgotten");
        assertTrue(core.executor().cancelled(longName));
        assertTrue(core.executor().cancelled("op-" + (BatchExecutor.MAX_CANCELLED - 1)));
        assertFalse(core.executor().cancelled(""));
    }

    // ---- replays and durability ---------------------------------------------------------------------------

    @Test
    void aRepeatedRequestIsAnsweredFromTheRecords() throws Exception {
        List<BatchApplyParams> batches = layers("r", "op-r", 6);
        BatchApplyManyResult first = call(many(batches));
        long blocks = core.executor().stats().blocks();
        world.blocks.clear(); // even if the world changed since, the stored answers are replayed, nothing rewritten
        BatchApplyManyResult again = call(many(batches));
        assertEquals(repeat("answered:applied+replayed", 6), outcomes(again));
        for (int i = 0; i < 6; i++) {
            assertEquals(first.getAnswers(i).getResult().toBuilder().setReplayed(true).build(),
                    again.getAnswers(i).getResult());
        }
        assertEquals(blocks, core.executor().stats().blocks());
        assertFalse(written(0));
        // a batch answered alone replays inside a request too, and the new ones after it run
        BatchApplyParams alone = layer("r-alone", "op-r", 8, AIR, STONE);
        ticking(rpc.submit(() -> core.batchApply(alone)));
        assertEquals(List.of("answered:applied+replayed", "answered:applied"),
                outcomes(call(many(List.of(alone, layer("r-next", "op-r", 9, AIR, STONE))))));
    }

    @Test
    void eachBatchIsDurableBeforeTheNextStartsAndBeforeTheAnswer() throws Exception {
        List<String> stored = new ArrayList<>();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        core.executor().restore(false, "", List.of(), new BatchExecutor.Durability() {
            @Override
            public synchronized CompletableFuture<Void> batch(String batchId, String digest, String operationId,
                                                              BatchApplyResult result, boolean wroteBlocks) {
                stored.add(batchId);
                CompletableFuture<Void> f = new CompletableFuture<>();
                pending.add(f);
                return f;
            }

            @Override
            public CompletableFuture<Void> pause(boolean paused, String reason) {
                return CompletableFuture.completedFuture(null);
            }
        });
        Future<BatchApplyManyResult> f = send(many(layers("f", "op-f", 3)));
        for (int i = 0; i < 3; i++) {
            int n = i + 1;
            tickUntil(() -> pending.size() == n);
            for (int k = 0; k < 5; k++) { // its record is not on disk yet: no other batch starts, no answer
                sched.tick();
                Thread.sleep(2);
            }
            assertEquals(n, pending.size());
            assertFalse(written(i + 1));
            assertFalse(f.isDone());
            pending.get(i).complete(null);
        }
        assertEquals(repeat("answered:applied", 3), outcomes(f.get(10, TimeUnit.SECONDS)));
        assertEquals(List.of("f0", "f1", "f2"), stored);
    }

    @TempDir
    Path dir;

    @Test
    void withADataFolderEveryAnsweredBatchIsARecordThatSurvivesARestart() throws Exception {
        HostState state = HostState.open(dir);
        state.verifyRestart(world);
        QueuedTickScheduler s1 = new QueuedTickScheduler();
        WorldHostCore c1 = new WorldHostCore(HostConfig.defaults("t", "0", 0, false), world, s1,
                DirectScheduler.NO_PLAYERS, (p, t) -> { }, state);
        world.blocks.put(FakeWorld.key(3, BASE_Y + 2, 0), GLASS);
        List<BatchApplyParams> batches = layers("d", "op-d", 4);
        Future<BatchApplyManyResult> f = rpc.submit(() -> c1.batchApplyMany(many(batches)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!f.isDone() && System.nanoTime() < deadline) {
            s1.tick();
            Thread.sleep(1);
        }
        assertEquals(List.of("answered:applied", "answered:applied", "answered:conflict", "not_started:after_conflict"),
                outcomes(f.get()));
        state.close(true, c1.revisions().high());

        HostState again = HostState.open(dir);
        again.verifyRestart(world);
        Map<String, String> recorded = new TreeMap<>();
        again.batches().forEach(b -> recorded.put(b.batchId(), b.result().getStatus()));
        assertEquals(Map.of("d0", "applied", "d1", "applied", "d2", "conflict"), recorded, "the batch not started has none");
        QueuedTickScheduler s2 = new QueuedTickScheduler();
        WorldHostCore c2 = new WorldHostCore(HostConfig.defaults("t", "0", 0, false), world, s2,
                DirectScheduler.NO_PLAYERS, (p, t) -> { }, again);
        world.blocks.remove(FakeWorld.key(3, BASE_Y + 2, 0));
        f = rpc.submit(() -> c2.batchApplyMany(many(batches)));
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!f.isDone() && System.nanoTime() < deadline) {
            s2.tick();
            Thread.sleep(1);
        }
        assertEquals(List.of("answered:applied+replayed", "answered:applied+replayed", "answered:conflict+replayed",
                "not_started:after_conflict"), outcomes(f.get()));
        again.close(true, c2.revisions().high());
    }
}
