package dev.mcb.world.core;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.mcb.proto.common.v1.Vec3;
import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.BatchEntry;
import dev.mcb.proto.world.v1.EntryResult;
import dev.mcb.proto.world.v1.SectionRevision;
import dev.mcb.world.core.port.WorldAccess;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The batch executor (ARCHITECTURE §3): compare-and-set per entry, all-or-nothing per batch, read-back,
 * idempotent by batch id, run on the server thread from {@link #tick()}.
 *
 * <p>Tick budget: at most {@link #MAX_BLOCKS_PER_TICK} entries and {@link #BUDGET_NANOS} of the
 * executor's own time per tick, measured with {@link System#nanoTime()}. A batch is never split (it is
 * atomic), so the budget decides how many queued batches run in one tick: the next batch starts only
 * when its predicted cost (a moving average of nanoseconds per position) still fits; the first batch of
 * a tick always runs so the queue makes progress. Under tick pressure (a slow world) fewer batches run
 * per tick, and {@link #recommendedBatchSize()} shrinks so a client can send smaller batches.
 * The pause flag is checked before every batch.
 */
public final class BatchExecutor {
    public static final int MAX_BATCH_ENTRIES = 512;
    public static final int MAX_BATCH_DEPENDENCIES = 4096;
    public static final int MAX_BLOCKS_PER_TICK = 512;
    public static final long BUDGET_NANOS = 5_000_000L;
    public static final int XZ_LIMIT = 29_999_984;
    private static final int MAX_RECORDS = 100_000;
    /** batch_cancel keeps the names of this many operations (the newest), in memory. */
    public static final int MAX_CANCELLED = 4096;

    public record TickStats(long ticks, long busyTicks, long batches, long blocks, long maxOwnNanos,
                            long lastOwnNanos, long totalOwnNanos, int recommendedBatchSize) {
    }

    /** Hook for the core: events for our writes, revision bumps. */
    public interface Listener {
        void written(List<Change> changes, String operationId);
    }

    public record Change(int x, int y, int z, String before, String after) {
    }

    private record Pending(int x, int y, int z, String expected, String desired) {
    }

    private static final class Job {
        final String batchId;
        final String digest;
        final String operationId;
        final List<Pending> entries;
        final List<Pending> deps;
        final CompletableFuture<BatchApplyResult> future = new CompletableFuture<>();
        final AtomicInteger state = new AtomicInteger(); // 0 queued, 1 running, 2 withdrawn
        /** The batch_apply_many request it belongs to, or null (a plain batch_apply). */
        final Sequence sequence;
        /** Set for the replay of a doubtful record: the answer given before the restart. */
        BatchApplyResult original;
        CompletableFuture<Void> durable = CompletableFuture.completedFuture(null);

        Job(String batchId, String digest, String operationId, List<Pending> entries, List<Pending> deps,
            Sequence sequence) {
            this.batchId = batchId;
            this.digest = digest;
            this.operationId = operationId;
            this.entries = entries;
            this.deps = deps;
            this.sequence = sequence;
        }
    }

    /**
     * The batches of one {@code batch_apply_many} request, submitted one after the other. A batch of a
     * sequence runs only in a tick after the one in which the sequence's previous batch ran (each batch in its
     * own tick, under the tick budget, as if sent alone), and right before it starts, on the server thread, it
     * is checked against the operations {@link #cancel} named ({@link NotStarted}: {@code cancelled}).
     */
    public static final class Sequence {
        /** The executor tick in which this sequence's last batch ran (server thread only). */
        private long lastTick = -1;
    }

    /**
     * A batch of a {@link Sequence} that did not start and was not recorded: {@code reason} is
     * {@code cancelled} (its operation was named by {@link #cancel} before it began).
     */
    public static final class NotStarted extends RuntimeException {
        public final String reason;

        NotStarted(String reason) {
            super(reason, null, false, false);
            this.reason = reason;
        }
    }

    /**
     * An answered batch. {@code durable} completes when its record is on disk (answers wait for it);
     * {@code doubtful}: restored after an unclean stop with blocks a world rollback may have undone.
     */
    private record Done(String digest, BatchApplyResult result, boolean doubtful, CompletableFuture<Void> durable) {
    }

    /** Where answers and the pause flag are made durable ({@link HostState}); none: memory only. */
    public interface Durability {
        CompletableFuture<Void> batch(String batchId, String digest, String operationId, BatchApplyResult result,
                                      boolean wroteBlocks);

        CompletableFuture<Void> pause(boolean paused, String reason);
    }

    private volatile Durability durability;
    private final Object pauseLock = new Object();
    private long pauseGeneration; // guarded by pauseLock

    private final WorldAccess world;
    private final java.util.function.LongSupplier clock;
    private final Listener listener;
    private final long budgetNanos;
    private final int maxBlocksPerTick;
    private final ConcurrentLinkedQueue<Job> queue = new ConcurrentLinkedQueue<>();
    private final Map<String, Object> records = new LinkedHashMap<>(); // batchId -> Job | Done
    private volatile boolean paused;
    private volatile String pauseReason = "";
    private volatile boolean writing;
    private double nanosPerPosition = 2_000; // moving average, refined by every batch
    private long tickSeq; // executor ticks so far (server thread)
    /** Operations {@link #cancel} named, oldest first (the last {@link #MAX_CANCELLED} are kept). */
    private final LinkedHashMap<String, Boolean> cancelled = new LinkedHashMap<>();

    private long ticks;
    private long busyTicks;
    private long batches;
    private long blocks;
    private long maxOwnNanos;
    private long lastOwnNanos;
    private long totalOwnNanos;

    public BatchExecutor(WorldAccess world, Listener listener) {
        this(world, listener, BUDGET_NANOS, MAX_BLOCKS_PER_TICK);
    }

    public BatchExecutor(WorldAccess world, Listener listener, long budgetNanos, int maxBlocksPerTick) {
        this(world, listener, budgetNanos, maxBlocksPerTick, System::nanoTime);
    }

    /** {@code clock} is {@link System#nanoTime()} in production; tests pass a simulated clock. */
    public BatchExecutor(WorldAccess world, Listener listener, long budgetNanos, int maxBlocksPerTick,
                         java.util.function.LongSupplier clock) {
        this.clock = clock;
        this.world = world;
        this.listener = listener;
        this.budgetNanos = budgetNanos;
        this.maxBlocksPerTick = maxBlocksPerTick;
    }

    // ---- pause -------------------------------------------------------------------------------------
    public boolean paused() {
        return paused;
    }

    public String pauseReason() {
        return pauseReason;
    }

    /** Pause at once; the future completes when the flag is durable (at once without {@link Durability}). */
    public CompletableFuture<Void> pause(String reason) {
        synchronized (pauseLock) {
            pauseGeneration++;
            pauseReason = reason == null ? "" : reason;
            paused = true;
            Durability d = durability;
            return d == null ? CompletableFuture.completedFuture(null) : d.pause(true, pauseReason);
        }
    }

    /**
     * Resume once "not paused" is durable: writes stay paused when it cannot be stored (a failed state
     * file), and a pause that arrives meanwhile wins (the flag on disk and in memory never disagree).
     */
    public CompletableFuture<Void> resume() {
        synchronized (pauseLock) {
            Durability d = durability;
            if (d == null) {
                paused = false;
                pauseReason = "";
                return CompletableFuture.completedFuture(null);
            }
            long generation = ++pauseGeneration;
            return d.pause(false, "").thenRun(() -> {
                synchronized (pauseLock) {
                    if (pauseGeneration == generation) {
                        paused = false;
                        pauseReason = "";
                    }
                }
            });
        }
    }

    /**
     * Restore what a previous process stored (before the host serves): the pause flag and the idempotency
     * records, then make new answers durable through {@code d}.
     */
    public void restore(boolean wasPaused, String reason, java.util.Collection<HostState.StoredBatch> stored,
                        Durability d) {
        if (wasPaused) {
            pauseReason = reason == null ? "" : reason;
            paused = true;
        }
        synchronized (records) {
            for (HostState.StoredBatch b : stored) {
                records.put(b.batchId(), new Done(b.digest(), b.result(), b.state() == HostState.DOUBTFUL,
                        CompletableFuture.completedFuture(null)));
            }
        }
        this.durability = d;
    }

    /** Pause and fail every queued batch that has not started (a new bridge, /ai stop). */
    public int stopActive(String reason) {
        pause(reason);
        int n = 0;
        Job j;
        while ((j = queue.poll()) != null) {
            if (j.state.compareAndSet(0, 2)) {
                forget(j);
                j.future.completeExceptionally(new McbException(ErrorCode.PAUSED,
                        "writes were stopped before this batch started (" + reason + "); call resume first"));
                n++;
            }
        }
        return n;
    }

    // ---- batch_cancel ---------------------------------------------------------------------------------
    /**
     * No batch of {@code operationId} in a {@link Sequence} starts after this returns (a batch already being
     * written finishes; plain batches are not affected). Kept in memory, the last {@link #MAX_CANCELLED} names.
     */
    public void cancel(String operationId) {
        if (operationId == null || operationId.isEmpty()) {
            throw McbException.invalid("batch_cancel needs operationId (the operation whose batches must not start)");
        }
        String k = cancelKey(operationId);
        synchronized (cancelled) {
            cancelled.remove(k); // named again: the newest
            cancelled.put(k, Boolean.TRUE);
            var it = cancelled.keySet().iterator();
            while (cancelled.size() > MAX_CANCELLED && it.hasNext()) {
                it.next();
                it.remove();
            }
        }
    }

    /** Whether {@link #cancel} named {@code operationId} (among the last {@link #MAX_CANCELLED}); "" never. */
    public boolean cancelled(String operationId) {
        if (operationId == null || operationId.isEmpty()) {
            return false;
        }
        String k = cancelKey(operationId);
        synchronized (cancelled) {
            return cancelled.containsKey(k);
        }
    }

    /** Long names are kept as their SHA-256, so 4,096 of them stay small whatever a caller sends. */
    private static String cancelKey(String operationId) {
        if (operationId.length() <= 128) {
            return operationId;
        }
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(operationId.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True while the executor itself is writing on the server thread (the adapter ignores those events). */
    public boolean writing() {
        return writing;
    }

    // ---- submit (any thread) -------------------------------------------------------------------------
    public CompletableFuture<BatchApplyResult> submit(BatchApplyParams p, int worldEpoch, int minY, int maxY) {
        return submit(p, worldEpoch, minY, maxY, null);
    }

    /**
     * As {@link #submit(BatchApplyParams, int, int, int)}, as a batch of {@code sequence} (null: a plain batch):
     * it runs in a later tick than the sequence's previous batch, and a batch whose operation was cancelled
     * before it starts fails with {@link NotStarted} (nothing written, nothing recorded).
     */
    public CompletableFuture<BatchApplyResult> submit(BatchApplyParams p, int worldEpoch, int minY, int maxY,
                                                      Sequence sequence) {
        if (p.getBatchId().isEmpty() || p.getBatchId().length() > 200) {
            throw McbException.invalid("batchId is required (1..200 characters): it is the batch's idempotency key");
        }
        if (p.getEntriesCount() == 0) {
            throw McbException.invalid("a batch needs at least one entry");
        }
        if (p.getEntriesCount() > MAX_BATCH_ENTRIES) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED,
                    "a batch holds at most " + MAX_BATCH_ENTRIES + " entries, got " + p.getEntriesCount());
        }
        if (p.getDependenciesCount() > MAX_BATCH_DEPENDENCIES) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED,
                    "a batch declares at most " + MAX_BATCH_DEPENDENCIES + " dependencies");
        }
        String digest = digest(p);
        synchronized (records) {
            Object r = records.get(p.getBatchId());
            if (r != null) {
                String d = r instanceof Done done ? done.digest() : ((Job) r).digest;
                if (!d.equals(digest)) {
                    throw McbException.invalid("batch id '" + p.getBatchId() + "' was already used for a different batch; "
                            + "a new batch needs a new id (same id + same content replays the answer)");
                }
                if (r instanceof Done done && !done.doubtful()) {
                    return done.durable().thenApply(v -> done.result().toBuilder().setReplayed(true).build());
                }
                if (r instanceof Job job) {
                    return job.future.thenApply(res -> res.toBuilder().setReplayed(true).build());
                }
                // doubtful: its blocks may have been rolled back with the world; run compare-and-set again below
            }
        }
        if (paused) {
            throw new McbException(ErrorCode.PAUSED, "writes are paused (" + (pauseReason.isEmpty() ? "no reason given"
                    : pauseReason) + "); call resume first");
        }
        if (p.getWorldEpoch() != worldEpoch) {
            JsonObject det = new JsonObject();
            det.addProperty("worldEpoch", worldEpoch);
            throw new McbException(ErrorCode.STALE_SNAPSHOT, "batch is for world epoch " + p.getWorldEpoch()
                    + " but the world is at epoch " + worldEpoch + "; re-read world_info and re-plan", det);
        }
        Set<Long> seen = new HashSet<>();
        List<Pending> entries = new ArrayList<>(p.getEntriesCount());
        int lo = Integer.MAX_VALUE;
        int hi = Integer.MIN_VALUE;
        for (BatchEntry e : p.getEntriesList()) {
            if (!seen.add(EventLog.key(e.getX(), e.getY(), e.getZ()))) {
                throw McbException.invalid("position (" + pos(e) + ") appears twice in the batch");
            }
            checkXz(e.getX(), e.getY(), e.getZ());
            if (e.getExpected().isEmpty() || e.getDesired().isEmpty()) {
                throw McbException.invalid("entry (" + pos(e) + ") needs both expected and desired states");
            }
            entries.add(new Pending(e.getX(), e.getY(), e.getZ(), canonicalExpected(e.getExpected()),
                    canonicalDesired(e.getDesired())));
            lo = Math.min(lo, e.getY());
            hi = Math.max(hi, e.getY());
        }
        List<Pending> deps = new ArrayList<>(p.getDependenciesCount());
        for (BatchEntry d : p.getDependenciesList()) {
            if (d.getExpected().isEmpty()) {
                throw McbException.invalid("dependency (" + pos(d) + ") needs an expected state");
            }
            checkXz(d.getX(), d.getY(), d.getZ());
            deps.add(new Pending(d.getX(), d.getY(), d.getZ(), canonicalExpected(d.getExpected()), null));
            lo = Math.min(lo, d.getY());
            hi = Math.max(hi, d.getY());
        }
        if (lo < minY || hi > maxY) {
            JsonObject det = new JsonObject();
            det.addProperty("minY", minY);
            det.addProperty("maxY", maxY);
            throw new McbException(ErrorCode.OUT_OF_BOUNDS,
                    "y " + lo + ".." + hi + " is outside the world's height " + minY + ".." + maxY, det);
        }
        Job job = new Job(p.getBatchId(), digest, p.getOperationId(), entries, deps, sequence);
        synchronized (records) {
            Object r = records.get(p.getBatchId());
            if (r instanceof Done done && done.doubtful() && done.digest().equals(digest)) {
                job.original = done.result();
            } else if (r != null) { // raced with the same id: answer as a replay
                return submitReplay(r, digest, p.getBatchId());
            }
            records.put(p.getBatchId(), job);
            trimRecords();
        }
        queue.add(job);
        return job.future;
    }

    private CompletableFuture<BatchApplyResult> submitReplay(Object r, String digest, String id) {
        String d = r instanceof Done done ? done.digest() : ((Job) r).digest;
        if (!d.equals(digest)) {
            throw McbException.invalid("batch id '" + id + "' was already used for a different batch");
        }
        CompletableFuture<BatchApplyResult> f = r instanceof Done done
                ? done.durable().thenApply(v -> done.result()) : ((Job) r).future;
        return f.thenApply(res -> res.toBuilder().setReplayed(true).build());
    }

    /** Withdraw a batch that has not started yet (the caller's time limit ran out). */
    public boolean withdraw(CompletableFuture<BatchApplyResult> future) {
        for (Job j : queue) {
            if (j.future == future && j.state.compareAndSet(0, 2)) {
                queue.remove(j);
                forget(j);
                j.future.completeExceptionally(new McbException(ErrorCode.BUSY,
                        "the server did not start this batch in time (ticks are slow or the queue is long); retry with the same batchId"));
                return true;
            }
        }
        return false;
    }

    public int queued() {
        return queue.size();
    }

    private void forget(Job j) {
        synchronized (records) {
            if (records.get(j.batchId) == j) {
                if (j.original != null) { // a re-run that did not happen: the record stays doubtful
                    records.put(j.batchId, new Done(j.digest, j.original, true, CompletableFuture.completedFuture(null)));
                } else {
                    records.remove(j.batchId);
                }
            }
        }
    }

    private void trimRecords() {
        var it = records.entrySet().iterator();
        while (records.size() > MAX_RECORDS && it.hasNext()) {
            if (it.next().getValue() instanceof Done) {
                it.remove();
            }
        }
    }

    private String canonicalDesired(String text) {
        return canonicalFull(world, text);
    }

    /** A full state (block state plus block-entity data, {@link BlockEntityData}) in canonical form. */
    static String canonicalFull(WorldAccess world, String text) {
        int i = BlockEntityData.split(text);
        String state = airNormalize(world.canonical(i < 0 ? text : text.substring(0, i)));
        return BlockEntityData.canonicalFull(state, i < 0 ? "" : text.substring(i));
    }

    private String canonicalExpected(String text) {
        try {
            return canonicalDesired(text);
        } catch (McbException e) {
            return text.strip();
        }
    }

    static String airNormalize(String s) {
        return s.equals("minecraft:cave_air") || s.equals("minecraft:void_air") ? "minecraft:air" : s;
    }

    private static void checkXz(int x, int y, int z) {
        if (Math.abs((long) x) > XZ_LIMIT || Math.abs((long) z) > XZ_LIMIT) {
            throw new McbException(ErrorCode.OUT_OF_BOUNDS, "(" + x + "," + y + "," + z + ") is beyond the world border");
        }
    }

    private static String pos(BatchEntry e) {
        return e.getX() + "," + e.getY() + "," + e.getZ();
    }

    static String digest(BatchApplyParams p) {
        try {
            String text = JsonFormat.printer().omittingInsignificantWhitespace().sortingMapKeys()
                    .print(p.toBuilder().clearBatchId().build());
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (InvalidProtocolBufferException | NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- the tick (server thread) ----------------------------------------------------------------------
    /** Run queued batches within this tick's budget. Call once per server tick on the server thread. */
    public void tick() {
        tick(budgetNanos);
    }

    /**
     * Run queued batches within {@code budget} nanoseconds of this tick (the core's share of the tick budget
     * it splits with the reads); nothing when {@code budget <= 0}.
     */
    public void tick(long budget) {
        long start = clock.getAsLong();
        int blocksThisTick = 0;
        int ran = 0;
        tickSeq++;
        while (true) {
            Job j = queue.peek();
            if (j == null) {
                break;
            }
            if (j.sequence != null && j.sequence.lastTick >= tickSeq && j.state.get() == 0) {
                break; // the previous batch of its request ran in this tick: it waits for the next one
            }
            int n = j.entries.size();
            long elapsed = clock.getAsLong() - start;
            if (budget <= 0 || ran > 0 && (blocksThisTick + n > maxBlocksPerTick || elapsed >= budget
                    || elapsed + predict(j) > budget)) {
                break;
            }
            queue.poll();
            if (!j.state.compareAndSet(0, 1)) {
                continue;
            }
            RuntimeException refused = stopped(j);
            if (refused != null) { // stopped before it began: nothing read or written, not counted as run
                forget(j);
                j.future.completeExceptionally(refused);
                continue;
            }
            if (j.sequence != null) {
                j.sequence.lastTick = tickSeq;
            }
            long t0 = clock.getAsLong();
            run(j);
            long dt = clock.getAsLong() - t0;
            int positions = Math.max(1, n + j.deps.size());
            double observed = (double) dt / positions;
            // rise at once when the world gets slower, decay slowly when it gets faster
            nanosPerPosition = observed > nanosPerPosition ? observed : nanosPerPosition * 0.8 + observed * 0.2;
            blocksThisTick += n;
            ran++;
        }
        long own = clock.getAsLong() - start;
        synchronized (this) {
            ticks++;
            if (ran > 0) {
                busyTicks++;
                batches += ran;
                blocks += blocksThisTick;
                maxOwnNanos = Math.max(maxOwnNanos, own);
                lastOwnNanos = own;
                totalOwnNanos += own;
            }
        }
    }

    private long predict(Job j) {
        return (long) (nanosPerPosition * (j.entries.size() + j.deps.size()));
    }

    /** How many entries fit comfortably (half the budget) into one tick at the measured speed. */
    public int recommendedBatchSize() {
        long fit = (long) ((budgetNanos / 2.0) / Math.max(1.0, nanosPerPosition));
        return (int) Math.max(16, Math.min(MAX_BATCH_ENTRIES, fit));
    }

    public synchronized TickStats stats() {
        return new TickStats(ticks, busyTicks, batches, blocks, maxOwnNanos, lastOwnNanos, totalOwnNanos,
                recommendedBatchSize());
    }

    private void run(Job j) {
        try {
            BatchApplyResult r = execute(j);
            boolean replay = j.original != null && r.getStatus().equals("applied");
            BatchApplyResult answer = replay ? r.toBuilder().setReplayed(true).build() : r;
            j.durable.whenComplete((v, err) -> {
                if (err == null) {
                    j.future.complete(answer);
                } else {
                    j.future.completeExceptionally(new McbException(ErrorCode.INTERNAL, "batch " + j.batchId
                            + " was " + r.getStatus() + " in the live world, but its record could not be written to disk ("
                            + (err.getCause() != null ? err.getCause().getMessage() : err.getMessage())
                            + "); writes are paused. Check the world and the server's disk, then resume"));
                }
            });
        } catch (McbException e) {
            forget(j);
            j.future.completeExceptionally(e);
        } catch (RuntimeException e) {
            forget(j);
            j.future.completeExceptionally(new McbException(ErrorCode.INTERNAL,
                    "internal error while applying batch (" + e.getClass().getSimpleName() + "); see the server log"));
        }
    }

    /**
     * Checked right before a batch starts, on the server thread: the pause flag (every batch), and for a batch of
     * a {@link Sequence} the operations {@link #cancel} named. Null: it may start.
     */
    private RuntimeException stopped(Job j) {
        if (paused) {
            return new McbException(ErrorCode.PAUSED, "writes were paused before this batch started (" + pauseReason
                    + "); call resume first");
        }
        if (j.sequence != null && cancelled(j.operationId)) {
            return new NotStarted("cancelled");
        }
        return null;
    }

    private BatchApplyResult execute(Job j) {
        // chunks: never generate, never ask the disk here (server thread). The batch's chunks were held before
        // it was queued, so they are loaded; one that is not was reported missing by the hold.
        Set<Long> checked = new HashSet<>();
        List<int[]> missing = new ArrayList<>();
        for (List<Pending> list : List.of(j.entries, j.deps)) {
            for (Pending e : list) {
                int cx = e.x() >> 4;
                int cz = e.z() >> 4;
                if (checked.add(((long) cx << 32) ^ (cz & 0xFFFFFFFFL)) && !world.chunkLoaded(cx, cz)) {
                    missing.add(new int[] {cx, cz});
                }
            }
        }
        if (!missing.isEmpty()) {
            throw missingChunks(missing);
        }
        List<EntryResult> problems = new ArrayList<>();
        List<Vec3> already = new ArrayList<>();
        List<Change> writes = new ArrayList<>();
        for (Pending e : j.entries) {
            String current = airNormalize(world.get(e.x(), e.y(), e.z()));
            if (current.equals(e.desired())) {
                already.add(Vec3.newBuilder().setX(e.x()).setY(e.y()).setZ(e.z()).build());
            } else if (current.equals(e.expected())) {
                if (current.contains("{\"unsupported\":")) { // data the model cannot carry would be lost
                    JsonObject det = new JsonObject();
                    JsonArray p = new JsonArray();
                    p.add(e.x());
                    p.add(e.y());
                    p.add(e.z());
                    det.add("pos", p);
                    throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "(" + e.x() + "," + e.y() + "," + e.z()
                            + ") holds a block entity with data this host cannot carry ("
                            + BlockEntityData.data(current) + "); it does not overwrite it", det);
                }
                writes.add(new Change(e.x(), e.y(), e.z(), current, e.desired()));
            } else {
                problems.add(EntryResult.newBuilder().setX(e.x()).setY(e.y()).setZ(e.z()).setResult("conflict")
                        .setCurrent(current).build());
            }
        }
        for (Pending d : j.deps) {
            String current = airNormalize(world.get(d.x(), d.y(), d.z()));
            if (!current.equals(d.expected())) {
                problems.add(EntryResult.newBuilder().setX(d.x()).setY(d.y()).setZ(d.z())
                        .setResult("dependency_changed").setCurrent(current).build());
            }
        }
        BatchApplyResult.Builder res = BatchApplyResult.newBuilder().setBatchId(j.batchId).setAlready(already.size())
                .addAllAlreadyPositions(already);
        if (!problems.isEmpty()) {
            res.setStatus("conflict").setConflicts(problems.size()).addAllProblems(problems)
                    .setAppliedAtMillis(System.currentTimeMillis());
            return finish(j, res.build());
        }
        writeAll(j.batchId, writes);
        res.setStatus("applied").setWritten(writes.size()).setAppliedAtMillis(System.currentTimeMillis());
        if (!writes.isEmpty()) {
            Map<Long, int[]> sections = new TreeMap<>();
            for (Change c : writes) {
                int cx = c.x() >> 4;
                int sy = c.y() >> 4;
                int cz = c.z() >> 4;
                sections.putIfAbsent(SectionRevisions.key(cx, sy, cz), new int[] {cx, sy, cz});
            }
            if (listener != null) {
                listener.written(writes, j.operationId);
            }
            for (int[] s : sections.values()) {
                res.addRevisions(SectionRevision.newBuilder().setCx(s[0]).setSy(s[1]).setCz(s[2])
                        .setRevision(revisionOf == null ? 0 : revisionOf.get(s[0], s[1], s[2])).build());
            }
        }
        return finish(j, j.original == null ? res.build() : merge(j.original, writes, j.entries.size(), res));
    }

    private SectionRevisions revisionOf;

    /** Where the core keeps section revisions (bumped by the listener); used to report them. */
    public void revisions(SectionRevisions r) {
        this.revisionOf = r;
    }

    private void writeAll(String batchId, List<Change> writes) {
        int done = 0;
        writing = true;
        try {
            for (Change c : writes) {
                world.set(c.x(), c.y(), c.z(), c.after());
                done++;
            }
            for (Change c : writes) {
                String back = airNormalize(world.get(c.x(), c.y(), c.z()));
                if (!back.equals(c.after())) {
                    throw new IllegalStateException("read-back of (" + c.x() + "," + c.y() + "," + c.z() + ") gave "
                            + back + " instead of " + c.after());
                }
            }
        } catch (RuntimeException e) {
            // all-or-nothing: put back what this batch changed
            for (int i = 0; i < Math.min(done, writes.size()); i++) {
                Change c = writes.get(i);
                try {
                    world.set(c.x(), c.y(), c.z(), c.before());
                } catch (RuntimeException ignored) {
                    // reported below; the event log's caller sees the failure
                }
            }
            throw new McbException(ErrorCode.INTERNAL, "batch " + batchId + " failed while writing and was rolled back: "
                    + e.getMessage());
        } finally {
            writing = false;
        }
    }

    private BatchApplyResult finish(Job j, BatchApplyResult r) {
        // what this run wrote again is news for this caller only; a later replay writes nothing
        BatchApplyResult stored = r.getRewrittenAfterRestart() == 0 ? r : r.toBuilder().clearRewrittenAfterRestart().build();
        Durability d = durability;
        if (d != null) {
            // blocks that survived a restart came from the saved world: only this process's writes need a save
            boolean wrote = j.original == null ? r.getWritten() > 0 : r.getRewrittenAfterRestart() > 0;
            j.durable = d.batch(j.batchId, j.digest, j.operationId, stored, wrote);
        }
        synchronized (records) {
            records.put(j.batchId, new Done(j.digest, stored, false, j.durable));
        }
        return r;
    }

    /**
     * The answer of a doubtful batch's re-run (all of its entries now hold their desired state): the original
     * answer, except that an entry this run wrote is ours even if the original found it already in place.
     */
    private static BatchApplyResult merge(BatchApplyResult original, List<Change> writes, int entries,
                                          BatchApplyResult.Builder now) {
        Set<Long> wroteNow = new HashSet<>();
        for (Change c : writes) {
            wroteNow.add(EventLog.key(c.x(), c.y(), c.z()));
        }
        List<Vec3> already = new ArrayList<>();
        for (Vec3 v : original.getAlreadyPositionsList()) {
            if (!wroteNow.contains(EventLog.key(v.getX(), v.getY(), v.getZ()))) {
                already.add(v);
            }
        }
        BatchApplyResult.Builder b = original.toBuilder().clearAlreadyPositions().addAllAlreadyPositions(already)
                .setAlready(already.size()).setWritten(entries - already.size())
                .setRewrittenAfterRestart(writes.size()).setReplayed(false);
        if (!writes.isEmpty()) {
            b.clearRevisions().addAllRevisions(now.getRevisionsList());
        }
        return b.build();
    }

    static McbException missingChunks(List<int[]> missing) {
        JsonObject det = new JsonObject();
        JsonArray arr = new JsonArray();
        for (int i = 0; i < Math.min(64, missing.size()); i++) {
            JsonArray c = new JsonArray();
            c.add(missing.get(i)[0]);
            c.add(missing.get(i)[1]);
            arr.add(c);
        }
        det.add("missingChunks", arr);
        det.addProperty("missingCount", missing.size());
        int[] f = missing.get(0);
        return new McbException(ErrorCode.NOT_FOUND, missing.size() + " chunk(s) do not exist in the world (never "
                + "generated), e.g. (" + f[0] + "," + f[1] + "); the host never generates chunks", det);
    }
}
