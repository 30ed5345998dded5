package dev.mcb.world.paper;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * bench/paper-mockbukkit.sh (only with {@code -Dmcb.bench=true}): what the server thread pays for the restart
 * check and for a large summary under MockBukkit. (1) After a crash with N unsaved positions (default
 * 100,352 = 196 batches of 512): the longest tick while the check runs, ticks until it is done.
 * (2) A summary's reads over 2,097,152 positions (chunks_exist over its chunks, then region_read of
 * 128 x 128 x 128): the {@code isChunkGenerated} calls on unloaded chunks (Paper: disk waits on the server
 * thread; target 0) and the longest tick.
 */
@EnabledIfSystemProperty(named = "mcb.bench", matches = "true")
class MockBukkitTickBench {
    static final int BATCHES = Integer.getInteger("mcb.bench.restart.batches", 196);

    /** Time the JVM spent collecting garbage so far (MockBukkit allocates a block object per position read). */
    static long gcMillis() {
        long t = 0;
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            t += Math.max(0, gc.getCollectionTime());
        }
        return t;
    }

    @Test
    void restartCheck() throws Exception {
        PluginHarness first = PluginHarness.start();
        for (int b = 0; b < BATCHES; b++) { // 512 positions a batch: 32 x 16 columns, one layer per batch
            int x0 = (b % 14) * 32 - 224;
            int z0 = (b / 14 % 14) * 16 - 112;
            first.rpcOk("service", "batch_apply", first.batch("r" + b, PluginHarness.slab(x0, 65 + b / 196, z0, 512),
                    "minecraft:air", "minecraft:stone"));
        }
        try (PluginHarness h = first.crashServer()) {
            long gc0 = gcMillis();
            long[] ticks = new long[100_000];
            long[] loads = new long[100_000];
            long[] reads = new long[100_000]; // the core's own account of its read slices in each tick
            int n = 0;
            long t0 = System.nanoTime();
            while (!h.core().state().restartInfo().getWritesChecked() && n < ticks.length) {
                long s = System.nanoTime();
                h.world.tick(); // chunk loads completing (MockBukkit's chunk objects, our tickets)
                long m = System.nanoTime();
                h.server.getScheduler().performOneTick(); // the plugin's tick: the check's slices
                long e = System.nanoTime();
                loads[n] = m - s;
                reads[n] = h.core().budget().stats().lastReadNanos();
                ticks[n++] = e - m;
                Thread.sleep(1); // let the check's thread hand over its next window
            }
            long[] sorted = Arrays.copyOf(ticks, n);
            Arrays.sort(sorted);
            long[] sl = Arrays.copyOf(loads, n);
            Arrays.sort(sl);
            long[] sr = Arrays.copyOf(reads, n);
            Arrays.sort(sr);
            System.out.printf("restart check: %d unsaved positions, %d lost, %d ticks (%.1f s); scheduler tick median"
                            + " %.3f ms, p99 %.3f ms, longest %.3f ms; the core's reads per tick p99 %.3f ms, longest %.3f ms"
                            + " (budget 5 ms); chunk-load completions per tick longest %.3f ms;"
                            + " GC %d ms; isChunkGenerated on unloaded chunks: %d%n",
                    h.core().state().restartInfo().getUnsavedWrites(), h.core().state().restartInfo().getLostWrites(), n, (System.nanoTime() - t0) / 1e9,
                    sorted[n / 2] / 1e6, sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e6, sorted[n - 1] / 1e6,
                    sr[Math.min(n - 1, (int) (n * 0.99))] / 1e6, sr[n - 1] / 1e6, sl[n - 1] / 1e6, gcMillis() - gc0, h.world.diskWaits());
        }
    }

    @Test
    void summaryReads() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            long t0 = System.nanoTime();
            var ce = h.rpcOk("service", "chunks_exist", "{\"minCx\":-4,\"minCz\":-4,\"maxCx\":3,\"maxCz\":3}");
            int ceTicks = h.lastTicks();
            // straight into the core on a thread of its own (the harness's HTTP client gives up after 20 s;
            // MockBukkit's block reads are slow): the same reads, slices and holds as over the protocol
            var params = dev.mcb.proto.world.v1.RegionReadParams.newBuilder()
                    .setMin(dev.mcb.proto.common.v1.Vec3.newBuilder().setX(-64).setY(0).setZ(-64))
                    .setMax(dev.mcb.proto.common.v1.Vec3.newBuilder().setX(63).setY(127).setZ(63)).build();
            var call = java.util.concurrent.CompletableFuture.supplyAsync(() -> h.core().regionRead(params));
            int rrTicks = 0;
            long longest = 0;
            long gc0 = gcMillis();
            int over10 = 0;
            while (!call.isDone() && System.nanoTime() - t0 < 600_000_000_000L) {
                long s = System.nanoTime();
                h.tick();
                long d = System.nanoTime() - s;
                longest = Math.max(longest, d);
                over10 += d > 10_000_000L ? 1 : 0;
                rrTicks++;
            }
            var rr = call.get();
            System.out.printf("summary reads: chunks_exist of 64 chunks (%d exist) in %d ticks, region_read of 2,097,152"
                            + " positions (%d palette entries) in %d ticks, longest tick %.3f ms, %d ticks over 10 ms,"
                            + " GC %d ms, %.1f s; isChunkGenerated on unloaded chunks: %d%n",
                    ce.get("count").getAsInt(), ceTicks, rr.getPaletteCount(), rrTicks, longest / 1e6, over10,
                    gcMillis() - gc0, (System.nanoTime() - t0) / 1e9, h.world.diskWaits());
        }
    }
}
