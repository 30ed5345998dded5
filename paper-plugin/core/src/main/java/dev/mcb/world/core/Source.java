package dev.mcb.world.core;

/** Who changed a block (the event classification of the world protocol). */
public enum Source {
    /** a person placed or broke a block (BlockPlaceEvent, BlockBreakEvent, ...) */
    PLAYER("player"),
    /** fluids, fire, falling blocks, growth, explosions, pistons: no person directly */
    ENVIRONMENT("environment"),
    /** another plugin or an unknown cause that the adapter observed */
    EXTERNAL("external"),
    /** a batch this host applied */
    OURS("ours");

    public final String wire;

    Source(String wire) {
        this.wire = wire;
    }
}
