package dev.mcb.world.core.port;

import dev.mcb.world.core.McbException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The world, as the core sees it. Block states are canonical strings
 * ({@code minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]}).
 * {@link #get}, {@link #set}, {@link #chunkExists} and {@link #blockEntityAt} are called on the
 * server thread only (from the tick), and only for chunks a {@link #hold} keeps loaded or that
 * {@link #chunkLoaded} says are in memory: the core never makes the server load a chunk synchronously.
 * {@link #canonical} and {@link #hold} may be called from any thread.
 */
public interface WorldAccess {
    WorldDescriptor describe();

    /**
     * True when the chunk exists (generated); never generates it. The core asks it only through the defaults
     * below (in-memory worlds) and the in-memory restart check: a platform whose answer for an unloaded chunk
     * needs the disk (Paper) overrides {@link #chunkLoaded} and {@link #hold}, and the core then never calls
     * this on the server thread.
     */
    boolean chunkExists(int cx, int cz);

    /**
     * True when the chunk is in memory now, so reading it loads nothing (server thread). The
     * observation re-reads skip chunks that are not loaded. In-memory worlds: every existing chunk.
     */
    default boolean chunkLoaded(int cx, int cz) {
        return chunkExists(cx, cz);
    }

    /**
     * Load the chunks ({@code {cx, cz}} pairs) without generating them and without blocking the server
     * thread, and keep them loaded until the returned hold is closed; chunks that were never generated
     * (or are unfinished) are listed in {@link ChunkHold#missing()} and not held. Any thread; the future
     * completes once every chunk is loaded or known missing. The default suits in-memory worlds, whose
     * chunks are always loaded and whose {@link #chunkExists} is safe from any thread.
     */
    default CompletableFuture<ChunkHold> hold(List<int[]> chunks) {
        List<int[]> missing = new ArrayList<>();
        for (int[] c : chunks) {
            if (!chunkExists(c[0], c[1])) {
                missing.add(c);
            }
        }
        return CompletableFuture.completedFuture(new ChunkHold(missing, null));
    }

    /**
     * The canonical <em>full</em> state at a position in an existing chunk: the block state followed by its
     * block entity's data when there is any ({@link dev.mcb.world.core.BlockEntityData}; a block entity holding
     * data the model cannot carry reads as {@code state{"unsupported":"<what>"}}); air variants read as
     * minecraft:air.
     */
    String get(int x, int y, int z);

    /**
     * Write a canonical full state (block state plus block-entity data, or none) without physics, block
     * updates or events; a block entity already there is replaced.
     */
    void set(int x, int y, int z, String canonicalState);

    /** The block-entity id at a position (chest, sign, ...) or null. */
    String blockEntityAt(int x, int y, int z);

    /**
     * Validate and canonicalize a state text ({@code stone}, {@code oak_stairs[facing=east]}) against
     * the server's registry: every property, sorted, defaults filled in.
     *
     * @throws McbException unsupported_block with a hint
     */
    String canonical(String text);
}
