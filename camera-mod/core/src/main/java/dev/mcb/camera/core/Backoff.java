package dev.mcb.camera.core;

/**
 * Reconnect delays: doubling from {@code initialMs} up to {@code maxMs}, with up to 20 % jitter
 * from a seeded sequence (deterministic in tests, spread out across clients), reset after a
 * successful handshake.
 */
public final class Backoff {
    private final long initialMs;
    private final long maxMs;
    private long next;
    private long seed;

    public Backoff(long initialMs, long maxMs, long seed) {
        if (initialMs <= 0 || maxMs < initialMs) {
            throw new IllegalArgumentException("need 0 < initialMs <= maxMs");
        }
        this.initialMs = initialMs;
        this.maxMs = maxMs;
        this.next = initialMs;
        this.seed = seed;
    }

    public synchronized long nextDelayMs() {
        long base = next;
        next = Math.min(maxMs, next * 2);
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        double unit = ((seed >>> 11) & ((1L << 53) - 1)) / (double) (1L << 53);
        return Math.min(maxMs, base + (long) (base * 0.2 * unit));
    }

    public synchronized void reset() {
        next = initialMs;
    }
}
