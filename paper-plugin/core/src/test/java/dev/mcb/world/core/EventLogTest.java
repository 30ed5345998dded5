package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchEntry;
import dev.mcb.proto.world.v1.EventsSinceParams;
import dev.mcb.proto.world.v1.EventsSinceResult;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventLogTest {
    @Test
    void classificationAndOursSuppression() {
        FakeWorld world = new FakeWorld();
        DirectScheduler sched = new DirectScheduler();
        WorldHostCore core = new WorldHostCore(HostConfig.defaults("t", "0", 0, false), world, sched,
                DirectScheduler.NO_PLAYERS, (p, t) -> { });
        String cur = core.eventsSince(EventsSinceParams.getDefaultInstance()).getNextCursor();
        core.observe(1, 64, 1, "minecraft:air", "minecraft:stone", Source.PLAYER, "alice");
        core.observe(2, 64, 2, "minecraft:air", "minecraft:water", Source.ENVIRONMENT, "");
        core.observe(3, 64, 3, "minecraft:stone", "minecraft:air", Source.EXTERNAL, "");
        core.observe(4, 64, 4, "minecraft:cave_air", "minecraft:air", Source.ENVIRONMENT, ""); // no change: dropped
        // our own batch: recorded once as "ours"; what the platform reports while we write is ignored
        world.onSet = () -> core.observe(9, 64, 9, "minecraft:air", "minecraft:stone", Source.EXTERNAL, "");
        BatchApplyParams p = BatchApplyParams.newBuilder().setBatchId("b").setWorldEpoch(1).setOperationId("op1")
                .addEntries(BatchEntry.newBuilder().setX(9).setY(64).setZ(9).setExpected("air").setDesired("stone")).build();
        assertEquals("applied", core.batchApply(p).getStatus());
        world.onSet = null;
        EventsSinceResult r = core.eventsSince(EventsSinceParams.newBuilder().setCursor(cur).build());
        List<String> sources = r.getEventsList().stream().map(e -> e.getX() + ":" + e.getSource()).toList();
        assertEquals(List.of("1:player", "2:environment", "3:external", "9:ours"), sources);
        assertEquals("alice", r.getEvents(0).getPlayerId());
        assertEquals("op1", r.getEvents(3).getOperationId());
        assertTrue(core.revisions().get(0, 4, 0) > 0, "observed changes bump section revisions");
        sched.close();
    }

    @Test
    void observeLaterSettlesOnTheNextTickAndDropsNonChanges() {
        FakeWorld world = new FakeWorld();
        java.util.List<Runnable> hooks = new java.util.ArrayList<>();
        dev.mcb.world.core.port.Scheduler manual = new dev.mcb.world.core.port.Scheduler() {
            @Override
            public void everyTick(Runnable tick) {
                hooks.add(tick);
            }

            @Override
            public <T> java.util.concurrent.CompletableFuture<T> call(java.util.concurrent.Callable<T> task) {
                try {
                    return java.util.concurrent.CompletableFuture.completedFuture(task.call());
                } catch (Exception e) {
                    return java.util.concurrent.CompletableFuture.failedFuture(e);
                }
            }
        };
        WorldHostCore core = new WorldHostCore(HostConfig.defaults("t", "0", 0, false), world, manual,
                DirectScheduler.NO_PLAYERS, (p, t) -> { });
        String cur = core.events().cursorNow();
        // a player breaks stone (the event fires before the block goes); an explosion is cancelled later
        core.observeLater(1, 60, 1, "minecraft:stone", Source.PLAYER, "alice");
        world.set(1, 60, 1, "minecraft:air");
        core.observeLater(2, 60, 2, "minecraft:stone", Source.ENVIRONMENT, "");
        core.observeLater(1, 60, 1, "minecraft:air", Source.ENVIRONMENT, ""); // later report: first wins
        hooks.forEach(Runnable::run);
        EventLog.Page page = core.events().since(cur, 100, null);
        assertEquals(1, page.events().size());
        EventLog.Event ev = page.events().get(0);
        assertEquals(Source.PLAYER, ev.source());
        assertEquals("minecraft:stone", ev.before());
        assertEquals("minecraft:air", ev.after());
    }

    @Test
    void abaTrackingKeepsTheForeignTouchEvenWhenTheBlockIsBack() {
        EventLog log = new EventLog("i1");
        EventLog.Event ours = log.record(5, 64, 5, "minecraft:air", "minecraft:stone", Source.OURS, "", "op");
        assertFalse(log.foreignTouchAfter(5, 64, 5, ours.seq()));
        log.record(5, 64, 5, "minecraft:stone", "minecraft:glass", Source.PLAYER, "bob", "");
        log.record(5, 64, 5, "minecraft:glass", "minecraft:stone", Source.PLAYER, "bob", ""); // back to A
        assertTrue(log.foreignTouchAfter(5, 64, 5, ours.seq()), "A->B->A still forbids undo");
        assertFalse(log.foreignTouchAfter(6, 64, 5, ours.seq()));
        EventLog.Event later = log.record(6, 64, 6, "minecraft:air", "minecraft:stone", Source.OURS, "", "op2");
        assertFalse(log.foreignTouchAfter(5, 64, 5, later.seq()), "touches before our write do not count");
    }

    @Test
    void cursorsPagingAndResyncAfterRestart() {
        EventLog log = new EventLog("inst-a", 5);
        String c0 = log.cursorNow();
        for (int i = 0; i < 3; i++) {
            log.record(i, 64, 0, "minecraft:air", "minecraft:stone", Source.PLAYER, "p", "");
        }
        EventLog.Page p1 = log.since(c0, 2, null);
        assertEquals(2, p1.events().size());
        assertFalse(p1.complete());
        EventLog.Page p2 = log.since(p1.nextCursor(), 100, null);
        assertEquals(1, p2.events().size());
        assertTrue(p2.complete());
        // region filter
        assertEquals(1, log.since(c0, 100, new int[] {1, 0, 0, 1, 100, 0}).events().size());
        // another instance = the host restarted
        EventLog restarted = new EventLog("inst-b", 5);
        EventLog.Page r = restarted.since(p2.nextCursor(), 100, null);
        assertTrue(r.resyncRequired());
        assertFalse(r.reason().isEmpty());
        assertNotEquals(p2.nextCursor(), r.nextCursor());
        // trimmed memory
        for (int i = 0; i < 10; i++) {
            log.record(i, 65, 0, "minecraft:air", "minecraft:stone", Source.ENVIRONMENT, "", "");
        }
        assertTrue(log.since(c0, 100, null).resyncRequired());
        assertThrows(McbException.class, () -> log.since("garbage", 10, null));
        assertThrows(McbException.class, () -> log.since("inst-a:999999", 10, null));
    }

    @Test
    void configDefaultsAreSane() {
        assertEquals(Duration.ofSeconds(30), HostConfig.defaults("s", "v", 1, false).callTimeout());
    }
}
