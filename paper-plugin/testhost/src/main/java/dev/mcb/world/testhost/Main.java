package dev.mcb.world.testhost;

import dev.mcb.world.core.HostConfig;
import dev.mcb.world.core.HostState;
import dev.mcb.world.core.MethodTable;
import dev.mcb.world.core.RpcServer;
import dev.mcb.world.core.Tokens;
import dev.mcb.world.core.WorldHostCore;
import dev.mcb.world.core.port.Players;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

/**
 * The Java world host over an in-memory flat world, for the conformance suite (tests/contract).
 * Environment (same names as the embedded host): MCB_SECRETS_DIR, MCB_WORLD_HOST_PORT, MCB_BIND_HOST,
 * MCB_ALLOW_LOCAL_AUTOMATION, MCB_WORLD_PREGEN ("x0,z0,x1,z1", default -32,-32,31,31),
 * MCB_WORLD_DIR (optional: the world uuid in world-uuid.txt and the world save world.bin, written like a
 * game server's save: every MCB_HOST_SAVE_SECONDS, default 300 as Paper's autosave, 0 = only at a clean
 * stop; a kill -9 loses the blocks changed since), MCB_HOST_DATA_DIR (the plugin's data folder: pause flag,
 * idempotency records, event tail; default MCB_WORLD_DIR/plugin-data; without either nothing survives a
 * restart), MCB_PROJECT_ID (the chat queue's project, default "default"; the embedded host reads config.json).
 * SIGTERM is a clean stop: the world is saved, then the state closed.
 */
public final class Main {
    public static final String VERSION = "0.1.0";

    private Main() {
    }

    public static JsonBlockRegistry loadRegistry() throws IOException {
        try (InputStream in = Main.class.getResourceAsStream("/mcb/registry/blocks-1.21.11.json")) {
            if (in == null) {
                throw new IOException("the block registry is not bundled (build with Maven from the repository)");
            }
            return new JsonBlockRegistry("1.21.11", 4671, in.readAllBytes());
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> env = System.getenv();
        Path secrets = Path.of(env.getOrDefault("MCB_SECRETS_DIR", ".runtime/secrets"));
        int port = Integer.parseInt(env.getOrDefault("MCB_WORLD_HOST_PORT", "8765"));
        String bind = env.getOrDefault("MCB_BIND_HOST", "127.0.0.1");
        boolean automation = "1".equals(env.getOrDefault("MCB_ALLOW_LOCAL_AUTOMATION", "0"));
        String[] pg = env.getOrDefault("MCB_WORLD_PREGEN", "-32,-32,31,31").split(",");
        String uuid = UUID.randomUUID().toString();
        String worldDir = env.get("MCB_WORLD_DIR");
        if (worldDir != null && !worldDir.isBlank()) {
            Path f = Path.of(worldDir, "world-uuid.txt");
            Files.createDirectories(f.getParent());
            if (Files.exists(f)) {
                uuid = Files.readString(f, StandardCharsets.UTF_8).strip();
            } else {
                Files.writeString(f, uuid + "\n", StandardCharsets.UTF_8);
            }
        }
        JsonBlockRegistry registry = loadRegistry();
        MemoryWorld world = new MemoryWorld(registry, uuid, "mcb java test world", Integer.parseInt(pg[0].strip()),
                Integer.parseInt(pg[1].strip()), Integer.parseInt(pg[2].strip()), Integer.parseInt(pg[3].strip()));
        Path worldFile = worldDir == null || worldDir.isBlank() ? null : Path.of(worldDir, "world.bin");
        if (worldFile != null && Files.exists(worldFile)) {
            world.load(worldFile);
        }
        String dataDir = env.getOrDefault("MCB_HOST_DATA_DIR", "");
        if (dataDir.isBlank() && worldDir != null && !worldDir.isBlank()) {
            dataDir = Path.of(worldDir, "plugin-data").toString();
        }
        HostState state = dataDir.isBlank() ? null : HostState.open(Path.of(dataDir));
        if (state != null) {
            if (!state.repairNote().isEmpty()) {
                System.out.println("mcb java test host: state: " + state.repairNote());
            }
            state.verifyRestart(world); // the tick thread has not started: this thread is the server thread
            System.out.println("mcb java test host: previous stop " + state.restartInfo().getPreviousStop()
                    + ", " + state.batches().size() + " batch records, " + state.tail().size() + " events restored");
        }
        TickScheduler scheduler = new TickScheduler(20);
        HostConfig cfg = new HostConfig("java-testhost", VERSION, bind, port, automation, HostConfig.MAX_BODY,
                java.time.Duration.ofSeconds(30), 4);
        WorldHostCore core = new WorldHostCore(cfg, world, scheduler, Players.NONE,
                (player, text) -> System.out.println("[chat -> " + player + "] " + text), state);
        long saveTicks = Math.round(Double.parseDouble(env.getOrDefault("MCB_HOST_SAVE_SECONDS", "300")) * 20);
        if (worldFile != null && saveTicks > 0) {
            long[] ticks = {0};
            scheduler.everyTick(() -> { // after the core's tick, like the game's autosave at the end of a tick
                if (++ticks[0] % saveTicks == 0) {
                    saveWorld(world, worldFile, state);
                }
            });
        }
        core.chat().projectId(env.getOrDefault("MCB_PROJECT_ID", "default"));
        String camera = env.getOrDefault("MCB_CAMERA_ACCOUNT", "");
        if (!camera.isBlank()) { // a simulated spectator camera account (SimulatedCamera)
            core.cameraAccount(SimulatedCamera.account(camera, env.getOrDefault("MCB_CAMERA_AREAS", ""), 2_000));
        }
        RpcServer server = new RpcServer(core, Tokens.load(secrets, env), MethodTable.load());
        scheduler.start();
        server.start();
        System.out.println("mcb java test host: http://" + server.address().getHostString() + ":" + server.port()
                + " (instance " + core.instance() + ", automation " + (automation ? "on" : "off") + ")");
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            scheduler.close(); // waits for the tick thread: nothing touches the world after this
            if (worldFile != null) {
                saveWorld(world, worldFile, state);
            }
            if (state != null) {
                try {
                    state.close(true, core.revisions().high());
                } catch (IOException e) {
                    System.err.println("mcb java test host: state not closed cleanly: " + e.getMessage());
                }
            }
            done.countDown();
        }));
        done.await();
    }

    /** The game's save: the world file first, then the state learns which records it covers. */
    static void saveWorld(MemoryWorld world, Path file, HostState state) {
        long mark = state == null ? 0 : state.saveMark();
        try {
            world.save(file);
        } catch (IOException e) {
            System.err.println("mcb java test host: world save failed: " + e.getMessage());
            return;
        }
        if (state != null) {
            state.saved(mark);
        }
    }
}
