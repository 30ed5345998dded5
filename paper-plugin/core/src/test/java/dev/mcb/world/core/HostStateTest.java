package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.common.v1.Vec3;
import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.RestartInfo;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Restarts of the state: clean, killed, damaged; doubtful batches re-run compare-and-set. */
class HostStateTest {
    static final String AIR = BatchExecutorTest.AIR;
    static final String STONE = BatchExecutorTest.STONE;
    static final String GLASS = BatchExecutorTest.GLASS;

    @TempDir
    Path dir;

    /** One "process": the state, an event log and an executor over a world, wired as WorldHostCore does. */
    final class Proc {
        final HostState state;
        final EventLog events;
        final BatchExecutor ex;
        final FakeWorld world;

        Proc(FakeWorld world) throws IOException {
            this.world = world;
            state = HostState.open(dir, 1000, 1000, HostState.DEFAULT_COMPACT_BYTES);
            state.verifyRestart(world);
            events = new EventLog(state.logId(), 1000, state.seqBase(), state.tail());
            events.sink(state::event);
            events.restartNote(state::restartNote);
            ex = new BatchExecutor(world, (changes, op) -> {
                for (BatchExecutor.Change c : changes) {
                    events.record(c.x(), c.y(), c.z(), c.before(), c.after(), Source.OURS, "", op);
                }
            });
            ex.restore(state.paused(), state.pauseReason(), state.batches(), state);
        }

        BatchApplyResult apply(BatchApplyParams p) throws Exception {
            CompletableFuture<BatchApplyResult> f = ex.submit(p, 1, -64, 319);
            for (int i = 0; i < 20 && !f.isDone(); i++) {
                ex.tick();
                Thread.sleep(1);
            }
            return f.get(10, TimeUnit.SECONDS);
        }

        /** The game saved the world: this is what a crash rolls back to. */
        Map<Long, String> save() throws Exception {
            long mark = state.saveMark();
            Map<Long, String> saved = Map.copyOf(world.blocks);
            state.saved(mark);
            state.sync().get(10, TimeUnit.SECONDS);
            return saved;
        }
    }

    static FakeWorld worldFrom(Map<Long, String> saved) {
        FakeWorld w = new FakeWorld();
        w.blocks.putAll(saved);
        return w;
    }

    static BatchApplyParams batch(String id, int x, String expected, String desired) {
        return BatchExecutorTest.batch(id, BatchExecutorTest.e(x, 64, 0, expected, desired),
                BatchExecutorTest.e(x, 65, 0, expected, desired));
    }

    @Test
    void playerNamesAndCausesSurviveACleanRestart() throws Exception {
        Proc a = new Proc(new FakeWorld());
        String cursor = a.events.cursorNow();
        a.events.record(5, 64, 5, AIR, GLASS, Source.PLAYER, "uuid-a", "", "Alice", "");
        a.events.record(6, 64, 6, GLASS, AIR, Source.ENVIRONMENT, "", "", "", Cause.EXPLOSION);
        a.events.record(7, 64, 7, GLASS, AIR, Source.ENVIRONMENT, "", "", "", ""); // no cause given: other
        a.save();
        a.state.close(true, 1);
        Proc b = new Proc(new FakeWorld());
        List<EventLog.Event> got = b.events.since(cursor, 100, null).events();
        assertEquals(List.of("Alice", "", ""), got.stream().map(EventLog.Event::playerName).toList());
        assertEquals(List.of("", "explosion", "other"), got.stream().map(EventLog.Event::cause).toList());
    }

    @Test
    void aCleanRestartKeepsPauseRecordsCursorsAndRevisions() throws Exception {
        Proc a = new Proc(new FakeWorld());
        assertEquals("none", a.state.restartInfo().getPreviousStop());
        BatchApplyResult r = a.apply(batch("b1", 0, AIR, STONE));
        a.events.record(5, 64, 5, AIR, GLASS, Source.PLAYER, "alice", "");
        String cursor = a.events.cursorNow();
        a.events.record(6, 64, 6, AIR, GLASS, Source.PLAYER, "bob", "");
        a.ex.pause("owner asked").get(10, TimeUnit.SECONDS);
        Map<Long, String> saved = a.save();
        a.state.close(true, 77);

        Proc b = new Proc(worldFrom(saved));
        RestartInfo info = b.state.restartInfo();
        assertEquals("clean", info.getPreviousStop());
        assertTrue(info.getEventsContinue());
        assertEquals(a.state.logId(), b.state.logId(), "cursors of the previous process stay valid");
        assertEquals(77, b.state.revisionBase());
        assertTrue(b.ex.paused());
        assertEquals("owner asked", b.ex.pauseReason());
        EventLog.Page page = b.events.since(cursor, 100, null);
        assertFalse(page.resyncRequired());
        assertEquals(List.of("bob"), page.events().stream().map(EventLog.Event::playerId).toList());
        EventLog.Event next = b.events.record(7, 64, 7, AIR, GLASS, Source.PLAYER, "carol", "");
        assertEquals(5, next.seq(), "numbering continues (b1 wrote 2, alice, bob)");
        // the replay answers from the record while paused, without writing
        b.world.blocks.clear();
        BatchApplyResult replay = b.apply(batch("b1", 0, AIR, STONE));
        assertTrue(replay.getReplayed());
        assertEquals(r.toBuilder().setReplayed(true).build(), replay);
        assertEquals(AIR, b.world.get(0, 64, 0));
        b.state.close(true, 0);
    }

    @Test
    void aKillMakesUnsavedBatchesDoubtfulAndTheirReplayLosesAndClobbersNothing() throws Exception {
        FakeWorld w = new FakeWorld();
        w.blocks.put(FakeWorld.key(2, 65, 0), STONE); // "already" for b2
        Proc a = new Proc(w);
        a.apply(batch("b1", 0, AIR, STONE));
        Map<Long, String> saved = a.save(); // b1 is on disk
        BatchApplyResult b2 = a.apply(batch("b2", 2, AIR, STONE)); // written 1, already 1
        BatchApplyResult b3 = a.apply(batch("b3", 3, AIR, STONE));
        BatchApplyResult b4 = a.apply(batch("b4", 4, AIR, STONE));
        BatchApplyResult conflict = a.apply(batch("b5", 0, AIR, GLASS));
        assertEquals("conflict", conflict.getStatus());
        String cursor = a.events.cursorNow();
        a.state.crash(); // kill -9: the world rolls back to the save

        FakeWorld rolled = worldFrom(saved);
        rolled.blocks.put(FakeWorld.key(4, 64, 0), STONE); // part of b4 survived (its chunk was saved on unload)
        rolled.blocks.put(FakeWorld.key(4, 65, 0), STONE);
        Proc b = new Proc(rolled);
        RestartInfo info = b.state.restartInfo();
        assertEquals("unclean", info.getPreviousStop());
        assertFalse(info.getEventsContinue());
        assertNotEquals(a.state.logId(), b.state.logId());
        assertEquals(3, info.getDoubtfulBatches(), "b2, b3, b4: written after the last save");
        assertEquals(5, info.getUnsavedWrites());
        assertEquals(3, info.getLostWrites(), "b2's one write and b3's two");
        assertTrue(info.getWritesChecked());
        assertEquals(List.of("op-b2", "op-b3", "op-b4"), info.getAffectedOperationIdsList().stream().sorted().toList());
        EventLog.Page page = b.events.since(cursor, 100, null);
        assertTrue(page.resyncRequired());
        assertTrue(page.reason().contains("3 of 5 block writes"), page.reason());

        // b1 was saved: the stored answer. b5 wrote nothing: the stored conflict.
        assertTrue(b.apply(batch("b1", 0, AIR, STONE)).getReplayed());
        assertEquals("conflict", b.apply(batch("b5", 0, AIR, GLASS)).getStatus());
        // b2: the lost block is written again; the answer is the original one
        BatchApplyResult r2 = b.apply(batch("b2", 2, AIR, STONE));
        assertEquals(b2.toBuilder().setReplayed(true).setRewrittenAfterRestart(1).build(), r2);
        assertEquals(STONE, rolled.get(2, 64, 0));
        // b4 survived whole: same answer, nothing rewritten
        BatchApplyResult r4 = b.apply(batch("b4", 4, AIR, STONE));
        assertEquals(b4.toBuilder().setReplayed(true).build(), r4);
        // b3: a player built on one of its lost blocks after the restart -> conflict, the glass stays
        rolled.blocks.put(FakeWorld.key(3, 65, 0), GLASS);
        BatchApplyResult r3 = b.apply(batch("b3", 3, AIR, STONE));
        assertEquals("conflict", r3.getStatus());
        assertEquals(GLASS, rolled.get(3, 65, 0));
        assertEquals(AIR, rolled.get(3, 64, 0), "all-or-nothing: nothing of b3 written");
        assertEquals(2, b3.getWritten());
        // settled records are durable: after another kill they are no longer doubtful
        b.save();
        b.state.crash();
        Proc c = new Proc(worldFrom(Map.copyOf(rolled.blocks)));
        assertEquals(0, c.state.restartInfo().getDoubtfulBatches());
        assertEquals(r2.toBuilder().setRewrittenAfterRestart(0).build(), c.apply(batch("b2", 2, AIR, STONE)),
                "a later replay wrote nothing");
        c.state.close(true, 0);
    }

    @Test
    void doubtfulStaysDoubtfulUntilAReplaySettlesItEvenAcrossLaterSaves() throws Exception {
        Proc a = new Proc(new FakeWorld());
        Map<Long, String> saved = a.save();
        a.apply(batch("b1", 0, AIR, STONE));
        a.state.crash();
        Proc b = new Proc(worldFrom(saved));
        assertEquals(1, b.state.restartInfo().getDoubtfulBatches());
        Map<Long, String> saved2 = b.save(); // a save in the next process does not bring b1's blocks back
        b.state.close(true, 0);
        Proc c = new Proc(worldFrom(saved2));
        assertEquals("clean", c.state.restartInfo().getPreviousStop());
        assertEquals(1, c.state.restartInfo().getDoubtfulBatches());
        BatchApplyResult r = c.apply(batch("b1", 0, AIR, STONE));
        assertEquals(2, r.getRewrittenAfterRestart());
        assertEquals(STONE, c.world.get(0, 65, 0));
        c.state.close(true, 0);
    }

    @Test
    void aDamagedStateFileIsSetAsideAndTheHostStartsPaused() throws Exception {
        Proc a = new Proc(new FakeWorld());
        for (int i = 0; i < 5; i++) {
            a.apply(batch("b" + i, i, AIR, STONE));
        }
        a.state.close(true, 0);
        Path f = dir.resolve(HostState.LOG);
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.seek(40);
            r.write(r.read() ^ 0x10); // inside the first records, not the tail
        }
        Proc b = new Proc(new FakeWorld());
        RestartInfo info = b.state.restartInfo();
        assertTrue(info.getStateProblem().contains("damaged"), info.getStateProblem());
        assertTrue(b.ex.paused());
        assertEquals(1, Files.list(dir).filter(p -> p.getFileName().toString().startsWith("state.log.corrupt-")).count());
        assertTrue(b.state.batches().isEmpty());
        b.state.close(true, 0);
    }

    @Test
    void aTornTailLosesOnlyTheRecordBeingWritten() throws Exception {
        Proc a = new Proc(new FakeWorld());
        a.apply(batch("b1", 0, AIR, STONE));
        a.apply(batch("b2", 1, AIR, STONE));
        a.state.crash();
        Path f = dir.resolve(HostState.LOG);
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.setLength(r.length() - 3);
        }
        Proc b = new Proc(new FakeWorld());
        assertTrue(b.state.repairNote().contains("torn"), b.state.repairNote());
        assertEquals("", b.state.restartInfo().getStateProblem());
        List<String> ids = b.state.batches().stream().map(HostState.StoredBatch::batchId).collect(Collectors.toList());
        assertTrue(ids.contains("b1"), ids.toString());
        b.state.close(true, 0);
    }

    @Test
    void aStateLargerThanTheCompactionThresholdIsNotRewrittenOnEveryWrite() throws Exception {
        // compactBytes far below what the retained state needs: compaction must not run after every
        // drain (that rewrote the whole file, with fsyncs, on every write of an active server)
        HostState st = HostState.open(dir, 20, 20, 256);
        EventLog log = new EventLog(st.logId(), 1000, st.seqBase(), st.tail());
        log.sink(st::event);
        for (int i = 0; i < 60; i++) {
            log.record(i, 70, 0, AIR, STONE, Source.PLAYER, "p", "");
            st.sync().get(10, TimeUnit.SECONDS);
        }
        st.sync().get(10, TimeUnit.SECONDS);
        long before = Files.size(dir.resolve(HostState.LOG));
        log.record(100, 70, 0, AIR, STONE, Source.PLAYER, "p", "");
        st.sync().get(10, TimeUnit.SECONDS);
        st.sync().get(10, TimeUnit.SECONDS);
        assertTrue(Files.size(dir.resolve(HostState.LOG)) > before, "the next event was appended, not a rewrite: "
                + before + " -> " + Files.size(dir.resolve(HostState.LOG)));
        st.close(true, 0);
    }

    @Test
    void oneProcessPerFolderAndCompactionKeepsTheState() throws Exception {
        Proc a = new Proc(new FakeWorld());
        assertThrows(IOException.class, () -> HostState.open(dir));
        a.state.close(true, 0);
        HostState small = HostState.open(dir, 20, 20, 4096);
        EventLog log = new EventLog(small.logId(), 1000, small.seqBase(), small.tail());
        log.sink(small::event);
        for (int i = 0; i < 300; i++) {
            log.record(i, 70, 0, AIR, STONE, Source.PLAYER, "p", "");
            small.batch("x" + i, "d", "op", BatchApplyResult.newBuilder().setBatchId("x" + i).setStatus("applied")
                    .setWritten(1).addAlreadyPositions(Vec3.newBuilder().setX(i)).build(), false);
        }
        small.saved(small.saveMark());
        small.sync().get(10, TimeUnit.SECONDS);
        small.sync().get(10, TimeUnit.SECONDS); // the writer compacts after answering a drain: wait for it
        assertTrue(Files.size(dir.resolve(HostState.LOG)) < 4096 + 2048, "compacted: " + Files.size(dir.resolve(HostState.LOG)));
        small.close(true, 0);
        HostState again = HostState.open(dir, 20, 20, 4096);
        assertEquals(20, again.tail().size());
        assertEquals(299, again.tail().get(19).x());
        assertEquals(300, again.seqBase());
        assertEquals(20, again.batches().size());
        again.close(true, 0);
    }

    /** Not an assertion: the fsync cost of one batch answer on this machine (bench numbers in the report). */
    @Test
    void fsyncCostPerBatch() throws Exception {
        HostState s = HostState.open(dir);
        BatchApplyResult r = BatchApplyResult.newBuilder().setStatus("applied").setWritten(512).build();
        List<Long> nanos = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            long t0 = System.nanoTime();
            s.batch("f" + i, "d", "op", r, true).get(10, TimeUnit.SECONDS);
            nanos.add(System.nanoTime() - t0);
        }
        nanos.sort(null);
        System.out.printf("state fsync per batch answer: median %.2f ms, p90 %.2f ms, max %.2f ms (%s)%n",
                nanos.get(50) / 1e6, nanos.get(90) / 1e6, nanos.get(99) / 1e6, dir);
        s.close(true, 0);
    }
}
