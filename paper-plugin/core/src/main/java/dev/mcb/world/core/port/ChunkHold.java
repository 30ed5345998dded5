package dev.mcb.world.core.port;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Chunks a request keeps loaded while it reads or writes them (Paper: plugin chunk tickets), and the
 * chunks that could not be held because they were never generated ({@code {cx, cz}} pairs; they are
 * reported as missing, never generated). {@link #close()} releases the hold once; any thread.
 */
public final class ChunkHold implements AutoCloseable {
    private final List<int[]> missing;
    private final Runnable release;
    private final AtomicBoolean released = new AtomicBoolean();

    public ChunkHold(List<int[]> missing, Runnable release) {
        this.missing = List.copyOf(missing);
        this.release = release;
    }

    public List<int[]> missing() {
        return missing;
    }

    @Override
    public void close() {
        if (released.compareAndSet(false, true) && release != null) {
            release.run();
        }
    }
}
