package dev.mcb.world.core;

import dev.mcb.world.core.port.Players;
import dev.mcb.world.core.port.Scheduler;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/** Runs calls inline; a background thread ticks every 5 ms so batches complete. */
final class DirectScheduler implements Scheduler, AutoCloseable {
    static final Players NO_PLAYERS = Players.NONE;

    private final List<Runnable> hooks = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    private volatile boolean running = true;
    private final Thread t;

    DirectScheduler() {
        t = new Thread(() -> {
            while (running) {
                synchronized (lock) {
                    hooks.forEach(Runnable::run);
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "test-ticker");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void everyTick(Runnable tick) {
        hooks.add(tick);
    }

    @Override
    public <T> CompletableFuture<T> call(Callable<T> task) {
        synchronized (lock) {
            try {
                return CompletableFuture.completedFuture(task.call());
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        t.interrupt();
    }
}
