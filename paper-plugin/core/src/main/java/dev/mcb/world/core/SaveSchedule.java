package dev.mcb.world.core;

/**
 * When a world-save event may be taken as a chunk save (pure rule; the Paper adapter reads the settings).
 *
 * <p>On Paper a {@code WorldSaveEvent} is not a chunk save. The autosave fires it every
 * {@code ticks-per.autosave} ticks (bukkit.yml) while the chunks are written on timers of their own: every
 * loaded chunk sits in an autosave queue and is written when {@code chunks.auto-save-interval} ticks have
 * passed since its last save, at most {@code chunks.max-auto-save-chunks-per-tick} chunks a tick
 * (paper-server/patches/features/0020-Incremental-chunk-and-player-saving.patch: {@code saveIncrementally}
 * fires the event and saves no chunk; 0001-Moonrise-optimisation-patches.patch: {@code ChunkHolderManager#autoSave}).
 * A chunk changed before one event is therefore written before the next one only when its interval is not
 * longer than the period between events and the queue cannot fall behind (every loaded chunk fits in one
 * interval at the per-tick maximum). The plugin's rule — an event marks the writes handed over before the
 * previous event as saved — holds only then; otherwise nothing is marked until the plugin's own
 * {@code save(true)} at disable, and a crash re-checks the writes (HostState, the restart check).
 *
 * @param autosaveTicks     {@code ticks-per.autosave}: the period between world-save events (≤ 0: none)
 * @param chunkIntervalTicks {@code chunks.auto-save-interval} as the server uses it ({@code default} or a
 *                          negative value: {@code autosaveTicks}; 0: chunks are not autosaved)
 * @param maxChunksPerTick  {@code chunks.max-auto-save-chunks-per-tick}
 */
public record SaveSchedule(int autosaveTicks, int chunkIntervalTicks, int maxChunksPerTick) {
    /** Paper's defaults: 6000 ticks, the autosave period, 24 chunks a tick (WorldConfiguration.java l.504-505). */
    public static final SaveSchedule PAPER_DEFAULTS = new SaveSchedule(6000, 6000, 24);

    /**
     * Null when the settings let a world-save event stand for the chunk saves of the period before it;
     * otherwise why not, naming the settings a server owner would change.
     */
    public String distrust() {
        if (autosaveTicks <= 0) {
            return "ticks-per.autosave (bukkit.yml) is " + autosaveTicks + ": the server never autosaves";
        }
        if (chunkIntervalTicks <= 0) {
            return "chunks.auto-save-interval (paper-world-defaults.yml or the world's paper-world.yml) is "
                    + chunkIntervalTicks + ": chunks are not autosaved";
        }
        if (chunkIntervalTicks > autosaveTicks) {
            return "chunks.auto-save-interval (" + chunkIntervalTicks + " ticks) is longer than ticks-per.autosave ("
                    + autosaveTicks + " ticks): a chunk may be written after the next world-save event";
        }
        if (maxChunksPerTick <= 0) {
            return "chunks.max-auto-save-chunks-per-tick is " + maxChunksPerTick + ": no chunk is autosaved";
        }
        return null;
    }

    /**
     * Null when, with {@code loadedChunks} chunks loaded, every one of them can be written within one
     * interval at the per-tick maximum (so the autosave queue cannot fall a period behind); otherwise why not.
     */
    public String distrust(int loadedChunks) {
        String why = distrust();
        if (why != null) {
            return why;
        }
        if ((long) maxChunksPerTick * chunkIntervalTicks < loadedChunks) {
            return loadedChunks + " loaded chunks do not fit in one chunks.auto-save-interval (" + chunkIntervalTicks
                    + " ticks) at chunks.max-auto-save-chunks-per-tick (" + maxChunksPerTick + ")";
        }
        return null;
    }
}
