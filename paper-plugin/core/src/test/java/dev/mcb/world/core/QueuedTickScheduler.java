package dev.mcb.world.core;

import dev.mcb.world.core.port.Scheduler;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A server thread the test drives: {@link #tick()} (on the test's thread) runs the queued calls, then the per-tick
 * hooks (the core's tick), like Paper's scheduler; nothing runs between ticks. {@link #ticks()} counts them.
 */
final class QueuedTickScheduler implements Scheduler {
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<Runnable> hooks = new CopyOnWriteArrayList<>();
    private volatile long ticks;

    @Override
    public void everyTick(Runnable tick) {
        hooks.add(tick);
    }

    @Override
    public <T> CompletableFuture<T> call(Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    /** One server tick; the tick being run is {@link #ticks()} + 1 while it runs. */
    void tick() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            r.run();
        }
        hooks.forEach(Runnable::run);
        ticks++;
    }

    long ticks() {
        return ticks;
    }
}
