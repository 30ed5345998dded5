package dev.mcb.world.core.port;

import dev.mcb.world.core.McbException;

/**
 * The world, as the core sees it. Block states are canonical strings
 * ({@code minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]}).
 * {@link #get}, {@link #set}, {@link #chunkExists} and {@link #blockEntityAt} are called on the
 * server thread only (through {@link Scheduler}); {@link #canonical} may be called from any thread.
 */
public interface WorldAccess {
    WorldDescriptor describe();

    /** True when the chunk exists (generated); never generates it. */
    boolean chunkExists(int cx, int cz);

    /** The canonical state at a position in an existing chunk; air variants read as minecraft:air. */
    String get(int x, int y, int z);

    /** Write a canonical state without physics, block updates or events. */
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
