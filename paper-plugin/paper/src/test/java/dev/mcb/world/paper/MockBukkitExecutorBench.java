package dev.mcb.world.paper;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.bukkit.Bukkit;
import org.bukkit.block.Block;
import org.bukkit.block.data.BlockData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * bench/paper-mockbukkit.sh (not part of the test run: only with {@code -Dmcb.bench=true}). The real
 * plugin under MockBukkit: (0) what MockBukkit's world costs per block for the three calls the
 * adapter makes (read as text, parse a state, write), (1) the executor's own time per 512-block
 * batch sent over HTTP and run by a scheduler tick, (2) blocks/s with ticks at 20 per second and
 * clients keeping the queue full (ceiling 512 x 20 = 10,240 blocks/s).
 */
@EnabledIfSystemProperty(named = "mcb.bench", matches = "true")
class MockBukkitExecutorBench {
    static final int ROUNDS = Integer.getInteger("mcb.bench.rounds", 200);
    static final int SECONDS = Integer.getInteger("mcb.bench.seconds", 5);

    static String pct(long[] sorted) {
        int n = sorted.length;
        return String.format("median %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms", sorted[n / 2] / 1e6,
                sorted[(int) (n * 0.9)] / 1e6, sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e6, sorted[n - 1] / 1e6);
    }

    @Test
    void bench() throws Exception {
        try (PluginHarness h = PluginHarness.start()) {
            primitives(h);
            ownTime(h);
            throughput(h);
        }
    }

    /** 512 x each world call the adapter makes, per round; the cost of MockBukkit itself. */
    static void primitives(PluginHarness h) {
        int rounds = 50;
        long[] read = new long[rounds];
        long[] parse = new long[rounds];
        long[] write = new long[rounds];
        List<int[]> pos = PluginHarness.slab(-200, 200, -200, 512);
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            for (int[] p : pos) {
                h.world.getBlockAt(p[0], p[1], p[2]).getBlockData().getAsString();
            }
            long t1 = System.nanoTime();
            BlockData d = null;
            for (int i = 0; i < pos.size(); i++) {
                d = Bukkit.createBlockData(r % 2 == 0 ? "minecraft:stone" : "minecraft:air");
            }
            long t2 = System.nanoTime();
            for (int[] p : pos) {
                Block b = h.world.getBlockAt(p[0], p[1], p[2]);
                b.setBlockData(d, false);
            }
            long t3 = System.nanoTime();
            read[r] = t1 - t0;
            parse[r] = t2 - t1;
            write[r] = t3 - t2;
        }
        Arrays.sort(read);
        Arrays.sort(parse);
        Arrays.sort(write);
        System.out.printf("MockBukkit world, 512 calls each (%d rounds):%n", rounds);
        System.out.printf("  getBlockAt().getBlockData().getAsString(): %s%n", pct(read));
        System.out.printf("  Bukkit.createBlockData(text):              %s%n", pct(parse));
        System.out.printf("  getBlockAt().setBlockData(data, false):    %s%n", pct(write));
    }

    static String layerBatch(PluginHarness h, String id, int z0, int r) {
        int layer = Math.floorMod(r, 100);
        boolean up = Math.floorMod(r, 200) < 100;
        return h.batch(id, PluginHarness.slab(0, 65 + layer, z0, 512), up ? "minecraft:air" : "minecraft:stone",
                up ? "minecraft:stone" : "minecraft:air");
    }

    /** One batch at a time over HTTP; the executor's own time in the tick that ran it. */
    static void ownTime(PluginHarness h) throws Exception {
        int warm = 50;
        long[] own = new long[ROUNDS];
        for (int r = -warm; r < ROUNDS; r++) {
            Future<JsonObject> f = h.rpcAsync("service", "batch_apply", layerBatch(h, "own" + r, 0, r + warm));
            JsonObject res = h.ticking(f);
            if (!res.get("ok").getAsBoolean() || res.getAsJsonObject("result").get("written").getAsInt() != 512) {
                String text = res.toString();
                throw new IllegalStateException("bench batch " + r + " not fully written: "
                        + text.substring(0, Math.min(300, text.length())));
            }
            if (r >= 0) {
                own[r] = h.core().executor().stats().lastOwnNanos();
            }
        }
        Arrays.sort(own);
        long over = Arrays.stream(own).filter(n -> n > 5_000_000L).count();
        System.out.printf("executor own time per 512-block batch (real plugin under MockBukkit, %d batches over HTTP, "
                + "after %d warm-up):%n  %s  (budget 5 ms; %d of %d above it)%n  recommended batch size now %d%n",
                ROUNDS, warm, pct(own), over, ROUNDS, h.core().executor().recommendedBatchSize());
    }

    /** Ticks every 50 ms on this thread; two clients send 512-block batches back to back. */
    static void throughput(PluginHarness h) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong written = new AtomicLong();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            int z0 = 32 + 32 * c;
            int client = c;
            Thread t = new Thread(() -> {
                int r = 0;
                while (!stop.get()) {
                    try {
                        JsonObject res = h.rpcAsync("service", "batch_apply", layerBatch(h, "tp" + client + "-" + r, z0, r))
                                .get();
                        if (res.get("ok").getAsBoolean()) {
                            written.addAndGet(res.getAsJsonObject("result").get("written").getAsInt());
                            r++;
                        }
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "bench-client-" + c);
            t.setDaemon(true);
            clients.add(t);
            t.start();
        }
        long blocksBefore = h.core().executor().stats().blocks();
        long maxBefore = h.core().executor().stats().maxOwnNanos();
        long start = System.nanoTime();
        long end = start + SECONDS * 1_000_000_000L;
        int ticks = 0;
        long worstTick = 0;
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            h.tick();
            worstTick = Math.max(worstTick, System.nanoTime() - t0);
            ticks++;
            long next = start + ticks * 50_000_000L;
            long sleep = next - System.nanoTime();
            if (sleep > 0) {
                Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
            }
        }
        double secs = (System.nanoTime() - start) / 1e9;
        long blocks = h.core().executor().stats().blocks() - blocksBefore;
        stop.set(true);
        // let the clients' last calls finish so the harness closes cleanly
        for (int i = 0; i < 40; i++) {
            h.tick();
            Thread.sleep(5);
        }
        System.out.printf("blocks/s at 20 TPS (real plugin under MockBukkit, 2 HTTP clients, 512-block batches): %,.0f "
                + "(%,d blocks in %d ticks, %.2f s; ceiling 10,240)%n  worst whole tick %.2f ms (MockBukkit scheduler "
                + "+ executor), executor max own time %.2f ms%n", blocks / secs, blocks, ticks, secs, worstTick / 1e6,
                Math.max(maxBefore, h.core().executor().stats().maxOwnNanos()) / 1e6);
    }
}
