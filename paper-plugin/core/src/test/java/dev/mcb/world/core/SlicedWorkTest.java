package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** SlicedWork's pacing with a simulated clock. */
class SlicedWorkTest {
    private long now;

    /**
     * A cold first unit (300 ms: class loading on a server that just started, or a GC pause in the slice) must
     * not become the estimate that paces the rest: with 1 µs units after it, 100,000 units are done within a
     * few dozen 5 ms ticks (the first tick, the starved wait of STARVED_TICKS, then 5 ms of units a tick), not
     * the ~1,000 ticks of decaying by a fifth per starved unit.
     */
    @Test
    void oneSlowFirstUnitDoesNotStarveTheTask() {
        SlicedWork work = new SlicedWork(() -> now);
        int[] done = {0};
        SlicedWork.Task t = work.submit(new SlicedWork.Units() {
            @Override
            public int size() {
                return 100_000;
            }

            @Override
            public void step() {
                now += done[0]++ == 0 ? 300_000_000L : 1_000L;
            }
        });
        int ticks = 0;
        long worst = 0;
        while (!t.done().isDone() && ticks < 5_000) {
            now += 50_000_000L; // the rest of the tick
            long start = now;
            work.run(start + 5_000_000L);
            if (ticks > 0) {
                worst = Math.max(worst, now - start);
            }
            ticks++;
        }
        assertTrue(t.done().isDone() && ticks < 60, "ticks " + ticks);
        assertTrue(worst <= 5_000_000L, "after the cold unit, no tick past the budget: " + worst);
    }
}
