package dev.mcb.world.core;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.RestartInfo;
import dev.mcb.world.core.port.WorldAccess;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * What the Java world host keeps across restarts, in its data folder (Paper: the plugin's folder; the test
 * host: {@code MCB_HOST_DATA_DIR}): the pause flag, the idempotency records of batches and the tail of the
 * event log, in {@code state.log} ({@link RecordLog}), plus the marker file {@code running}, written at
 * start and removed at a clean stop (so its presence at start means the previous process died).
 *
 * <p><b>What is on disk when.</b> A batch's answer (and the events of its writes) is fsynced before the
 * answer is given ({@link #batch}); the pause flag before {@code pause}/{@code resume} answer. Observed
 * events are written within a second (or with the next fsync). The blocks themselves are the game's: they
 * reach disk when the world is saved. The platform reports saves with {@link #saveMark()} / {@link
 * #saved(long)}: every record enqueued before the mark is covered by that save.
 *
 * <p><b>Restart rules</b> (at {@link #open}):
 * <ul>
 * <li>a batch that wrote blocks and is not covered by a completed save is <i>doubtful</i> (its blocks may
 *     have been rolled back with the world): a replay of its id runs compare-and-set again (surviving blocks
 *     count as ours, lost ones are written again, a changed one is a conflict) — {@link BatchExecutor}.
 *     Doubtful stays sticky until such a replay settles it;</li>
 * <li>the event log keeps its identity (cursors stay valid) only after a clean stop of a server that kept
 *     observing until it stopped, with every event covered by a save; otherwise a new identity starts and
 *     old cursors answer {@code resyncRequired};</li>
 * <li>our writes not covered by a save are re-read at start ({@link #verifyRestart}) and the rolled-back
 *     ones reported ({@link #restartInfo()}).</li>
 * </ul>
 * A damaged state file (not a torn tail, which {@link RecordLog} repairs) is moved aside; the host starts
 * with no records, paused, and says so in {@code RestartInfo.stateProblem}.
 *
 * <p>Records: {@code HEADER(logId, seqBase, revisionBase, savedMark, lastSaveMs)} first, then {@code
 * PAUSE}, {@code BATCH(enq, state, id, digest, operation, result)}, {@code EVENTS(enq, events…)}, {@code
 * SAVED(mark, at)}, {@code STOP(observationContinues, revisionHigh, at)}. {@code enq} numbers every
 * record in the order it was handed over; {@code SAVED(mark)} covers {@code enq ≤ mark}. At every start
 * and whenever the file exceeds its size limit the file is rewritten as one snapshot.
 */
public final class HostState implements AutoCloseable, BatchExecutor.Durability {
    public static final String LOG = "state.log";
    public static final String MARKER = "running";
    public static final int DEFAULT_EVENT_TAIL = 100_000;
    public static final int DEFAULT_MAX_BATCHES = 20_000;
    public static final long DEFAULT_COMPACT_BYTES = 32L << 20;
    static final int MAX_AFFECTED = 100;

    private static final byte HEADER = 1;
    private static final byte PAUSE = 2;
    private static final byte BATCH = 3;
    private static final byte EVENTS = 4;
    private static final byte SAVED = 5;
    private static final byte STOP = 6;
    private static final byte EVENTS2 = 7; // EVENTS with each event's player name and cause (issue 32)

    /** Batch record states. */
    public static final byte CONFIRMED = 0; // wrote nothing, or covered by a save
    public static final byte NEEDS_SAVE = 1; // wrote blocks; the next completed save covers it
    public static final byte DOUBTFUL = 2; // wrote blocks, then the process died before a save covered it

    /** An idempotency record as kept on disk. */
    public record StoredBatch(String batchId, String digest, String operationId, BatchApplyResult result, byte state,
                              long enq) {
    }

    /** One of our block writes not covered by a save when the previous process stopped. */
    public record UnsavedWrite(int x, int y, int z, String before, String after, String operationId) {
    }

    private record Ev(EventLog.Event event, long enq) {
    }

    // ---- restored at open --------------------------------------------------------------------------
    private final Path dir;
    private final String logId;
    private final long seqBase;
    private final long revisionBase;
    private final List<EventLog.Event> tail;
    private final boolean paused;
    private final String pauseReason;
    private final List<StoredBatch> restored;
    private final List<UnsavedWrite> unsaved;
    private final RestartInfo.Builder info;

    // ---- the writer (its own thread owns log and the model below) ---------------------------------------
    private final RecordLog log;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final int eventTail;
    private final int maxBatches;
    private final long compactBytes;
    private long compactedSize; // the file's size after the last rewrite (writer thread only)
    private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
    private final AtomicLong enq = new AtomicLong(1);
    private final Thread writer;
    private volatile IOException failure;
    private volatile Consumer<String> onFailure = m -> { };
    private volatile boolean closed;
    private String modelLogId;
    private long modelSeq;
    private long modelRevisionBase;
    private boolean modelPaused;
    private String modelReason = "";
    private final LinkedHashMap<String, StoredBatch> modelBatches = new LinkedHashMap<>();
    private final ArrayDeque<Ev> modelEvents = new ArrayDeque<>();
    private long savedMark;
    private long lastSaveMs;

    private sealed interface Item permits EventItem, BatchItem, PauseItem, SavedItem, StopItem, SyncItem {
    }

    private record EventItem(EventLog.Event event, long enq) implements Item {
    }

    private record BatchItem(StoredBatch batch, CompletableFuture<Void> done) implements Item {
    }

    private record PauseItem(boolean paused, String reason, long enq, CompletableFuture<Void> done) implements Item {
    }

    private record SavedItem(long mark, long atMillis) implements Item {
    }

    private record StopItem(boolean observationContinues, long revisionHigh, CompletableFuture<Void> done)
            implements Item {
    }

    private record SyncItem(CompletableFuture<Void> done) implements Item {
    }

    private record Loaded(String logId, long seqBase, long revisionBase, long savedMark, long lastSaveMs,
                          boolean paused, String reason, LinkedHashMap<String, StoredBatch> batches, List<Ev> events,
                          boolean stopped, boolean observationContinues, long revisionHigh) {
    }

    public static HostState open(Path dir) throws IOException {
        return open(dir, DEFAULT_EVENT_TAIL, DEFAULT_MAX_BATCHES, DEFAULT_COMPACT_BYTES);
    }

    /**
     * Open (or create) the state in {@code dir}, apply the restart rules, rewrite the file as a snapshot and
     * write the {@code running} marker. Refuses ({@link IOException}) when another process holds the folder.
     */
    public static HostState open(Path dir, int eventTail, int maxBatches, long compactBytes) throws IOException {
        Files.createDirectories(dir);
        FileChannel lc = FileChannel.open(dir.resolve("state.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lk;
        try {
            lk = lc.tryLock();
        } catch (java.nio.channels.OverlappingFileLockException e) {
            lk = null; // held by this JVM
        } catch (IOException | RuntimeException e) {
            lc.close();
            throw e;
        }
        if (lk == null) {
            lc.close();
            throw new IOException("another world host is using " + dir + " (state.lock is held)");
        }
        try {
            return new HostState(dir, lc, lk, eventTail, maxBatches, compactBytes);
        } catch (IOException | RuntimeException e) {
            lk.release();
            lc.close();
            throw e;
        }
    }

    private HostState(Path dir, FileChannel lc, FileLock lk, int eventTail, int maxBatches, long compactBytes)
            throws IOException {
        this.dir = dir;
        this.lockChannel = lc;
        this.lock = lk;
        this.eventTail = Math.max(0, eventTail);
        this.maxBatches = Math.max(1, maxBatches);
        this.compactBytes = compactBytes;
        Path file = dir.resolve(LOG);
        Path marker = dir.resolve(MARKER);
        boolean existed = Files.exists(file) && Files.size(file) > RecordLog.MAGIC.length;
        boolean markerPresent = Files.exists(marker);
        this.info = RestartInfo.newBuilder();
        RecordLog.Opened opened;
        Loaded l;
        String problem = "";
        try {
            opened = RecordLog.open(file);
            l = parse(opened.records());
        } catch (RecordLog.Corrupt | CorruptState e) {
            Path aside = file.resolveSibling(LOG + ".corrupt-" + System.currentTimeMillis());
            Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
            problem = "the state file was damaged (" + e.getMessage() + "); it was moved to " + aside.getFileName()
                    + ". Idempotency records and the event tail were lost; writes are paused: check the world, then resume";
            opened = RecordLog.open(file);
            l = null;
        }
        this.log = opened.log();
        this.repairNote = opened.tornBackup() == null ? "" : "cut a torn tail of " + opened.tornBytes()
                + " bytes off " + LOG + " (a crash during an append; copy in " + opened.tornBackup().getFileName() + ")";
        String previous = !existed && !markerPresent ? "none" : markerPresent || l == null || !l.stopped() ? "unclean" : "clean";
        info.setPreviousStop(previous).setStateProblem(problem);
        List<Ev> events = l == null ? List.of() : l.events();
        long mark = l == null ? 0 : l.savedMark();
        boolean allEventsSaved = true;
        List<UnsavedWrite> uw = new ArrayList<>();
        for (Ev e : events) {
            if (e.enq() > mark) {
                allEventsSaved = false;
                EventLog.Event ev = e.event();
                if (ev.source() == Source.OURS) {
                    uw.add(new UnsavedWrite(ev.x(), ev.y(), ev.z(), ev.before(), ev.after(), ev.operationId()));
                }
            }
        }
        this.unsaved = uw;
        LinkedHashMap<String, StoredBatch> batches = new LinkedHashMap<>();
        int doubtful = 0;
        Set<String> affected = new LinkedHashSet<>();
        if (l != null) {
            for (StoredBatch b : l.batches().values()) {
                byte st = b.state();
                if (st == NEEDS_SAVE) {
                    st = b.enq() <= mark ? CONFIRMED : DOUBTFUL;
                }
                if (st == DOUBTFUL) {
                    doubtful++;
                    if (!b.operationId().isEmpty()) {
                        affected.add(b.operationId());
                    }
                }
                batches.put(b.batchId(), new StoredBatch(b.batchId(), b.digest(), b.operationId(), b.result(), st, 0));
            }
        }
        this.restored = List.copyOf(batches.values());
        boolean continues = l != null && previous.equals("clean") && l.observationContinues() && allEventsSaved;
        if (continues) {
            this.logId = l.logId();
            List<EventLog.Event> all = events.stream().map(Ev::event).toList();
            this.tail = all.subList(Math.max(0, all.size() - this.eventTail), all.size());
            this.seqBase = l.seqBase();
            this.revisionBase = l.revisionHigh();
        } else {
            this.logId = newId();
            this.tail = List.of();
            this.seqBase = 0;
            this.revisionBase = 0;
        }
        this.paused = l == null ? !problem.isEmpty() : l.paused();
        this.pauseReason = l == null ? (problem.isEmpty() ? "" : "the state file was damaged; see world_info.lastRestart")
                : l.reason();
        info.setEventsContinue(continues).setLastSaveAtMillis(l == null ? 0 : l.lastSaveMs())
                .setDoubtfulBatches(doubtful).setUnsavedWrites(uw.size()).setWritesChecked(uw.isEmpty());
        affected.stream().limit(MAX_AFFECTED).forEach(info::addAffectedOperationIds);
        // the model the writer continues from, written as the first snapshot of this process
        modelLogId = logId;
        modelSeq = continues ? Math.max(seqBase, tail.isEmpty() ? 0 : tail.get(tail.size() - 1).seq()) : 0;
        modelRevisionBase = revisionBase;
        modelPaused = paused;
        modelReason = pauseReason;
        modelBatches.putAll(batches);
        for (EventLog.Event e : tail) {
            modelEvents.add(new Ev(e, 0));
        }
        savedMark = 0;
        lastSaveMs = l == null ? 0 : l.lastSaveMs();
        log.rewrite(snapshot());
        compactedSize = log.size();
        Files.writeString(marker, ProcessHandle.current().pid() + " " + System.currentTimeMillis() + "\n",
                StandardCharsets.UTF_8);
        try (FileChannel m = FileChannel.open(marker, StandardOpenOption.WRITE)) {
            m.force(true);
        }
        RecordLog.fsyncDir(marker);
        writer = new Thread(this::writeLoop, "mcb-state-writer");
        writer.setDaemon(true);
        writer.start();
    }

    private final String repairNote;

    /** What opening repaired (a torn tail cut off), for the log; "" when nothing. */
    public String repairNote() {
        return repairNote;
    }

    private static String newId() {
        byte[] r = new byte[8];
        new SecureRandom().nextBytes(r);
        return HexFormat.of().formatHex(r);
    }

    // ---- what was restored -----------------------------------------------------------------------------
    /** The event log's identity: kept across a clean restart (cursors stay valid), new otherwise. */
    public String logId() {
        return logId;
    }

    public long seqBase() {
        return seqBase;
    }

    /** Section revisions continue above this value when the identity is kept (0 otherwise). */
    public long revisionBase() {
        return revisionBase;
    }

    public List<EventLog.Event> tail() {
        return tail;
    }

    public boolean paused() {
        return paused;
    }

    public String pauseReason() {
        return pauseReason;
    }

    public Collection<StoredBatch> batches() {
        return restored;
    }

    public List<UnsavedWrite> unsavedWrites() {
        return unsaved;
    }

    public Path dir() {
        return dir;
    }

    /** Called (once, from the writer thread) when the state can no longer be written. */
    public void onFailure(Consumer<String> f) {
        this.onFailure = f;
    }

    /**
     * After an unclean stop, the writes to re-read: our latest write per position made after the last save
     * (empty after a clean stop). Read them (WorldHostCore#verifyRestart: chunks held off the server thread,
     * positions read in budgeted slices) and hand the states to {@link #restartChecked}.
     */
    public synchronized List<UnsavedWrite> restartChecks() {
        Map<Long, UnsavedWrite> latest = new LinkedHashMap<>();
        for (UnsavedWrite w : unsaved) {
            latest.put(EventLog.key(w.x(), w.y(), w.z()), w);
        }
        return List.copyOf(latest.values());
    }

    /**
     * The states now of {@link #restartChecks()}' positions, in that order (null: the chunk does not exist):
     * counts the writes that no longer hold what we wrote and the operations they belong to.
     */
    public synchronized void restartChecked(List<UnsavedWrite> checks, String[] now) {
        Map<Long, Set<String>> ops = new HashMap<>();
        for (UnsavedWrite w : unsaved) {
            if (!w.operationId().isEmpty()) {
                ops.computeIfAbsent(EventLog.key(w.x(), w.y(), w.z()), x -> new LinkedHashSet<>()).add(w.operationId());
            }
        }
        int lost = 0;
        Set<String> affected = new LinkedHashSet<>(info.getAffectedOperationIdsList());
        for (int i = 0; i < checks.size(); i++) {
            UnsavedWrite w = checks.get(i);
            if (now[i] == null || !now[i].equals(w.after())) {
                lost++;
                affected.addAll(ops.getOrDefault(EventLog.key(w.x(), w.y(), w.z()), Set.of()));
            }
        }
        info.setLostWrites(lost).setWritesChecked(true).clearAffectedOperationIds();
        affected.stream().limit(MAX_AFFECTED).forEach(info::addAffectedOperationIds);
    }

    /**
     * {@link #restartChecks()} read and recorded in one go, for in-memory worlds whose chunks are always
     * loaded (the test host before its tick thread starts; unit tests). Positions whose chunk does not exist
     * count as lost.
     */
    public void verifyRestart(WorldAccess world) {
        List<UnsavedWrite> checks = restartChecks();
        String[] now = new String[checks.size()];
        for (int i = 0; i < now.length; i++) {
            UnsavedWrite w = checks.get(i);
            try {
                now[i] = world.chunkExists(w.x() >> 4, w.z() >> 4) ? BatchExecutor.airNormalize(world.get(w.x(), w.y(), w.z()))
                        : null;
            } catch (RuntimeException ex) {
                now[i] = null;
            }
        }
        restartChecked(checks, now);
    }

    public synchronized RestartInfo restartInfo() {
        return info.build();
    }

    /** Text for the event log's resync reason after an unclean restart ("" after a clean one). */
    public synchronized String restartNote() {
        RestartInfo i = info.build();
        if (!i.getPreviousStop().equals("unclean") && i.getStateProblem().isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("The previous world-host process stopped without a clean stop (crash, "
                + "kill): changes after the last world save (");
        b.append(i.getLastSaveAtMillis() > 0 ? java.time.Instant.ofEpochMilli(i.getLastSaveAtMillis()).toString() : "none known")
                .append(") may have been rolled back with the world: ");
        if (i.getWritesChecked()) {
            b.append(i.getLostWrites()).append(" of ").append(i.getUnsavedWrites())
                    .append(" block writes of ours made after that save were lost");
        } else {
            b.append(i.getUnsavedWrites()).append(" block writes of ours were made after that save (being checked)");
        }
        if (i.getAffectedOperationIdsCount() > 0) {
            b.append(" (operations ").append(String.join(", ", i.getAffectedOperationIdsList())).append(')');
        }
        b.append("; see world_info.lastRestart.");
        if (!i.getStateProblem().isEmpty()) {
            b.append(' ').append(i.getStateProblem());
        }
        return b.toString();
    }

    // ---- writing (any thread) -------------------------------------------------------------------------
    /** Everything handed over so far; pass it to {@link #saved} once a world save that began now completed. */
    public long saveMark() {
        return enq.get() - 1;
    }

    /** A world save completed that covers everything handed over up to {@code mark}. */
    public void saved(long mark) {
        offer(new SavedItem(mark, System.currentTimeMillis()));
    }

    /** An event was recorded (not waited for; the next fsync or at most a second later). */
    public void event(EventLog.Event e) {
        offer(new EventItem(e, enq.getAndIncrement()));
    }

    /** A batch was answered: completes when its record (and every event before it) is on disk. */
    @Override
    public CompletableFuture<Void> batch(String batchId, String digest, String operationId, BatchApplyResult result,
                                         boolean wroteBlocks) {
        StoredBatch b = new StoredBatch(batchId, digest, operationId == null ? "" : operationId,
                result.toBuilder().setReplayed(false).build(), wroteBlocks ? NEEDS_SAVE : CONFIRMED,
                enq.getAndIncrement());
        CompletableFuture<Void> f = new CompletableFuture<>();
        offer(new BatchItem(b, f));
        return f;
    }

    /** The pause flag changed: completes when it is on disk. */
    @Override
    public CompletableFuture<Void> pause(boolean paused, String reason) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        offer(new PauseItem(paused, reason == null ? "" : reason, enq.getAndIncrement(), f));
        return f;
    }

    /** Completes when everything handed over so far is on disk. */
    public CompletableFuture<Void> sync() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        offer(new SyncItem(f));
        return f;
    }

    private void offer(Item it) {
        IOException fail = failure;
        if (fail != null || closed) {
            CompletableFuture<Void> f = futureOf(it);
            if (f != null) {
                f.completeExceptionally(fail != null ? fail : new IOException("the state store is closed"));
            }
            return;
        }
        queue.add(it);
    }

    private static CompletableFuture<Void> futureOf(Item it) {
        return switch (it) {
            case BatchItem b -> b.done();
            case PauseItem p -> p.done();
            case StopItem s -> s.done();
            case SyncItem s -> s.done();
            default -> null;
        };
    }

    /**
     * Clean stop: write {@code STOP} and fsync, then remove the marker. Call after the world's final save
     * was reported with {@link #saved}. {@code observationContinues}: the server is stopping (nothing
     * changes the world unobserved until the next start); false when only the plugin is disabled.
     */
    public void close(boolean observationContinues, long revisionHigh) throws IOException {
        if (closed) {
            return;
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        offer(new StopItem(observationContinues, revisionHigh, f));
        closed = true;
        try {
            f.get(30, TimeUnit.SECONDS);
            writer.join(5_000);
            Files.deleteIfExists(dir.resolve(MARKER));
            RecordLog.fsyncDir(dir.resolve(MARKER));
        } catch (Exception e) {
            throw e instanceof IOException io ? io : new IOException("could not stop the state store cleanly: " + e, e);
        } finally {
            release();
        }
    }

    @Override
    public void close() throws IOException {
        close(false, 0);
    }

    /** Tests: stop like a killed process (no STOP record, marker left, unsynced data possibly lost). */
    void crash() throws IOException {
        closed = true;
        writer.interrupt();
        try {
            writer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        release();
    }

    private void release() throws IOException {
        try {
            log.close();
        } finally {
            try {
                lock.release();
            } finally {
                lockChannel.close();
            }
        }
    }

    // ---- the writer thread -----------------------------------------------------------------------------
    private void writeLoop() {
        boolean dirty = false;
        List<Item> items = new ArrayList<>();
        while (true) {
            Item first;
            try {
                first = queue.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return; // crash() in tests
            }
            if (first == null) {
                if (closed && failure != null) {
                    return; // the store failed and was closed: nothing will be written any more
                }
                if (dirty && failure == null) {
                    try {
                        log.sync();
                    } catch (IOException e) {
                        fail(e);
                    }
                    dirty = false;
                }
                continue;
            }
            items.clear();
            items.add(first);
            queue.drainTo(items);
            List<byte[]> out = new ArrayList<>();
            List<CompletableFuture<Void>> waiting = new ArrayList<>();
            boolean sync = false;
            boolean stop = false;
            List<Ev> group = new ArrayList<>();
            for (Item it : items) {
                if (it instanceof EventItem e) {
                    Ev ev = new Ev(e.event(), e.enq());
                    group.add(ev);
                    addModelEvent(ev);
                    continue;
                }
                flushGroup(group, out);
                switch (it) {
                    case BatchItem b -> {
                        out.add(encodeBatch(b.batch()));
                        modelBatches.remove(b.batch().batchId());
                        modelBatches.put(b.batch().batchId(), b.batch());
                        trimBatches();
                    }
                    case PauseItem p -> {
                        out.add(encodePause(p.paused(), p.reason()));
                        modelPaused = p.paused();
                        modelReason = p.reason();
                    }
                    case SavedItem s -> {
                        out.add(encodeSaved(s.mark(), s.atMillis()));
                        savedMark = Math.max(savedMark, s.mark());
                        lastSaveMs = Math.max(lastSaveMs, s.atMillis());
                    }
                    case StopItem s -> {
                        out.add(encodeStop(s.observationContinues(), s.revisionHigh()));
                        stop = true;
                    }
                    default -> {
                    }
                }
                CompletableFuture<Void> f = futureOf(it);
                if (f != null) {
                    waiting.add(f);
                    sync = true;
                }
            }
            flushGroup(group, out);
            if (failure != null) {
                for (CompletableFuture<Void> f : waiting) {
                    f.completeExceptionally(failure);
                }
                if (stop) {
                    return;
                }
                continue;
            }
            try {
                log.append(out);
                if (sync) {
                    log.sync();
                    dirty = false;
                } else {
                    dirty = true;
                }
                for (CompletableFuture<Void> f : waiting) {
                    f.complete(null);
                }
                // Compact when the file has grown well past its last compacted size: a retained state
                // bigger than compactBytes on its own must not make every write cycle rewrite it all.
                if (!stop && log.size() > Math.max(compactBytes, 2 * compactedSize)) {
                    log.rewrite(snapshot());
                    compactedSize = log.size();
                }
            } catch (IOException | RuntimeException e) {
                IOException io = e instanceof IOException x ? x : new IOException(e.toString(), e);
                fail(io);
                for (CompletableFuture<Void> f : waiting) {
                    f.completeExceptionally(io);
                }
            }
            if (stop) {
                return;
            }
        }
    }

    private void fail(IOException e) {
        if (failure == null) {
            failure = e;
            try {
                onFailure.accept("the plugin's state file cannot be written (" + e.getMessage() + ")");
            } catch (RuntimeException ignored) {
                // the callback must not kill the writer
            }
        }
    }

    private void addModelEvent(Ev ev) {
        modelEvents.addLast(ev);
        modelSeq = Math.max(modelSeq, ev.event().seq());
        while (modelEvents.size() > eventTail) {
            modelEvents.removeFirst();
        }
    }

    private void trimBatches() {
        Iterator<StoredBatch> it = modelBatches.values().iterator();
        while (modelBatches.size() > maxBatches && it.hasNext()) {
            StoredBatch b = it.next();
            boolean settled = b.state() == CONFIRMED || (b.state() == NEEDS_SAVE && b.enq() <= savedMark);
            if (settled || modelBatches.size() > maxBatches * 2) {
                it.remove();
            }
        }
    }

    private void flushGroup(List<Ev> group, List<byte[]> out) {
        if (!group.isEmpty()) {
            out.add(encodeEvents(group));
            group.clear();
        }
    }

    private List<byte[]> snapshot() {
        List<byte[]> out = new ArrayList<>();
        out.add(encode(d -> {
            d.writeByte(HEADER);
            d.writeInt(1);
            str(d, modelLogId);
            d.writeLong(modelSeq);
            d.writeLong(modelRevisionBase);
            d.writeLong(savedMark);
            d.writeLong(lastSaveMs);
        }));
        out.add(encodePause(modelPaused, modelReason));
        for (StoredBatch b : modelBatches.values()) {
            out.add(encodeBatch(b));
        }
        List<Ev> chunk = new ArrayList<>();
        for (Ev e : modelEvents) {
            // never put a saved and an unsaved event into one record (its enq is the largest)
            if (chunk.size() >= 1000 || (!chunk.isEmpty() && (chunk.get(0).enq() <= savedMark) != (e.enq() <= savedMark))) {
                flushGroup(chunk, out);
            }
            chunk.add(e);
        }
        flushGroup(chunk, out);
        return out;
    }

    // ---- encoding ---------------------------------------------------------------------------------------
    private interface Writer {
        void write(DataOutputStream d) throws IOException;
    }

    private static byte[] encode(Writer w) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(256);
        try (DataOutputStream d = new DataOutputStream(b)) {
            w.write(d);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    private static void str(DataOutputStream d, String s) throws IOException {
        byte[] b = (s == null ? "" : s).getBytes(StandardCharsets.UTF_8);
        d.writeInt(b.length);
        d.write(b);
    }

    private static String str(DataInputStream d) throws IOException {
        int n = d.readInt();
        if (n < 0 || n > RecordLog.MAX_RECORD) {
            throw new CorruptState("a string of " + n + " bytes");
        }
        return new String(d.readNBytes(n), StandardCharsets.UTF_8);
    }

    private static byte[] encodePause(boolean paused, String reason) {
        return encode(d -> {
            d.writeByte(PAUSE);
            d.writeBoolean(paused);
            str(d, reason);
        });
    }

    private static byte[] encodeBatch(StoredBatch b) {
        return encode(d -> {
            d.writeByte(BATCH);
            d.writeLong(b.enq());
            d.writeByte(b.state());
            str(d, b.batchId());
            str(d, b.digest());
            str(d, b.operationId());
            byte[] r = b.result().toByteArray();
            d.writeInt(r.length);
            d.write(r);
        });
    }

    private static byte[] encodeEvents(List<Ev> events) {
        return encode(d -> {
            d.writeByte(EVENTS2);
            long max = 0;
            for (Ev e : events) {
                max = Math.max(max, e.enq());
            }
            d.writeLong(max);
            d.writeInt(events.size());
            for (Ev x : events) {
                EventLog.Event e = x.event();
                d.writeLong(e.seq());
                d.writeInt(e.x());
                d.writeInt(e.y());
                d.writeInt(e.z());
                str(d, e.before());
                str(d, e.after());
                d.writeByte(e.source().ordinal());
                str(d, e.playerId());
                d.writeLong(e.atMillis());
                str(d, e.operationId());
                str(d, e.playerName());
                str(d, e.cause());
            }
        });
    }

    private static byte[] encodeSaved(long mark, long at) {
        return encode(d -> {
            d.writeByte(SAVED);
            d.writeLong(mark);
            d.writeLong(at);
        });
    }

    private static byte[] encodeStop(boolean continues, long revisionHigh) {
        return encode(d -> {
            d.writeByte(STOP);
            d.writeBoolean(continues);
            d.writeLong(revisionHigh);
            d.writeLong(System.currentTimeMillis());
        });
    }

    /** A record that passed its checksum but does not parse: written by something else, or a bug. */
    static final class CorruptState extends IOException {
        CorruptState(String m) {
            super(m);
        }
    }

    private static Loaded parse(List<byte[]> records) throws CorruptState {
        if (records.isEmpty()) {
            return new Loaded(newId(), 0, 0, 0, 0, false, "", new LinkedHashMap<>(), List.of(), false, false, 0);
        }
        String logId = null;
        long seqBase = 0;
        long revBase = 0;
        long mark = 0;
        long lastSave = 0;
        boolean paused = false;
        String reason = "";
        LinkedHashMap<String, StoredBatch> batches = new LinkedHashMap<>();
        List<Ev> events = new ArrayList<>();
        boolean stopped = false;
        boolean continues = false;
        long revHigh = 0;
        Source[] sources = Source.values();
        for (int i = 0; i < records.size(); i++) {
            byte[] r = records.get(i);
            try (DataInputStream d = new DataInputStream(new ByteArrayInputStream(r))) {
                byte type = d.readByte();
                if (i == 0 && type != HEADER) {
                    throw new CorruptState("the first record is not a header");
                }
                stopped = false;
                switch (type) {
                    case HEADER -> {
                        if (i != 0 || d.readInt() != 1) {
                            throw new CorruptState("unexpected header (version) at record " + i);
                        }
                        logId = str(d);
                        seqBase = d.readLong();
                        revBase = d.readLong();
                        mark = d.readLong();
                        lastSave = d.readLong();
                    }
                    case PAUSE -> {
                        paused = d.readBoolean();
                        reason = str(d);
                    }
                    case BATCH -> {
                        long enq = d.readLong();
                        byte st = d.readByte();
                        String id = str(d);
                        String digest = str(d);
                        String op = str(d);
                        int n = d.readInt();
                        if (n < 0 || n > r.length) {
                            throw new CorruptState("batch result of " + n + " bytes");
                        }
                        BatchApplyResult res = BatchApplyResult.parseFrom(d.readNBytes(n));
                        batches.remove(id);
                        batches.put(id, new StoredBatch(id, digest, op, res, st, enq));
                    }
                    case EVENTS, EVENTS2 -> {
                        boolean named = type == EVENTS2;
                        long enq = d.readLong();
                        int n = d.readInt();
                        for (int k = 0; k < n; k++) {
                            long seq = d.readLong();
                            int x = d.readInt();
                            int y = d.readInt();
                            int z = d.readInt();
                            String before = str(d);
                            String after = str(d);
                            int src = d.readByte();
                            if (src < 0 || src >= sources.length) {
                                throw new CorruptState("event source " + src);
                            }
                            String player = str(d);
                            long at = d.readLong();
                            String op = str(d);
                            EventLog.Event ev = named
                                    ? new EventLog.Event(seq, x, y, z, before, after, sources[src], player, at, op, str(d),
                                            str(d))
                                    : new EventLog.Event(seq, x, y, z, before, after, sources[src], player, at, op);
                            events.add(new Ev(ev, enq));
                            seqBase = Math.max(seqBase, seq);
                        }
                    }
                    case SAVED -> {
                        mark = Math.max(mark, d.readLong());
                        lastSave = Math.max(lastSave, d.readLong());
                    }
                    case STOP -> {
                        continues = d.readBoolean();
                        revHigh = d.readLong();
                        d.readLong();
                        stopped = true;
                    }
                    default -> throw new CorruptState("unknown record type " + type + " at record " + i);
                }
            } catch (InvalidProtocolBufferException e) {
                throw new CorruptState("record " + i + " holds a batch answer that does not parse");
            } catch (CorruptState e) {
                throw e;
            } catch (IOException e) {
                throw new CorruptState("record " + i + " is shorter than its type needs");
            }
        }
        return new Loaded(logId, seqBase, revBase, mark, lastSave, paused, reason, batches, events, stopped, continues,
                revHigh);
    }
}
