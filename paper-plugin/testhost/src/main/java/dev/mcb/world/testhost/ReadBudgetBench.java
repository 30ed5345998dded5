package dev.mcb.world.testhost;

import dev.mcb.proto.common.v1.Vec3;
import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchEntry;
import dev.mcb.proto.world.v1.RegionReadParams;
import dev.mcb.world.core.HostConfig;
import dev.mcb.world.core.TickBudget;
import dev.mcb.world.core.WorldHostCore;
import dev.mcb.world.core.port.Players;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * bench/java-read-budget.sh: the tick time spent on reads while a 2,097,152-position region_read
 * (128³) runs beside an apply, on the Java test host's world and server thread (MemoryWorld,
 * TickScheduler at 20 TPS, the real WorldHostCore; the HTTP layer is left out). Two threads keep
 * 512-block batches coming through batch_apply the whole time. Per tick, while the read runs: the
 * core's own accounting (TickBudget, wall time: reads, executor, total) and the tick thread's CPU time
 * for the whole core tick (wall time also counts moments other processes hold the core).
 */
public final class ReadBudgetBench {
    private ReadBudgetBench() {
    }

    private static BatchApplyParams batch(String id, int n) {
        int layer = 10 + (n / 2) % 40;
        boolean up = n % 2 == 0;
        BatchApplyParams.Builder b = BatchApplyParams.newBuilder().setBatchId(id).setWorldEpoch(1).setOperationId("bench");
        int x0 = (n % 4) * 32 - 64;
        for (int i = 0; i < 512; i++) {
            b.addEntries(BatchEntry.newBuilder().setX(x0 + i % 32).setY(layer).setZ(i / 32 - 8)
                    .setExpected(up ? "minecraft:stone" : "minecraft:glass").setDesired(up ? "minecraft:glass" : "minecraft:stone"));
        }
        return b.build();
    }

    private static String ms(long[] sorted, double q) {
        return String.format("%.3f", sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))] / 1e6);
    }

    public static void main(String[] args) throws Exception {
        int reads = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        JsonBlockRegistry reg = Main.loadRegistry();
        MemoryWorld world = new MemoryWorld(reg, "00000000-0000-0000-0000-000000000000", "bench", -64, -64, 63, 63);
        TickScheduler sched = new TickScheduler(20);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        AtomicLong cpuAtStart = new AtomicLong();
        sched.everyTick(() -> cpuAtStart.set(mx.getCurrentThreadCpuTime())); // runs before the core's hook
        WorldHostCore core = new WorldHostCore(new HostConfig("bench", "0", "127.0.0.1", 0, false, HostConfig.MAX_BODY,
                Duration.ofSeconds(60), 1), world, sched, Players.NONE, (p, t) -> { });
        AtomicBoolean sampling = new AtomicBoolean();
        List<long[]> samples = java.util.Collections.synchronizedList(new ArrayList<>());
        sched.everyTick(() -> { // after the core's hook: this tick's accounting
            long cpu = mx.getCurrentThreadCpuTime() - cpuAtStart.get();
            if (sampling.get()) {
                TickBudget.Stats s = core.budget().stats();
                samples.add(new long[] {s.lastReadNanos(), s.lastExecutorNanos(), s.lastTotalNanos(), cpu});
            }
        });
        sched.start();
        AtomicBoolean applying = new AtomicBoolean(true);
        AtomicLong applied = new AtomicLong();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            int lane = w;
            Thread t = new Thread(() -> {
                int n = lane;
                while (applying.get()) {
                    String status = core.batchApply(batch("w" + lane + "-" + n, n)).getStatus();
                    if (status.equals("applied")) {
                        applied.addAndGet(512);
                    }
                    n += 2;
                }
            }, "bench-apply-" + w);
            t.setDaemon(true);
            t.start();
            writers.add(t);
        }
        RegionReadParams box = RegionReadParams.newBuilder().setMin(Vec3.newBuilder().setX(-64).setY(-64).setZ(-64))
                .setMax(Vec3.newBuilder().setX(63).setY(63).setZ(63)).build();
        System.out.println("reads of 2,097,152 positions (128^3) beside a continuous apply; budget 5 ms per tick, 20 TPS");
        for (int r = 0; r < reads; r++) {
            samples.clear();
            long blocks0 = applied.get();
            long t0 = System.nanoTime();
            sampling.set(true);
            int palette = core.regionRead(box).getPaletteCount();
            sampling.set(false);
            double secs = (System.nanoTime() - t0) / 1e9;
            long[][] s = samples.toArray(new long[0][]);
            long[] read = java.util.Arrays.stream(s).mapToLong(a -> a[0]).sorted().toArray();
            long[] exec = java.util.Arrays.stream(s).mapToLong(a -> a[1]).sorted().toArray();
            long[] total = java.util.Arrays.stream(s).mapToLong(a -> a[2]).sorted().toArray();
            long[] cpu = java.util.Arrays.stream(s).mapToLong(a -> a[3]).sorted().toArray();
            long over = java.util.Arrays.stream(read).filter(v -> v > 5_000_000L).count();
            long overCpu = java.util.Arrays.stream(cpu).filter(v -> v > 5_000_000L).count();
            System.out.printf("read %d: %.2f s, %d ticks, palette %d, %d blocks applied meanwhile%n", r + 1, secs, s.length,
                    palette, applied.get() - blocks0);
            System.out.printf("  reads per tick (wall)        median %s  p90 %s  p99 %s  max %s ms; ticks above 5 ms: %d%n",
                    ms(read, 0.5), ms(read, 0.9), ms(read, 0.99), ms(read, 1), over);
            System.out.printf("  executor per tick (wall)     median %s  max %s ms%n", ms(exec, 0.5), ms(exec, 1));
            System.out.printf("  core tick total (wall)       median %s  p99 %s  max %s ms%n", ms(total, 0.5),
                    ms(total, 0.99), ms(total, 1));
            System.out.printf("  core tick total (thread CPU) median %s  p99 %s  max %s ms; ticks above 5 ms: %d%n",
                    ms(cpu, 0.5), ms(cpu, 0.99), ms(cpu, 1), overCpu);
        }
        applying.set(false);
        for (Thread t : writers) {
            t.join(10_000);
        }
        sched.close();
    }
}
