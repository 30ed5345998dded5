package dev.mcb.world.testhost;

import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.BatchEntry;
import dev.mcb.world.core.BatchExecutor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A simple harness (bench/java-executor.sh): (1) the executor's own time per 512-block batch against
 * the in-memory world, measured by the executor itself with System.nanoTime; (2) blocks/s sustained
 * under a 20-ticks-per-second scheduler with the queue kept full (ceiling 512 × 20 = 10,240 blocks/s).
 */
public final class ExecutorBench {
    private ExecutorBench() {
    }

    static BatchApplyParams batch(String id, int layer, String expected, String desired) {
        BatchApplyParams.Builder b = BatchApplyParams.newBuilder().setBatchId(id).setWorldEpoch(1).setOperationId("bench");
        for (int i = 0; i < 512; i++) {
            // 512 positions spread over 4 chunks and 2 sections
            int x = (i % 32) - 16;
            int z = ((i / 32) % 16) - 8;
            int y = 64 + (layer % 200) + (i / 512);
            b.addEntries(BatchEntry.newBuilder().setX(x).setY(y).setZ(z).setExpected(expected).setDesired(desired));
        }
        return b.build();
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        JsonBlockRegistry reg = Main.loadRegistry();
        MemoryWorld world = new MemoryWorld(reg, "00000000-0000-0000-0000-000000000000", "bench", -64, -64, 63, 63);
        BatchExecutor ex = new BatchExecutor(world, (c, op) -> { });
        // (1) own time per 512-block batch, one batch per tick, alternating stone/air so every entry is written
        long[] own = new long[rounds];
        int warm = 200;
        for (int r = -warm; r < rounds; r++) {
            int layer = Math.floorMod(r, 100);
            boolean up = Math.floorMod(r, 200) < 100;
            CompletableFuture<BatchApplyResult> f = ex.submit(batch("own" + r, layer, up ? "air" : "stone", up ? "stone" : "air"),
                    1, -64, 319);
            ex.tick();
            BatchApplyResult res = f.get();
            if (!res.getStatus().equals("applied") || res.getWritten() != 512) {
                throw new IllegalStateException("bench batch not applied: " + res.getStatus() + " " + res.getWritten());
            }
            if (r >= 0) {
                own[r] = ex.stats().lastOwnNanos();
            }
        }
        Arrays.sort(own);
        System.out.printf("executor own time per 512-block batch (in-memory world, %d batches, after %d warm-up):%n", rounds, warm);
        System.out.printf("  median %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms  (budget 5 ms, target <= 1 ms)%n",
                own[rounds / 2] / 1e6, own[(int) (rounds * 0.9)] / 1e6, own[(int) (rounds * 0.99)] / 1e6, own[rounds - 1] / 1e6);

        // (2) throughput under a 20 TPS scheduler
        MemoryWorld w2 = new MemoryWorld(reg, "00000000-0000-0000-0000-000000000000", "bench2", -64, -64, 63, 63);
        BatchExecutor ex2 = new BatchExecutor(w2, (c, op) -> { });
        TickScheduler sched = new TickScheduler(20);
        sched.everyTick(ex2::tick);
        List<CompletableFuture<BatchApplyResult>> inflight = new ArrayList<>();
        int n = 0;
        for (; n < 8; n++) {
            inflight.add(ex2.submit(batch("t" + n, n % 200, "air", "stone"), 1, -64, 319));
        }
        sched.start();
        long t0 = System.nanoTime();
        long startBlocks = ex2.stats().blocks();
        long startTicks = sched.ticks();
        while (System.nanoTime() - t0 < seconds * 1_000_000_000L) {
            if (ex2.queued() < 4) {
                // keep the queue full; layers cycle between writing stone and air
                int layer = n % 200;
                boolean up = (n / 200) % 2 == 0;
                inflight.add(ex2.submit(batch("t" + n, layer, up ? "air" : "stone", up ? "stone" : "air"), 1, -64, 319));
                n++;
            } else {
                Thread.sleep(2);
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long blocks = ex2.stats().blocks() - startBlocks;
        long ticks = sched.ticks() - startTicks;
        sched.close();
        BatchExecutor.TickStats s = ex2.stats();
        System.out.printf("throughput under a 20 TPS scheduler: %d blocks in %.2f s = %.0f blocks/s over %d ticks "
                + "(%.1f TPS); ceiling 10,240 blocks/s; worst tick own time %.3f ms%n",
                blocks, secs, blocks / secs, ticks, ticks / secs, s.maxOwnNanos() / 1e6);
        for (CompletableFuture<BatchApplyResult> f : inflight) {
            if (f.isDone() && !f.get().getStatus().equals("applied")) {
                throw new IllegalStateException("a throughput batch did not apply: " + f.get().getStatus());
            }
        }
    }
}
