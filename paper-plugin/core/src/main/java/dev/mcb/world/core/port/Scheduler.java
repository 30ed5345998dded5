package dev.mcb.world.core.port;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** The server's main thread, as the core sees it (Paper: the BukkitScheduler; tests: a tick thread). */
public interface Scheduler {
    /** Run {@code tick} on the server thread once per server tick, until the plugin stops. */
    void everyTick(Runnable tick);

    /** Run {@code task} on the server thread at the next opportunity. */
    <T> CompletableFuture<T> call(Callable<T> task);
}
