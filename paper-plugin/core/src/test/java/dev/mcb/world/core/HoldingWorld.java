package dev.mcb.world.core;

import dev.mcb.world.core.port.ChunkHold;
import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A FakeWorld behind the chunk rules of a real server: chunks are loaded only by {@link #hold}
 * (asynchronously, on another thread) or listed in {@link #loaded}; reading or writing an unloaded chunk
 * fails the test (it would be a synchronous load on the server thread).
 */
final class HoldingWorld implements WorldAccess {
    final FakeWorld inner;
    /** Chunks loaded for good (the test's own), besides the held ones. */
    final Set<Long> loaded = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.Map<Long, Integer> refs = new java.util.HashMap<>();
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger holds = new AtomicInteger();
    final List<String> syncLoads = java.util.Collections.synchronizedList(new ArrayList<>());

    HoldingWorld(FakeWorld inner) {
        this.inner = inner;
    }

    private static long key(int cx, int cz) {
        return ((long) cx << 32) | (cz & 0xFFFFFFFFL);
    }

    private void requireLoaded(int x, int z) {
        if (!chunkLoaded(x >> 4, z >> 4)) {
            syncLoads.add(x + "," + z);
            throw new IllegalStateException("chunk of (" + x + "," + z + ") is not loaded");
        }
    }

    @Override
    public WorldDescriptor describe() {
        return inner.describe();
    }

    @Override
    public boolean chunkExists(int cx, int cz) {
        return inner.chunkExists(cx, cz);
    }

    @Override
    public boolean chunkLoaded(int cx, int cz) {
        synchronized (refs) {
            return loaded.contains(key(cx, cz)) || refs.containsKey(key(cx, cz));
        }
    }

    @Override
    public CompletableFuture<ChunkHold> hold(List<int[]> chunks) {
        holds.incrementAndGet();
        return CompletableFuture.supplyAsync(() -> {
            List<int[]> missing = new ArrayList<>();
            Set<Long> mine = new HashSet<>();
            for (int[] c : chunks) {
                if (!inner.chunkExists(c[0], c[1])) {
                    missing.add(c);
                } else {
                    mine.add(key(c[0], c[1]));
                }
            }
            synchronized (refs) {
                mine.forEach(k -> refs.merge(k, 1, Integer::sum));
            }
            held.addAndGet(mine.size());
            return new ChunkHold(missing, () -> {
                synchronized (refs) {
                    mine.forEach(k -> refs.computeIfPresent(k, (kk, n) -> n == 1 ? null : n - 1));
                }
                held.addAndGet(-mine.size());
            });
        });
    }

    @Override
    public String get(int x, int y, int z) {
        requireLoaded(x, z);
        return inner.get(x, y, z);
    }

    @Override
    public void set(int x, int y, int z, String canonicalState) {
        requireLoaded(x, z);
        inner.set(x, y, z, canonicalState);
    }

    @Override
    public String blockEntityAt(int x, int y, int z) {
        return inner.blockEntityAt(x, y, z);
    }

    @Override
    public String canonical(String text) {
        return inner.canonical(text);
    }
}
