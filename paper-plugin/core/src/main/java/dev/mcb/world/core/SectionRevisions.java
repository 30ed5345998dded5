package dev.mcb.world.core;

import java.util.concurrent.ConcurrentHashMap;

/** In-memory per-section change counters (reset when the host restarts; hostInstance tells). */
public final class SectionRevisions {
    private final ConcurrentHashMap<Long, Long> map = new ConcurrentHashMap<>();

    static long key(int cx, int sy, int cz) {
        return ((long) (cx & 0x3FFFFF) << 42) | ((long) (cz & 0x3FFFFF) << 20) | (sy & 0xFFFFF);
    }

    public long bump(int cx, int sy, int cz) {
        return map.merge(key(cx, sy, cz), 1L, Long::sum);
    }

    public long get(int cx, int sy, int cz) {
        return map.getOrDefault(key(cx, sy, cz), 0L);
    }
}
