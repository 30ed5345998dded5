package dev.mcb.world.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Server-thread work that can stop after any unit (reading one position, or writing one automation
 * block), done in slices inside the tick's shared budget ({@link TickBudget}). Tasks run first come,
 * first served. Before every slice the number of units that still fit before the deadline is predicted
 * from a moving average of nanoseconds per unit (rising at once when the world gets slower, decaying
 * slowly; the very first slice is a single unit), so a slice never starts when it is predicted not to fit; with a steady cost per unit the
 * reads therefore never pass the deadline. A task that got no unit for {@link #STARVED_TICKS} ticks
 * in a row runs one unit anyway, so reads always progress.
 */
public final class SlicedWork {
    /** Units per slice at most: the clock is read (and the prediction refined) after each slice. */
    public static final int GRAIN = 1024;
    public static final int STARVED_TICKS = 20;
    /** A slice this many times cheaper per unit than the estimate replaces it (the estimate was an outlier). */
    static final int OUTLIER = 8;

    /** The units of a task, run in order on the server thread: {@code step()} is called {@code size()} times. */
    public interface Units {
        int size();

        void step();
    }

    public static final class Task {
        private final Units units;
        private final int size;
        private volatile int next;
        private volatile boolean cancelled;
        private final CompletableFuture<Void> done = new CompletableFuture<>();

        Task(Units units) {
            this.units = units;
            this.size = units.size();
        }

        /** Units done so far (any thread). */
        public int progress() {
            return next;
        }

        public CompletableFuture<Void> done() {
            return done;
        }

        /** Stop before the next slice (the caller gave up). */
        public void cancel() {
            cancelled = true;
            done.cancel(false);
        }
    }

    private final ConcurrentLinkedQueue<Task> queue = new ConcurrentLinkedQueue<>();
    private final LongSupplier clock;
    /** Pessimistic until the first slice is measured (then that measurement replaces it). */
    private double nanosPerUnit = 10_000;
    private boolean measured;
    private int starved;

    public SlicedWork(LongSupplier clock) {
        this.clock = clock;
    }

    public Task submit(Units units) {
        Task t = new Task(units);
        if (t.size == 0) {
            t.done.complete(null);
            return t;
        }
        queue.add(t);
        return t;
    }

    /** True when a task waits for the server thread. */
    public boolean waiting() {
        return !queue.isEmpty();
    }

    /** The moving average of nanoseconds per unit (what the next slice is predicted with). */
    public double nanosPerUnit() {
        return nanosPerUnit;
    }

    /** Run units until the clock reaches {@code deadline}; server thread. Returns the units run. */
    public int run(long deadline) {
        int ran = 0;
        Task t;
        while ((t = queue.peek()) != null) {
            if (t.cancelled || t.done.isDone()) {
                queue.poll();
                continue;
            }
            while (t.next < t.size) {
                long now = clock.getAsLong();
                long fit = (long) ((deadline - now) / nanosPerUnit);
                if (fit < 1) {
                    if (ran > 0 || starved < STARVED_TICKS) {
                        starved = ran > 0 ? 0 : starved + 1;
                        return ran;
                    }
                    fit = 1; // starved for too long: one unit so the task moves
                }
                // a slice plans at most half of the time left: slices shrink towards the deadline, so a
                // slice slower than predicted (a cache miss, a GC pause) overshoots by little
                int n = (int) Math.min(Math.min(Math.max(1, fit / 2), measured ? GRAIN : 1), t.size - t.next);
                try {
                    for (int k = 0; k < n; k++) {
                        t.units.step();
                        t.next++;
                    }
                } catch (RuntimeException e) {
                    queue.poll();
                    t.done.completeExceptionally(e);
                    break;
                }
                long dt = clock.getAsLong() - now;
                double observed = Math.max(1.0, (double) dt / n);
                if (!measured || observed > nanosPerUnit || observed * OUTLIER < nanosPerUnit) {
                    // rises at once; and a slice far cheaper than the estimate means the estimate came from one
                    // outlier (a cold first unit, a GC pause): decaying from it by a fifth a slice, with one unit
                    // every STARVED_TICKS while nothing fits, would hold the task back for minutes
                    nanosPerUnit = observed;
                } else {
                    nanosPerUnit = nanosPerUnit * 0.8 + observed * 0.2;
                }
                measured = true;
                ran += n;
                if (t.cancelled) {
                    break;
                }
            }
            if (t.next >= t.size && !t.done.isDone()) {
                queue.poll();
                t.done.complete(null);
            } else if (t.cancelled) {
                queue.poll();
            }
        }
        starved = 0;
        return ran;
    }

    /**
     * Wait for a task (a caller thread). It fails with {@code busy} (and is withdrawn) only when it made
     * no progress for {@code stallMillis}: a long read on a healthy server is never cut short.
     */
    public static void await(Task t, long stallMillis) {
        int last = t.progress();
        long lastMoved = System.nanoTime();
        while (true) {
            try {
                t.done.get(100, TimeUnit.MILLISECONDS);
                return;
            } catch (TimeoutException e) {
                int p = t.progress();
                long now = System.nanoTime();
                if (p != last) {
                    last = p;
                    lastMoved = now;
                } else if (now - lastMoved > stallMillis * 1_000_000L) {
                    t.cancel();
                    throw new McbException(ErrorCode.BUSY, "the server thread made no progress on this request for "
                            + stallMillis / 1000 + " s (lagging server?); retry later");
                }
            } catch (InterruptedException e) {
                t.cancel();
                Thread.currentThread().interrupt();
                throw new McbException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the server thread");
            } catch (ExecutionException e) {
                throw WorldHostCore.unwrap(e);
            } catch (java.util.concurrent.CancellationException e) {
                throw new McbException(ErrorCode.UNAVAILABLE, "the request was withdrawn");
            }
        }
    }
}
