package dev.mcb.world.core;

import dev.mcb.world.core.port.Scheduler;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/** The test is the server thread: {@link #tick()} runs the per-tick hooks; calls run inline. */
final class ManualScheduler implements Scheduler {
    private final List<Runnable> hooks = new CopyOnWriteArrayList<>();

    @Override
    public void everyTick(Runnable tick) {
        hooks.add(tick);
    }

    @Override
    public <T> CompletableFuture<T> call(Callable<T> task) {
        try {
            return CompletableFuture.completedFuture(task.call());
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    void tick() {
        hooks.forEach(Runnable::run);
    }
}
