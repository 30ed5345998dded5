package dev.mcb.world.core;

import java.util.function.LongSupplier;

/**
 * The one per-tick time budget that every piece of server-thread work of the core shares: the
 * observation re-reads, the batch executor and the sliced reads ({@code region_read},
 * {@code blocks_get}, {@code automation_set_blocks}). Pure accounting over a clock
 * ({@link System#nanoTime()} in production, a simulated clock in tests); not thread-safe (the server
 * thread only).
 *
 * <p>Split while both writers and readers wait: the executor may use what is left of the tick minus a
 * reserve of half of it for the reads; the reads then use whatever is left. With only one kind of
 * work waiting, it may use all that is left. The executor never splits a batch (batches are atomic,
 * and its first batch of a tick always runs), so a single batch slower than predicted is the only
 * way the executor overruns; the reads never start a slice that is predicted not to fit.
 */
public final class TickBudget {
    private final long budgetNanos;
    private final LongSupplier clock;
    private long start;
    private long ticks;
    // per-tick accounting, by kind
    private long observeNanos;
    private long executorNanos;
    private long readNanos;
    // totals and maxima
    private long maxReadNanos;
    private long maxTotalNanos;
    private long totalReadNanos;
    private long readTicks;
    private long lastTotalNanos;
    private long lastObserveNanos;
    private long lastExecutorNanos;
    private long lastReadNanos;

    public TickBudget(long budgetNanos, LongSupplier clock) {
        if (budgetNanos <= 0) {
            throw new IllegalArgumentException("budget must be positive");
        }
        this.budgetNanos = budgetNanos;
        this.clock = clock;
    }

    public long budgetNanos() {
        return budgetNanos;
    }

    public long now() {
        return clock.getAsLong();
    }

    /** A new tick starts now (its work is measured from here). */
    public void begin() {
        start = clock.getAsLong();
        observeNanos = 0;
        executorNanos = 0;
        readNanos = 0;
        ticks++;
    }

    /** Time used in this tick so far. */
    public long elapsed() {
        return clock.getAsLong() - start;
    }

    /** Time left in this tick (may be negative after an overrun). */
    public long remaining() {
        return budgetNanos - elapsed();
    }

    /** The clock value at which this tick's budget ends. */
    public long deadline() {
        return start + budgetNanos;
    }

    /** What the executor may use now: all that is left, minus half of it when reads are waiting. */
    public long executorShare(boolean readsWaiting) {
        long left = remaining();
        if (left <= 0) {
            return 0;
        }
        return readsWaiting ? left - left / 2 : left;
    }

    void chargeObservations(long nanos) {
        observeNanos += nanos;
    }

    void chargeExecutor(long nanos) {
        executorNanos += nanos;
    }

    void chargeReads(long nanos) {
        readNanos += nanos;
    }

    /** Close the tick's accounting (after all of its work). */
    public synchronized void end() {
        long total = observeNanos + executorNanos + readNanos;
        lastTotalNanos = total;
        lastObserveNanos = observeNanos;
        lastExecutorNanos = executorNanos;
        lastReadNanos = readNanos;
        maxTotalNanos = Math.max(maxTotalNanos, total);
        if (readNanos > 0) {
            readTicks++;
            totalReadNanos += readNanos;
            maxReadNanos = Math.max(maxReadNanos, readNanos);
        }
    }

    public record Stats(long ticks, long budgetNanos, long lastObserveNanos, long lastExecutorNanos, long lastReadNanos,
                        long lastTotalNanos, long maxReadNanos, long maxTotalNanos, long readTicks, long totalReadNanos) {
    }

    /** Any thread: the last finished tick and the maxima so far. */
    public synchronized Stats stats() {
        return new Stats(ticks, budgetNanos, lastObserveNanos, lastExecutorNanos, lastReadNanos, lastTotalNanos, maxReadNanos,
                maxTotalNanos, readTicks, totalReadNanos);
    }
}
