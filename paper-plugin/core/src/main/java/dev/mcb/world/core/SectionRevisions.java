package dev.mcb.world.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-section change counters in memory. They start at {@code base}: 0 for a new host instance, and above
 * every value the previous process reported when the instance (hostInstance) survives a restart
 * ({@link HostState}), so a cached revision never matches a different world state.
 */
public final class SectionRevisions {
    private final ConcurrentHashMap<Long, Long> map = new ConcurrentHashMap<>();
    private final long base;
    private final AtomicLong bumps = new AtomicLong();

    public SectionRevisions() {
        this(0);
    }

    public SectionRevisions(long base) {
        this.base = base;
    }

    static long key(int cx, int sy, int cz) {
        return ((long) (cx & 0x3FFFFF) << 42) | ((long) (cz & 0x3FFFFF) << 20) | (sy & 0xFFFFF);
    }

    public long bump(int cx, int sy, int cz) {
        bumps.incrementAndGet();
        return base + map.merge(key(cx, sy, cz), 1L, Long::sum);
    }

    public long get(int cx, int sy, int cz) {
        return base + map.getOrDefault(key(cx, sy, cz), 0L);
    }

    /** Above every revision reported so far (a restart that keeps the instance starts from here). */
    public long high() {
        return base + bumps.get() + 1;
    }
}
