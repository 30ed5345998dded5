package dev.mcb.world.testhost;

import dev.mcb.world.core.port.Scheduler;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * A "server thread" for the test host: {@code tps} ticks a second; each tick runs the queued tasks and
 * then the per-tick hooks (the batch executor), like Paper's scheduler.
 */
public final class TickScheduler implements Scheduler, AutoCloseable {
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<Runnable> hooks = new CopyOnWriteArrayList<>();
    private final long periodNanos;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long ticks;

    public TickScheduler(int tps) {
        this.periodNanos = 1_000_000_000L / tps;
        this.thread = new Thread(this::loop, "mcb-server-thread");
        this.thread.setDaemon(true);
    }

    public TickScheduler start() {
        thread.start();
        return this;
    }

    public long ticks() {
        return ticks;
    }

    private void loop() {
        long next = System.nanoTime();
        while (running) {
            Runnable r;
            while ((r = tasks.poll()) != null) {
                r.run();
            }
            for (Runnable h : hooks) {
                try {
                    h.run();
                } catch (RuntimeException e) {
                    e.printStackTrace();
                }
            }
            ticks++;
            next += periodNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            } else {
                next = System.nanoTime(); // lagging: do not try to catch up (Paper does not either)
            }
        }
    }

    @Override
    public void everyTick(Runnable tick) {
        hooks.add(tick);
    }

    @Override
    public <T> CompletableFuture<T> call(Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        tasks.add(() -> {
            if (f.isDone()) {
                return;
            }
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread && thread.isAlive()) {
            try {
                thread.join(10_000); // the running tick finishes first
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
