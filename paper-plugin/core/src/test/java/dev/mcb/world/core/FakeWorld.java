package dev.mcb.world.core;

import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** A small world for unit tests: stone below y=64, air above, chunks within ±8; optional slowness. */
final class FakeWorld implements WorldAccess {
    static final Set<String> KNOWN = Set.of("minecraft:air", "minecraft:stone", "minecraft:glass", "minecraft:dirt",
            "minecraft:chest", "minecraft:water");
    final Map<Long, String> blocks = new HashMap<>();
    final Map<Long, String> blockEntities = new HashMap<>();
    volatile long nanosPerAccess;
    volatile int failSetAfter = -1;
    int sets;
    volatile Runnable onSet;
    /** Called after each write with its position and state (the server thread, inside the batch). */
    volatile SetHook onSetAt;

    interface SetHook {
        void set(int x, int y, int z, String state);
    }

    static long key(int x, int y, int z) {
        return EventLog.key(x, y, z);
    }

    /** A simulated clock: each access advances it by nanosPerAccess (deterministic tick-budget tests). */
    final java.util.concurrent.atomic.AtomicLong fakeNanos = new java.util.concurrent.atomic.AtomicLong();
    volatile boolean simulated;

    private void spin() {
        long n = nanosPerAccess;
        if (n > 0 && simulated) {
            fakeNanos.addAndGet(n);
        } else if (n > 0) {
            long end = System.nanoTime() + n;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
        }
    }

    @Override
    public WorldDescriptor describe() {
        return new WorldDescriptor("00000000-0000-0000-0000-000000000001", "fake", 1, 4671, "1.21.11", -64, 319,
                "1.21.11", 4671, KNOWN.size(), "0".repeat(64), new int[] {-8, -8, 8, 8});
    }

    @Override
    public boolean chunkExists(int cx, int cz) {
        return Math.abs(cx) <= 8 && Math.abs(cz) <= 8;
    }

    @Override
    public String get(int x, int y, int z) {
        spin();
        return blocks.getOrDefault(key(x, y, z), y < 64 ? "minecraft:stone" : "minecraft:air");
    }

    @Override
    public void set(int x, int y, int z, String state) {
        spin();
        if (failSetAfter >= 0 && sets == failSetAfter) {
            sets++;
            throw new IllegalStateException("disk on fire"); // one failure, then writes work again
        }
        sets++;
        blocks.put(key(x, y, z), state);
        Runnable r = onSet;
        if (r != null) {
            r.run();
        }
        SetHook h = onSetAt;
        if (h != null) {
            h.set(x, y, z, state);
        }
    }

    @Override
    public String blockEntityAt(int x, int y, int z) {
        return blockEntities.get(key(x, y, z));
    }

    @Override
    public String canonical(String text) {
        String t = text.strip().toLowerCase();
        String n = t.contains(":") ? t : "minecraft:" + t;
        if (!KNOWN.contains(n)) {
            throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "unknown block " + n);
        }
        return n;
    }
}
