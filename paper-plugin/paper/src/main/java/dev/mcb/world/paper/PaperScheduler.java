package dev.mcb.world.paper;

import dev.mcb.world.core.port.Scheduler;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.bukkit.Bukkit;
import org.bukkit.plugin.Plugin;

/** Scheduler over the BukkitScheduler: the main thread, once per tick. */
final class PaperScheduler implements Scheduler {
    private final Plugin plugin;

    PaperScheduler(Plugin plugin) {
        this.plugin = plugin;
    }

    @Override
    public void everyTick(Runnable tick) {
        Bukkit.getScheduler().runTaskTimer(plugin, tick, 1L, 1L);
    }

    @Override
    public <T> CompletableFuture<T> call(Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Runnable r = () -> {
            if (f.isDone()) {
                return;
            }
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        };
        if (Bukkit.isPrimaryThread()) {
            r.run();
        } else {
            Bukkit.getScheduler().runTask(plugin, r);
        }
        return f;
    }
}
