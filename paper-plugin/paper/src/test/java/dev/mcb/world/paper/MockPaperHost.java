package dev.mcb.world.paper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.bukkit.configuration.file.YamlConfiguration;
import org.bukkit.permissions.Permission;
import org.mockbukkit.mockbukkit.MockBukkit;
import org.mockbukkit.mockbukkit.ServerMock;
import org.mockbukkit.mockbukkit.plugin.PluginManagerMock;
import org.mockbukkit.mockbukkit.util.UnsafeValuesMock;

/**
 * The real plugin as a world host of its own (tests/contract/hosts.py {@code paper_mock}): {@link McbPlugin}
 * inside MockBukkit's {@link ServerMock}, in this JVM, ticked at 20 TPS by one driver thread, serving the
 * world protocol on loopback.
 *
 * <p>The driver thread is the server thread: it creates the server (MockBukkit's main thread is the thread
 * that creates the {@code ServerMock}: {@code isPrimaryThread}, and its {@code AsyncCatcher} refuses a tick,
 * a chunk load or an entity change from any other), the world and the plugin, then runs
 * {@code performOneTick} every 50 ms: the plugin's tick task and every task the protocol threads hand to the
 * scheduler run there, never elsewhere. SIGTERM is a server stop: the driver disables the plugin (its save at
 * disable, its state closed with {@code Bukkit.isStopping()} true) and ends.
 *
 * <p>Environment (the names of the other hosts, tests/contract/hosts.py): MCB_SECRETS_DIR (the plugin's
 * {@code token-dir}), MCB_WORLD_HOST_PORT, MCB_BIND_HOST, MCB_ALLOW_LOCAL_AUTOMATION ("1"),
 * MCB_WORLD_PREGEN ("x0,z0,x1,z1", default -32,-32,31,31: the chunks that exist), MCB_WORLD_DIR (the world's
 * save and uuid, {@link HostWorld}; without it nothing survives a restart), MCB_HOST_DATA_DIR (the plugin's
 * data folder; default MCB_WORLD_DIR/plugin-data), MCB_PROJECT_ID (config {@code project}). Run it with
 * the test classpath of paper-plugin/paper (hosts.py builds it with Maven).
 */
public final class MockPaperHost {
    /** Paper's tick: 50 ms (MinecraftServer's 20 TPS). */
    private static final long TICK_NANOS = 50_000_000L;
    private static volatile boolean stopping;

    private MockPaperHost() {
    }

    /** Minecraft 1.21.11's data version (SharedConstants; the block registry's, blocks-1.21.11.json). */
    static final int DATA_VERSION = 4671;

    /** ServerMock where it answers unlike Paper 1.21.11 for a call the plugin makes. */
    static final class HostServer extends ServerMock {
        private final UnsafeValuesMock unsafe = new UnsafeValuesMock() {
            /** Paper: {@code SharedConstants.getCurrentVersion().dataVersion().version()} (CraftMagicNumbers.java:282, tag 1.21.11); MockBukkit: 1. */
            @Override
            public int getDataVersion() {
                return DATA_VERSION;
            }
        };

        /** Paper: {@code MinecraftServer#hasStopped} (CraftServer.java:2934, tag 1.21.11); MockBukkit throws. */
        @Override
        public boolean isStopping() {
            return stopping;
        }

        @Override
        public UnsafeValuesMock getUnsafe() {
            return unsafe;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> env = System.getenv();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Throwable[] failure = new Throwable[1];
        Thread driver = new Thread(() -> {
            try {
                run(env, started);
            } catch (Throwable t) {
                failure[0] = t;
                t.printStackTrace();
            } finally {
                started.countDown();
                done.countDown();
            }
        }, "Server thread");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping = true;
            try {
                done.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "mock-paper-host stop"));
        driver.start();
        done.await();
        if (failure[0] != null) {
            System.exit(1);
        }
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    private static int[] pregen(String spec) {
        String[] p = spec.split(",");
        int[] out = new int[4];
        for (int i = 0; i < 4; i++) {
            out[i] = Integer.parseInt(p[i].strip());
        }
        return out;
    }

    private static void run(Map<String, String> env, CountDownLatch started) throws Exception {
        String worldDir = env.getOrDefault("MCB_WORLD_DIR", "");
        String dataDir = env.getOrDefault("MCB_HOST_DATA_DIR", "");
        if (dataDir.isBlank() && !worldDir.isBlank()) {
            dataDir = Path.of(worldDir, "plugin-data").toString();
        }
        long t0 = System.nanoTime();
        ServerMock server = MockBukkit.mock(new HostServer());
        long tMock = System.nanoTime();
        McbPlugin plugin;
        Path link = null;
        try {
            HostWorld world = new HostWorld("world", pregen(env.getOrDefault("MCB_WORLD_PREGEN", "-32,-32,31,31")),
                    worldDir.isBlank() ? null : Path.of(worldDir));
            world.load();
            server.addWorld(world);
            PluginManagerMock pm = server.getPluginManager();
            plugin = (McbPlugin) pm.loadPlugin(McbPlugin.class, new Object[0]);
            Path data = plugin.getDataFolder().toPath();
            if (!dataDir.isBlank()) { // the plugin's folder is a temporary one of MockBukkit's: point it at ours
                Path target = Path.of(dataDir).toAbsolutePath();
                Files.createDirectories(target);
                deleteTree(data);
                Files.createDirectories(data.getParent());
                link = Files.createSymbolicLink(data, target);
            }
            writeConfig(env, data);
            List<Permission> perms = new ArrayList<>();
            for (Permission p : plugin.getDescription().getPermissions()) {
                if (pm.getPermission(p.getName()) == null) {
                    perms.add(p);
                }
            }
            pm.addPermissions(perms);
            long tLoad = System.nanoTime();
            warmUp(world);
            long tWarm = System.nanoTime();
            pm.enablePlugin(plugin);
            if (!plugin.isEnabled()) {
                throw new IllegalStateException("the plugin disabled itself at enable (see its log above)");
            }
            System.out.println("mock paper host: MockBukkit " + server.getVersion() + ", world " + world.getName()
                    + " " + world.getUID() + ", plugin enabled (JVM to here " + java.lang.management.ManagementFactory
                    .getRuntimeMXBean().getUptime() + " ms: server " + ms(tMock - t0) + ", world and plugin load "
                    + ms(tLoad - tMock) + ", warm-up " + ms(tWarm - tLoad) + ", enable " + ms(System.nanoTime() - tWarm)
                    + ")");
            String name = env.getOrDefault("MCB_MOCK_PLAYER", "");
            Runnable viewer = name.isBlank() || worldDir.isBlank() ? () -> { } : clientView(server, world, name,
                    Path.of(worldDir, "client-view.json"));
            started.countDown();
            drive(server, world, viewer);
        } finally {
            try {
                // a server stop: disable plugins (the plugin saves the world and closes its state)
                if (MockBukkit.isMocked()) {
                    server.getPluginManager().disablePlugins();
                }
            } finally {
                if (link != null) {
                    Files.deleteIfExists(link); // never let MockBukkit's clean-up walk into the real folder
                }
                if (MockBukkit.isMocked()) {
                    MockBukkit.unmock();
                }
            }
            System.out.println("mock paper host: stopped");
        }
    }

    /**
     * What a server does while it prepares the spawn area before plugins are enabled: blocks, their data and
     * states are touched once, so the first request does not pay MockBukkit's class loading (hundreds of ms
     * in one read unit, which the core's read pacing would take as the cost of every unit for a while).
     */
    private static void warmUp(HostWorld world) {
        for (int y = world.getMinHeight(); y < 80; y++) {
            for (int i = 0; i < 16; i++) {
                var b = world.getBlockAt(i, y, i);
                b.getBlockData().getAsString();
                b.getState(false);
            }
        }
        for (String s : List.of("minecraft:stone", "minecraft:oak_stairs[facing=east]", "minecraft:chest")) {
            org.bukkit.Bukkit.createBlockData(s).getAsString();
        }
    }

    /**
     * {@code MCB_MOCK_PLAYER}: a player of that name online at (0.5, 65, 0.5), whose client view (the fake blocks
     * the plugin sent it, {@link HarnessPlayer}) the returned task writes to {@code file} (tmp + rename) whenever it
     * changed, so the end-to-end tests can see what that player sees (tests/e2e/test_chat_preview_e2e.py).
     */
    private static Runnable clientView(ServerMock server, HostWorld world, String name, Path file) {
        HarnessPlayer p = new HarnessPlayer(server, name);
        server.addPlayer(p);
        p.teleport(new org.bukkit.Location(world, 0.5, 65, 0.5));
        List<String> last = new ArrayList<>(List.of("-"));
        return () -> {
            List<String> now = p.fakeBlocks();
            if (now.equals(last)) {
                return;
            }
            last.clear();
            last.addAll(now);
            com.google.gson.JsonObject o = new com.google.gson.JsonObject();
            o.addProperty("player", name);
            com.google.gson.JsonArray a = new com.google.gson.JsonArray();
            now.forEach(a::add);
            o.add("fake", a);
            try {
                Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
                Files.writeString(tmp, o.toString());
                Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                System.err.println("mock paper host: cannot write " + file + ": " + e);
            }
        };
    }

    /** 20 ticks a second on this thread until SIGTERM; a late tick runs at once (Paper catches up the same way). */
    private static void drive(ServerMock server, HostWorld world, Runnable afterTick) {
        long next = System.nanoTime();
        long slow = 0;
        while (!stopping) {
            long t0 = System.nanoTime();
            try {
                world.tick(); // chunk loads finish on the server thread, before the scheduled tasks (HarnessWorld)
                server.getScheduler().performOneTick();
                afterTick.run();
            } catch (RuntimeException | AssertionError e) {
                // Paper logs a task's exception and goes on (CraftScheduler#mainThreadHeartbeat); so do we, loudly
                System.err.println("mock paper host: a task of tick " + server.getScheduler().getCurrentTick()
                        + " threw:");
                e.printStackTrace();
            }
            long took = System.nanoTime() - t0;
            if (took > TICK_NANOS && ++slow % 20 == 1) {
                System.err.println("mock paper host: a tick took " + took / 1_000_000 + " ms (" + slow + " over 50 ms)");
            }
            next += TICK_NANOS;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            } else if (wait < -1_000_000_000L) {
                next = System.nanoTime(); // more than a second behind: skip ahead instead of racing
            }
        }
    }

    private static void writeConfig(Map<String, String> env, Path data) throws IOException {
        YamlConfiguration yml = new YamlConfiguration();
        yml.set("bind", env.getOrDefault("MCB_BIND_HOST", "127.0.0.1"));
        yml.set("port", Integer.parseInt(env.getOrDefault("MCB_WORLD_HOST_PORT", "8765")));
        yml.set("world", "world");
        yml.set("project", env.getOrDefault("MCB_PROJECT_ID", "default"));
        yml.set("epoch", 1);
        yml.set("token-dir", Path.of(env.getOrDefault("MCB_SECRETS_DIR", ".runtime/secrets")).toAbsolutePath().toString());
        yml.set("allow-local-automation", "1".equals(env.getOrDefault("MCB_ALLOW_LOCAL_AUTOMATION", "0")));
        yml.set("call-timeout-seconds", 30);
        Files.createDirectories(data);
        yml.save(data.resolve("config.yml").toFile());
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }
}
