package dev.mcb.world.core;

import com.google.gson.JsonObject;
import com.google.protobuf.ByteString;
import dev.mcb.proto.common.v1.Vec3;
import dev.mcb.proto.world.v1.BlocksGetResult;
import dev.mcb.proto.world.v1.RegionReadResult;
import dev.mcb.proto.world.v1.SectionRevision;
import dev.mcb.world.core.port.ChunkHold;
import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The read paths ({@code region_read}, {@code blocks_get}) and the automation writes, without ever
 * stalling the server thread: the chunks a request touches are first loaded off the server thread and
 * held ({@link WorldAccess#hold}, never generated: a chunk that does not exist is reported missing),
 * at most {@link #HOLD_WINDOW} chunks at a time; the positions are then read by the tick in slices
 * inside the shared per-tick budget ({@link SlicedWork}, {@link TickBudget}). Caller threads only.
 */
final class WorldReads {
    /** Chunks one request holds loaded at a time. */
    static final int HOLD_WINDOW = 256;

    private final WorldAccess world;
    private final SlicedWork work;
    private final long stallMillis;

    WorldReads(WorldAccess world, SlicedWork work, long stallMillis) {
        this.world = world;
        this.work = work;
        this.stallMillis = stallMillis;
    }

    // ---- checks --------------------------------------------------------------------------------------
    static void checkHeight(int y0, int y1, WorldDescriptor d) {
        if (y0 < d.minY() || y1 > d.maxY()) {
            JsonObject det = new JsonObject();
            det.addProperty("minY", d.minY());
            det.addProperty("maxY", d.maxY());
            throw new McbException(ErrorCode.OUT_OF_BOUNDS,
                    "y " + y0 + ".." + y1 + " is outside the world's height " + d.minY() + ".." + d.maxY(), det);
        }
    }

    static void checkXz(int x, int z) {
        if (Math.abs((long) x) > BatchExecutor.XZ_LIMIT || Math.abs((long) z) > BatchExecutor.XZ_LIMIT) {
            throw new McbException(ErrorCode.OUT_OF_BOUNDS, "x/z beyond the world border (±" + BatchExecutor.XZ_LIMIT + ")");
        }
    }

    static long chunkKey(int cx, int cz) {
        return ((long) cx << 32) | (cz & 0xFFFFFFFFL);
    }

    private static int[] chunkOf(long key) {
        return new int[] {(int) (key >> 32), (int) key};
    }

    // ---- holding chunks -----------------------------------------------------------------------------
    /** Hold the chunks (keys) or fail with not_found listing the missing ones; the hold is released on failure. */
    ChunkHold holdAll(List<Long> keys) {
        List<int[]> chunks = new ArrayList<>(keys.size());
        for (long k : keys) {
            chunks.add(chunkOf(k));
        }
        ChunkHold h = waitHold(world.hold(chunks));
        if (!h.missing().isEmpty()) {
            List<int[]> missing = new ArrayList<>(h.missing());
            h.close();
            throw missing(missing);
        }
        return h;
    }

    private ChunkHold waitHold(CompletableFuture<ChunkHold> f) {
        try {
            return f.get(stallMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.thenAccept(ChunkHold::close);
            throw new McbException(ErrorCode.BUSY, "the server did not load the chunks within " + stallMillis / 1000
                    + " s (busy chunk system?); retry later");
        } catch (InterruptedException e) {
            f.thenAccept(ChunkHold::close);
            Thread.currentThread().interrupt();
            throw new McbException(ErrorCode.UNAVAILABLE, "interrupted while waiting for chunks to load");
        } catch (ExecutionException e) {
            throw WorldHostCore.unwrap(e);
        }
    }

    /** chunks_exist answers at most this many chunks (256 × 256). */
    static final int MAX_CHUNKS_EXIST = 65_536;

    /**
     * Which chunks of the inclusive range exist: one bit per chunk, row by row (bit i is chunk
     * (cx0 + i % width, cz0 + i / width)); {@code count[0]} receives how many. Never asks the disk on the
     * server thread: a chunk in memory ({@link WorldAccess#chunkLoaded}, read by the tick in budgeted slices)
     * exists; the others are loaded off the server thread without generation ({@link WorldAccess#hold},
     * {@link #HOLD_WINDOW} at a time, released at once) and exist unless the hold reports them missing. On
     * Paper, {@code isChunkGenerated} of an unloaded chunk waits for the disk on the server thread.
     */
    byte[] chunksExist(int cx0, int cz0, int cx1, int cz1, int[] count) {
        long limit = BatchExecutor.XZ_LIMIT;
        if ((long) cx0 * 16 < -limit || (long) cz0 * 16 < -limit || (long) cx1 * 16 + 15 > limit || (long) cz1 * 16 + 15 > limit) {
            throw new McbException(ErrorCode.OUT_OF_BOUNDS, "chunks beyond the world border (±" + limit + " blocks)");
        }
        long n = ((long) cx1 - cx0 + 1) * ((long) cz1 - cz0 + 1);
        if (n > MAX_CHUNKS_EXIST) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "chunks_exist of " + n + " chunks exceeds the limit of "
                    + MAX_CHUNKS_EXIST + "; split the range");
        }
        int width = cx1 - cx0 + 1;
        int size = (int) n;
        byte[] bits = new byte[(size + 7) / 8];
        List<int[]> unloaded = new ArrayList<>();
        SlicedWork.await(work.submit(new SlicedWork.Units() {
            private int i;

            @Override
            public int size() {
                return size;
            }

            @Override
            public void step() {
                int cx = cx0 + i % width;
                int cz = cz0 + i / width;
                if (world.chunkLoaded(cx, cz)) {
                    bits[i >> 3] |= (byte) (1 << (i & 7));
                } else {
                    unloaded.add(new int[] {cx, cz});
                }
                i++;
            }
        }), stallMillis);
        for (int w = 0; w < unloaded.size(); w += HOLD_WINDOW) {
            List<int[]> window = unloaded.subList(w, Math.min(unloaded.size(), w + HOLD_WINDOW));
            Set<Long> absent = new HashSet<>();
            try (ChunkHold h = waitHold(world.hold(window))) {
                h.missing().forEach(c -> absent.add(chunkKey(c[0], c[1])));
            }
            for (int[] c : window) {
                if (!absent.contains(chunkKey(c[0], c[1]))) {
                    int i = (c[1] - cz0) * width + (c[0] - cx0);
                    bits[i >> 3] |= (byte) (1 << (i & 7));
                }
            }
        }
        int found = 0;
        for (byte b : bits) {
            found += Integer.bitCount(b & 0xFF);
        }
        count[0] = found;
        return bits;
    }

    /**
     * The full state at each position ({@code {x, y, z}}), or null where its chunk does not exist: chunks held
     * {@link #HOLD_WINDOW} at a time (loaded off the server thread, never generated), positions read by the tick
     * in budgeted slices. For the restart check, which must not fail on a missing chunk.
     */
    String[] readOrMissing(List<int[]> positions) {
        String[] out = new String[positions.size()];
        Map<Long, List<Integer>> byChunk = new LinkedHashMap<>();
        for (int i = 0; i < positions.size(); i++) {
            int[] p = positions.get(i);
            byChunk.computeIfAbsent(chunkKey(p[0] >> 4, p[2] >> 4), k -> new ArrayList<>()).add(i);
        }
        List<Long> keys = new ArrayList<>(byChunk.keySet());
        for (List<Long> window : windows(keys)) {
            List<int[]> chunks = window.stream().map(WorldReads::chunkOf).toList();
            try (ChunkHold h = waitHold(world.hold(chunks))) {
                Set<Long> absent = new HashSet<>();
                h.missing().forEach(c -> absent.add(chunkKey(c[0], c[1])));
                int[] order = window.stream().filter(k -> !absent.contains(k))
                        .flatMap(k -> byChunk.get(k).stream()).mapToInt(Integer::intValue).toArray();
                SlicedWork.await(work.submit(visit(order, 0, order.length, i -> {
                    int[] p = positions.get(i);
                    out[i] = BatchExecutor.airNormalize(world.get(p[0], p[1], p[2]));
                })), stallMillis);
            }
        }
        return out;
    }

    private static McbException missing(List<int[]> missing) {
        missing.sort(Comparator.<int[]>comparingInt(c -> c[0]).thenComparingInt(c -> c[1]));
        return BatchExecutor.missingChunks(missing);
    }

    /**
     * Run {@code slices} (one per window of chunk keys, in order) while each window's chunks are held.
     * A request over more than one window first checks every window (holding and releasing), so a
     * missing chunk anywhere is reported, complete, before anything is read.
     */
    private void runWindows(List<List<Long>> windows, java.util.function.IntFunction<SlicedWork.Units> slices) {
        if (windows.size() > 1) {
            List<int[]> missing = new ArrayList<>();
            for (List<Long> w : windows) {
                List<int[]> chunks = w.stream().map(WorldReads::chunkOf).toList();
                try (ChunkHold h = waitHold(world.hold(chunks))) {
                    missing.addAll(h.missing());
                }
            }
            if (!missing.isEmpty()) {
                throw missing(missing);
            }
        }
        for (int i = 0; i < windows.size(); i++) {
            try (ChunkHold h = holdAll(windows.get(i))) {
                SlicedWork.await(work.submit(slices.apply(i)), stallMillis);
            }
        }
    }

    private static List<List<Long>> windows(List<Long> keys) {
        List<List<Long>> out = new ArrayList<>();
        for (int i = 0; i < keys.size(); i += HOLD_WINDOW) {
            out.add(keys.subList(i, Math.min(keys.size(), i + HOLD_WINDOW)));
        }
        return out;
    }

    /** Palette of canonical states, built on the server thread while reading. */
    private static final class Palette {
        final List<String> states = new ArrayList<>();
        final Map<String, Integer> index = new HashMap<>();

        int of(String raw) {
            String st = BatchExecutor.airNormalize(raw);
            Integer g = index.get(st);
            if (g == null) {
                g = states.size();
                index.put(st, g);
                states.add(st);
            }
            return g;
        }
    }

    // ---- region_read ---------------------------------------------------------------------------------
    RegionReadResult regionRead(int x0, int y0, int z0, int x1, int y1, int z1, SectionRevisions revisions) {
        checkXz(x0, z0);
        checkXz(x1, z1);
        WorldDescriptor d = world.describe();
        checkHeight(y0, y1, d);
        long sx = x1 - (long) x0 + 1;
        long sy = y1 - (long) y0 + 1;
        long sz = z1 - (long) z0 + 1;
        long size = sx * sy * sz;
        if (size > WorldHostCore.MAX_REGION_POSITIONS) {
            JsonObject det = new JsonObject();
            det.addProperty("positions", size);
            det.addProperty("limit", WorldHostCore.MAX_REGION_POSITIONS);
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "region_read of " + size
                    + " positions exceeds the limit of " + WorldHostCore.MAX_REGION_POSITIONS + "; split the box", det);
        }
        int nx = (int) sx;
        int nz = (int) sz;
        List<Long> keys = new ArrayList<>();
        for (int cx = x0 >> 4; cx <= x1 >> 4; cx++) {
            for (int cz = z0 >> 4; cz <= z1 >> 4; cz++) {
                keys.add(chunkKey(cx, cz));
            }
        }
        int[] out = new int[(int) size];
        Palette palette = new Palette();
        List<List<Long>> windows = windows(keys);
        runWindows(windows, w -> new ColumnReader(windows.get(w), x0, y0, z0, x1, y1, z1, (x, y, z, state) ->
                out[((y - y0) * nz + (z - z0)) * nx + (x - x0)] = palette.of(state)));
        byte[] bytes = new byte[out.length * 2];
        for (int i = 0; i < out.length; i++) {
            bytes[2 * i] = (byte) (out[i] & 0xFF);
            bytes[2 * i + 1] = (byte) (out[i] >>> 8);
        }
        RegionReadResult.Builder b = RegionReadResult.newBuilder()
                .setMin(Vec3.newBuilder().setX(x0).setY(y0).setZ(z0)).setMax(Vec3.newBuilder().setX(x1).setY(y1).setZ(z1))
                .addAllPalette(palette.states).setIndices(ByteString.copyFrom(bytes));
        for (int cx = x0 >> 4; cx <= x1 >> 4; cx++) {
            for (int sy2 = y0 >> 4; sy2 <= y1 >> 4; sy2++) {
                for (int cz = z0 >> 4; cz <= z1 >> 4; cz++) {
                    b.addRevisions(SectionRevision.newBuilder().setCx(cx).setSy(sy2).setCz(cz)
                            .setRevision(revisions.get(cx, sy2, cz)));
                }
            }
        }
        return b.build();
    }

    private interface StateSink {
        void accept(int x, int y, int z, String state);
    }

    /** The positions of a box inside some chunk columns, column by column, each in YZX order. */
    private final class ColumnReader implements SlicedWork.Units {
        private final List<int[]> boxes = new ArrayList<>(); // {x0,z0,x1,z1} per column
        private final int y0;
        private final int y1;
        private final StateSink sink;
        private final int size;
        private int col;
        private int x;
        private int y;
        private int z;

        ColumnReader(List<Long> keys, int bx0, int by0, int bz0, int bx1, int by1, int bz1, StateSink sink) {
            this.y0 = by0;
            this.y1 = by1;
            this.sink = sink;
            int n = 0;
            for (long k : keys) {
                int[] c = chunkOf(k);
                int[] b = {Math.max(bx0, c[0] << 4), Math.max(bz0, c[1] << 4), Math.min(bx1, (c[0] << 4) + 15),
                    Math.min(bz1, (c[1] << 4) + 15)};
                boxes.add(b);
                n += (b[2] - b[0] + 1) * (b[3] - b[1] + 1) * (by1 - by0 + 1);
            }
            this.size = n;
            if (!boxes.isEmpty()) {
                x = boxes.get(0)[0];
                z = boxes.get(0)[1];
                y = y0;
            }
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public void step() {
            sink.accept(x, y, z, BlockEntityData.state(world.get(x, y, z))); // region_read: block states only
            int[] b = boxes.get(col);
            if (++x <= b[2]) {
                return;
            }
            x = b[0];
            if (++z <= b[3]) {
                return;
            }
            z = b[1];
            if (++y <= y1) {
                return;
            }
            if (++col < boxes.size()) {
                y = y0;
                x = boxes.get(col)[0];
                z = boxes.get(col)[1];
            }
        }
    }

    // ---- positions (blocks_get, automation) --------------------------------------------------------------
    /** Position indices ordered by chunk, and the windows of chunk keys they fall into. */
    private record ByChunk(int[] order, List<List<Long>> windows, int[] windowStart) {
    }

    private static ByChunk byChunk(int[] xs, int[] zs) {
        int n = xs.length;
        Integer[] boxed = new Integer[n];
        long[] key = new long[n];
        for (int i = 0; i < n; i++) {
            boxed[i] = i;
            key[i] = chunkKey(xs[i] >> 4, zs[i] >> 4);
        }
        Arrays.sort(boxed, Comparator.comparingLong(i -> key[i]));
        int[] order = new int[n];
        List<Long> keys = new ArrayList<>();
        List<Integer> firstOfKey = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order[i] = boxed[i];
            if (keys.isEmpty() || keys.get(keys.size() - 1) != key[order[i]]) {
                keys.add(key[order[i]]);
                firstOfKey.add(i);
            }
        }
        List<List<Long>> windows = windows(keys);
        int[] starts = new int[windows.size() + 1];
        for (int w = 0; w < windows.size(); w++) {
            starts[w] = firstOfKey.get(w * HOLD_WINDOW);
        }
        starts[windows.size()] = n;
        return new ByChunk(order, windows, starts);
    }

    /** Units that visit positions {@code order[from..to)} once each. */
    private static SlicedWork.Units visit(int[] order, int from, int to, java.util.function.IntConsumer each) {
        return new SlicedWork.Units() {
            private int k = from;

            @Override
            public int size() {
                return to - from;
            }

            @Override
            public void step() {
                each.accept(order[k++]);
            }
        };
    }

    BlocksGetResult blocksGet(List<Integer> xyz) {
        if (xyz.size() % 3 != 0) {
            throw McbException.invalid("xyz must hold 3 integers per position; got " + xyz.size() + " integers");
        }
        int n = xyz.size() / 3;
        if (n > WorldHostCore.MAX_BLOCKS_GET) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "blocks_get of " + n + " positions exceeds "
                    + WorldHostCore.MAX_BLOCKS_GET);
        }
        WorldDescriptor d = world.describe();
        int[] xs = new int[n];
        int[] ys = new int[n];
        int[] zs = new int[n];
        int lo = Integer.MAX_VALUE;
        int hi = Integer.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            xs[i] = xyz.get(3 * i);
            ys[i] = xyz.get(3 * i + 1);
            zs[i] = xyz.get(3 * i + 2);
            checkXz(xs[i], zs[i]);
            lo = Math.min(lo, ys[i]);
            hi = Math.max(hi, ys[i]);
        }
        if (n > 0) {
            checkHeight(lo, hi, d);
        }
        ByChunk bc = byChunk(xs, zs);
        String[] states = new String[n];
        runWindows(bc.windows(), w -> visit(bc.order(), bc.windowStart()[w], bc.windowStart()[w + 1],
                i -> states[i] = world.get(xs[i], ys[i], zs[i])));
        BlocksGetResult.Builder b = BlocksGetResult.newBuilder();
        Palette palette = new Palette();
        for (String s : states) {
            b.addState(palette.of(s));
        }
        return b.addAllPalette(palette.states).build();
    }

    /** One automation write: where, and the canonical state wanted there. */
    record Write(int x, int y, int z, String state) {
    }

    /** What an automation write did at one position (reported to the caller's recorder on the server thread). */
    interface Written {
        void changed(int x, int y, int z, String before, String after);
    }

    /** Write without compare-and-set (local automation), in budgeted slices; returns the positions changed. */
    int automationWrite(List<Write> writes, Written recorder) {
        WorldDescriptor d = world.describe();
        int n = writes.size();
        int[] xs = new int[n];
        int[] zs = new int[n];
        for (int i = 0; i < n; i++) {
            Write w = writes.get(i);
            if (Math.abs((long) w.x()) > BatchExecutor.XZ_LIMIT || Math.abs((long) w.z()) > BatchExecutor.XZ_LIMIT) {
                throw new McbException(ErrorCode.OUT_OF_BOUNDS, "(" + w.x() + "," + w.y() + "," + w.z()
                        + ") is beyond the world border");
            }
            checkHeight(w.y(), w.y(), d);
            xs[i] = w.x();
            zs[i] = w.z();
        }
        ByChunk bc = byChunk(xs, zs);
        int[] changed = new int[1];
        runWindows(bc.windows(), win -> visit(bc.order(), bc.windowStart()[win], bc.windowStart()[win + 1], i -> {
            Write w = writes.get(i);
            String before = BatchExecutor.airNormalize(world.get(w.x(), w.y(), w.z()));
            if (!before.equals(w.state())) {
                world.set(w.x(), w.y(), w.z(), w.state());
                changed[0]++;
                recorder.changed(w.x(), w.y(), w.z(), before, w.state());
            }
        }));
        return changed[0];
    }

    /** The chunk keys of positions (for holding them around a batch), skipping positions beyond the border. */
    static List<Long> chunkKeysOf(List<int[]> positions) {
        Set<Long> keys = new LinkedHashSet<>();
        for (int[] p : positions) {
            if (Math.abs((long) p[0]) <= BatchExecutor.XZ_LIMIT && Math.abs((long) p[2]) <= BatchExecutor.XZ_LIMIT) {
                keys.add(chunkKey(p[0] >> 4, p[2] >> 4));
            }
        }
        return new ArrayList<>(keys);
    }
}
