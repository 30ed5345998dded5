package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The next-tick re-read of reported positions and their six neighbours (WorldHostCore.observeAround). */
class ObservationsTest {
    private static final String DOOR_LOWER = "minecraft:oak_door[half=lower]";
    private static final String DOOR_UPPER = "minecraft:oak_door[half=upper]";

    private final FakeWorld fake = new FakeWorld();
    private final HoldingWorld world = new HoldingWorld(fake);
    private final ManualScheduler sched = new ManualScheduler();
    private final WorldHostCore core = new WorldHostCore(HostConfig.defaults("t", "0", 0, false), world, sched,
            DirectScheduler.NO_PLAYERS, (p, t) -> { });
    private final String cursor = core.events().cursorNow();

    ObservationsTest() {
        for (int cx = -8; cx <= 7; cx++) { // chunk column 8 stays unloaded
            for (int cz = -8; cz <= 8; cz++) {
                world.loaded.add(((long) cx << 32) | (cz & 0xFFFFFFFFL));
            }
        }
    }

    private Map<String, EventLog.Event> events() {
        return core.events().since(cursor, 100, null).events().stream()
                .collect(Collectors.toMap(e -> e.x() + "," + e.y() + "," + e.z(), e -> e));
    }

    @Test
    void aPlayerBreakingTheLowerHalfOfADoorRecordsBothHalvesAndTheFenceThatChangedShape() {
        fake.set(0, 64, 0, DOOR_LOWER);
        fake.set(0, 65, 0, DOOR_UPPER);
        fake.set(1, 64, 0, "minecraft:oak_fence[west=true]");
        fake.set(-1, 64, 0, "minecraft:glass"); // a neighbour that stays as it is
        // BlockBreakEvent fires before the block goes: the adapter reports the position and its neighbours
        core.observeAround(0, 64, 0, DOOR_LOWER, Source.PLAYER, "alice");
        // the game then removes both halves and updates the fence's shape, without events of their own
        fake.set(0, 64, 0, "minecraft:air");
        fake.set(0, 65, 0, "minecraft:air");
        fake.set(1, 64, 0, "minecraft:oak_fence[west=false]");
        assertEquals(Map.of(), events(), "nothing is recorded before the next tick");
        sched.tick();
        Map<String, EventLog.Event> ev = events();
        assertEquals(3, ev.size(), ev.toString());
        assertEquals(DOOR_LOWER, ev.get("0,64,0").before());
        assertEquals(DOOR_UPPER, ev.get("0,65,0").before());
        assertEquals("minecraft:air", ev.get("0,65,0").after());
        assertEquals("minecraft:oak_fence[west=true]", ev.get("1,64,0").before());
        assertEquals("minecraft:oak_fence[west=false]", ev.get("1,64,0").after());
        for (EventLog.Event e : ev.values()) {
            assertEquals(Source.PLAYER, e.source());
            assertEquals("alice", e.playerId());
        }
        sched.tick();
        assertEquals(3, events().size(), "settled once: the next tick has nothing pending");
    }

    @Test
    void aBlockThatPopsOffWhenAPlayerBreaksItsSupportKeepsThePlayerAsCause() {
        // BlockBreakEvent (player) for the support, then Paper's BlockDestroyEvent for the torch on it,
        // which the adapter reports as environment: the player's cause stays
        fake.set(0, 64, 0, "minecraft:stone");
        fake.set(0, 65, 0, "minecraft:torch");
        core.observeAround(0, 64, 0, "minecraft:stone", Source.PLAYER, "alice");
        core.observeLater(0, 65, 0, "minecraft:torch", Source.ENVIRONMENT, "");
        fake.set(0, 64, 0, "minecraft:air");
        fake.set(0, 65, 0, "minecraft:air");
        // an environment change with no player cause nearby stays environment
        fake.set(5, 64, 5, "minecraft:torch");
        core.observeLater(5, 64, 5, "minecraft:torch", Source.ENVIRONMENT, "");
        fake.set(5, 64, 5, "minecraft:air");
        sched.tick();
        Map<String, EventLog.Event> ev = events();
        assertEquals(Source.PLAYER, ev.get("0,65,0").source(), ev.toString());
        assertEquals("alice", ev.get("0,65,0").playerId());
        assertEquals(Source.ENVIRONMENT, ev.get("5,64,5").source());
    }

    @Test
    void anExplosionsCauseStaysOnTheBlocksThatPopOffAndAPlayersNameTravelsWithTheEvent() {
        // EntityExplodeEvent: each destroyed block reported around with cause explosion; the torch on one of
        // them then pops off (Paper's BlockDestroyEvent, reported with cause other): the explosion stays
        fake.set(0, 64, 0, "minecraft:stone");
        fake.set(0, 65, 0, "minecraft:torch");
        core.observeAround(0, 64, 0, "minecraft:stone", Source.ENVIRONMENT, "", "", Cause.EXPLOSION);
        core.observeLater(0, 65, 0, "minecraft:torch", Source.ENVIRONMENT, "", "", Cause.OTHER);
        fake.set(0, 64, 0, "minecraft:air");
        fake.set(0, 65, 0, "minecraft:air");
        // a player's edit carries the name the adapter gave
        fake.set(4, 64, 4, "minecraft:dirt");
        core.observeAround(4, 64, 4, "minecraft:dirt", Source.PLAYER, "uuid-b", "Bob", "");
        fake.set(4, 64, 4, "minecraft:air");
        // an environment report without a cause (an older adapter) is "other"
        fake.set(-4, 64, -4, "minecraft:ice");
        core.observeLater(-4, 64, -4, "minecraft:ice", Source.ENVIRONMENT, "");
        fake.set(-4, 64, -4, "minecraft:water");
        sched.tick();
        Map<String, EventLog.Event> ev = events();
        assertEquals("explosion", ev.get("0,64,0").cause(), ev.toString());
        assertEquals("explosion", ev.get("0,65,0").cause());
        assertEquals("", ev.get("0,64,0").playerName());
        assertEquals("Bob", ev.get("4,64,4").playerName());
        assertEquals("uuid-b", ev.get("4,64,4").playerId());
        assertEquals("", ev.get("4,64,4").cause());
        assertEquals("other", ev.get("-4,64,-4").cause());
    }

    @Test
    void anExplicitBeforeReplacesANeighboursGuessAndTheFirstExplicitReportWins() {
        // a bed placed by a player: both halves are already in the world when BlockMultiPlaceEvent fires
        fake.set(0, 64, 0, "minecraft:red_bed[part=foot]");
        fake.set(0, 64, 1, "minecraft:red_bed[part=head]");
        core.observeAround(0, 64, 0, "minecraft:air", Source.PLAYER, "bob"); // guesses (0,64,1) = head
        core.observeAround(0, 64, 1, "minecraft:air", Source.PLAYER, "bob"); // the event knows: it was air
        core.observeLater(0, 64, 1, "minecraft:stone", Source.ENVIRONMENT, ""); // later report: ignored
        sched.tick();
        Map<String, EventLog.Event> ev = events();
        assertEquals(2, ev.size(), ev.toString());
        assertEquals("minecraft:air", ev.get("0,64,1").before());
        assertEquals("minecraft:red_bed[part=head]", ev.get("0,64,1").after());
        assertEquals(Source.PLAYER, ev.get("0,64,1").source());
    }

    @Test
    void neighboursInUnloadedChunksAreNeverReadAndWorldHeightIsRespected() {
        // x=127 is the last column of chunk 7 (loaded); x=128 is chunk 8 (not loaded)
        fake.set(127, 319, 0, "minecraft:glass");
        core.observeAround(127, 319, 0, "minecraft:glass", Source.ENVIRONMENT, "");
        fake.set(127, 319, 0, "minecraft:air");
        sched.tick();
        assertEquals(List.of(), world.syncLoads, "no read of an unloaded chunk");
        assertEquals(1, events().size());
        assertTrue(events().get("127,319,0").after().equals("minecraft:air"));
    }

    @Test
    void aChunkUnloadedBeforeTheNextTickIsSkippedNotLoaded() {
        core.observeLater(5, 64, 5, "minecraft:air", Source.ENVIRONMENT, "");
        world.loaded.remove(0L);
        sched.tick();
        assertEquals(List.of(), world.syncLoads);
        assertEquals(Map.of(), events());
    }

    @Test
    void writesOfOurOwnExecutorAreNotObserved() {
        core.observeAround(3, 70, 3, "minecraft:air", Source.OURS, "");
        fake.set(3, 70, 3, "minecraft:stone");
        sched.tick();
        assertEquals(Map.of(), events());
    }

    /**
     * A piston pushing a block: the event fires before the move, the positions then hold moving_piston for two
     * ticks and the final states land with no event (PistonMovingBlockEntity): the events record where the
     * blocks came to rest, never the transient moving_piston.
     */
    @Test
    void aPistonMoveIsRecordedWhereTheBlocksComeToRest() {
        String moving = "minecraft:moving_piston[facing=east,type=normal]";
        fake.set(0, 64, 0, "minecraft:piston[extended=false,facing=east]");
        fake.set(1, 64, 0, "minecraft:stone");
        core.observeAround(1, 64, 0, "minecraft:stone", Source.ENVIRONMENT, "");
        core.observeAround(2, 64, 0, "minecraft:air", Source.ENVIRONMENT, "");
        fake.set(0, 64, 0, "minecraft:piston[extended=true,facing=east]");
        fake.set(1, 64, 0, moving);
        fake.set(2, 64, 0, moving);
        sched.tick();
        sched.tick();
        Map<String, EventLog.Event> ev = events();
        assertTrue(ev.values().stream().noneMatch(e -> e.after().startsWith("minecraft:moving_piston")), ev.toString());
        fake.set(1, 64, 0, "minecraft:piston_head[facing=east,short=false,type=normal]");
        fake.set(2, 64, 0, "minecraft:stone");
        sched.tick();
        ev = events();
        assertEquals("minecraft:stone", ev.get("1,64,0").before());
        assertEquals("minecraft:piston_head[facing=east,short=false,type=normal]", ev.get("1,64,0").after());
        assertEquals("minecraft:air", ev.get("2,64,0").before());
        assertEquals("minecraft:stone", ev.get("2,64,0").after());
        assertEquals("minecraft:piston[extended=true,facing=east]", ev.get("0,64,0").after());
    }

    @Test
    void aBlockStuckInMotionIsRecordedAfterTheLimit() {
        String moving = "minecraft:moving_piston[facing=east,type=normal]";
        core.observeLater(3, 64, 0, "minecraft:air", Source.ENVIRONMENT, "");
        fake.set(3, 64, 0, moving);
        for (int i = 0; i < Observations.MAX_DEFERRED_TICKS; i++) {
            sched.tick();
        }
        assertEquals(Map.of(), events());
        sched.tick();
        assertEquals(moving, events().get("3,64,0").after());
    }
}
