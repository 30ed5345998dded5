package dev.mcb.world.core;

import dev.mcb.world.core.port.WorldAccess;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Block changes the platform announced but could not describe exactly, settled on the next tick
 * (server thread only). The adapter reports "this position is about to change (or just changed), this
 * was its state before, this is the cause"; {@link #flush()} reads every reported position again at
 * the start of the next tick and records an event only where the state really differs.
 *
 * <p>{@link #reportAround} also watches the six neighbours: their state is read now (only when their
 * chunk is loaded; nothing is ever loaded for this) and re-read on the next tick, so the dependent
 * changes the game makes without an event of their own — the other half of a door or bed, a torch or
 * carpet that pops off, fences, panes, walls and stairs changing shape next to the changed block — are
 * recorded with the same cause. Within a tick the first explicit report for a position wins (it holds
 * the oldest state); an explicit report replaces a neighbour's guessed "before" (the event knows it
 * better, e.g. the replaced state of a block just placed).
 */
final class Observations {
    /** Pending positions kept per tick at most; reports beyond are counted in {@link #dropped()}. */
    static final int MAX_PENDING = 262_144;

    interface Recorder {
        void record(int x, int y, int z, String before, String after, Who who);
    }

    /** Who changed a block: the source, and the player (id, name) or the environment's {@link Cause}. */
    record Who(Source source, String playerId, String playerName, String cause) {
        Who {
            playerId = playerId == null ? "" : playerId;
            playerName = playerName == null ? "" : playerName;
            cause = Cause.of(source, cause);
        }
    }

    private record Pending(int x, int y, int z, String before, Who who, boolean neighbour, int deferred) {
        Pending(int x, int y, int z, String before, Who who, boolean neighbour) {
            this(x, y, z, before, who, neighbour, 0);
        }
    }

    /**
     * A block in motion: a piston's moving block holds {@code minecraft:moving_piston} until its block entity
     * places the final state, two ticks later (progress 0.5 a tick), with {@code level.setBlock} and no event of
     * its own (paper-server/patches/sources/net/minecraft/world/level/block/piston/PistonMovingBlockEntity.java.patch,
     * PistonBaseBlock.java.patch). A position that reads as one is re-read on the next tick, up to
     * {@link #MAX_DEFERRED_TICKS}, so the event records where the block came to rest.
     */
    static boolean inMotion(String state) {
        return state.startsWith("minecraft:moving_piston");
    }

    /** Ticks a position in motion is re-read before its state is recorded as it is. */
    static final int MAX_DEFERRED_TICKS = 20;

    private static final int[][] SIX = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};

    private final WorldAccess world;
    private final Recorder recorder;
    private final int minY;
    private final int maxY;
    private final Map<Long, Pending> pending = new LinkedHashMap<>();
    private long dropped;

    Observations(WorldAccess world, int minY, int maxY, Recorder recorder) {
        this.world = world;
        this.recorder = recorder;
        this.minY = minY;
        this.maxY = maxY;
    }

    /** The position changes for {@code source}; {@code before} is its state before the change. */
    void report(int x, int y, int z, String before, Who who) {
        long k = EventLog.key(x, y, z);
        Pending p = pending.get(k);
        if (p == null || p.neighbour()) {
            // The game reports a block that pops off (a torch, a door's upper half) as its own event with
            // no cause; when it is the neighbour of a change reported with a cause (a player breaking its
            // support, an explosion), that cause stays.
            boolean inherit = p != null && who.source() == Source.ENVIRONMENT
                    && (p.who().source() != Source.ENVIRONMENT || Cause.OTHER.equals(who.cause()));
            put(k, new Pending(x, y, z, BatchExecutor.airNormalize(before), inherit ? p.who() : who, false));
        }
    }

    /** {@link #report} plus the six neighbours, whose current state is their "before". */
    void reportAround(int x, int y, int z, String before, Who who) {
        report(x, y, z, before, who);
        for (int[] d : SIX) {
            int nx = x + d[0];
            int ny = y + d[1];
            int nz = z + d[2];
            long k = EventLog.key(nx, ny, nz);
            if (ny < minY || ny > maxY || pending.containsKey(k) || !world.chunkLoaded(nx >> 4, nz >> 4)) {
                continue;
            }
            put(k, new Pending(nx, ny, nz, BatchExecutor.airNormalize(world.get(nx, ny, nz)), who, true));
        }
    }

    private void put(long k, Pending p) {
        if (pending.size() >= MAX_PENDING && !pending.containsKey(k)) {
            dropped++;
            return;
        }
        pending.put(k, p);
    }

    int pendingCount() {
        return pending.size();
    }

    /** Reports that did not fit in {@link #MAX_PENDING} (their changes are not recorded). */
    long dropped() {
        return dropped;
    }

    /** Re-read every pending position and record the real changes; first thing in every tick. */
    int flush() {
        if (pending.isEmpty()) {
            return 0;
        }
        List<Pending> all = new ArrayList<>(pending.values());
        pending.clear();
        int recorded = 0;
        for (Pending p : all) {
            if (!world.chunkLoaded(p.x() >> 4, p.z() >> 4)) {
                continue; // unloaded since: reading would load it; nothing to compare
            }
            String after = BatchExecutor.airNormalize(world.get(p.x(), p.y(), p.z()));
            if (inMotion(after) && p.deferred() < MAX_DEFERRED_TICKS) {
                // pending was emptied above and nothing reports during a flush: re-arm it for the next tick
                put(EventLog.key(p.x(), p.y(), p.z()), new Pending(p.x(), p.y(), p.z(), p.before(), p.who(),
                        p.neighbour(), p.deferred() + 1));
                continue;
            }
            if (!after.equals(p.before())) {
                recorder.record(p.x(), p.y(), p.z(), p.before(), after, p.who());
                recorded++;
            }
        }
        return recorded;
    }
}
