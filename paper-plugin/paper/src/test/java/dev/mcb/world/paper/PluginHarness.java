package dev.mcb.world.paper;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.bukkit.configuration.file.YamlConfiguration;
import org.bukkit.permissions.Permission;
import org.bukkit.plugin.Plugin;
import org.mockbukkit.mockbukkit.MockBukkit;
import org.mockbukkit.mockbukkit.ServerMock;
import org.mockbukkit.mockbukkit.plugin.PluginManagerMock;

/**
 * The shared fixture for MockBukkit tests of the real plugin: a {@link ServerMock} with a
 * {@link HarnessWorld} (named {@code world} unless told otherwise), the real {@link McbPlugin}
 * loaded from {@code plugin.yml} with a config.yml and token files written into its data folder
 * before {@code onEnable}, and an HTTP client for its world-protocol server.
 *
 * <p>The server thread is the test thread: MockBukkit runs scheduled tasks only when the test
 * calls {@link #tick()}. An RPC that needs the server thread (world_info, batch_apply, ...) blocks
 * until a tick runs it, so {@link #rpc} sends it from a background thread and ticks the scheduler
 * on the test thread until the answer arrives. Use one harness per test and close it
 * ({@code try (var h = PluginHarness.start())} or {@code @AfterEach}): closing disables the plugin
 * and unmocks the server.
 */
public final class PluginHarness implements AutoCloseable {
    /** Tokens written to {@code <data folder>/secrets/<principal>.token} before the plugin starts. */
    public static final Map<String, String> TOKENS = Map.of("service", "harness-service-token", "admin",
            "harness-admin-token", "automation", "harness-automation-token");
    private static final Pattern LISTENING = Pattern.compile("world protocol on http://([^:/\\s]+):(\\d+)");
    private static final Duration CALL_LIMIT = Duration.ofSeconds(20);

    public final ServerMock server;
    /** The world the plugin builds in, or null for a harness started without one. */
    public final HarnessWorld world;
    private final Map<String, Object> config;
    private final List<LogRecord> log = new CopyOnWriteArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ExecutorService callers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "harness-caller");
        t.setDaemon(true);
        return t;
    });
    private McbPlugin plugin;
    private int port = -1;

    private PluginHarness(String worldName, Map<String, Object> overrides, Path dataFrom) {
        server = MockBukkit.mock();
        world = worldName == null ? null : new HarnessWorld(worldName);
        if (world != null) {
            server.addWorld(world);
        }
        config = new LinkedHashMap<>();
        config.put("port", 0); // an ephemeral port; read back from the plugin's log line
        config.putAll(overrides);
        try {
            load(dataFrom);
        } catch (IOException | RuntimeException e) {
            MockBukkit.unmock();
            throw new IllegalStateException("harness: cannot load the plugin", e);
        }
    }

    /** The plugin enabled on a server with a world named {@code world} and default settings. */
    public static PluginHarness start() {
        return start(Map.of());
    }

    /** As {@link #start()}, with config.yml keys overridden (e.g. {@code "allow-local-automation", true}). */
    public static PluginHarness start(Map<String, Object> config) {
        return new PluginHarness("world", config, null);
    }

    /** A server whose only world is {@code worldName} (the plugin looks for its config's {@code world}). */
    public static PluginHarness startWithWorld(String worldName, Map<String, Object> config) {
        return new PluginHarness(worldName, config, null);
    }

    /**
     * A fresh server process, as after a restart of the real server: a new {@link ServerMock} and
     * a new plugin instance whose data folder starts as a copy of this one's (config, tokens and
     * whatever the plugin persisted). This harness is closed first; the world is new (MockBukkit
     * does not persist worlds), so blocks written before are gone.
     */
    public PluginHarness restartServer() throws IOException {
        Path copy = Files.createTempDirectory("mcb-harness-data");
        Path from = dataFolder();
        disable();
        copyTree(from, copy);
        Map<String, Object> keep = new LinkedHashMap<>(config);
        String worldName = world == null ? null : world.getName();
        close();
        return new PluginHarness(worldName, keep, copy);
    }

    /**
     * As after a crash (kill -9) of the real server: the new server starts from the data folder as the plugin
     * left it while running (every record it answered is fsynced), with no disable, no save and no clean stop.
     * The world is new and empty (MockBukkit does not persist worlds): every write after the last save is lost.
     */
    public PluginHarness crashServer() throws Exception {
        plugin.core().state().sync().get();
        Path copy = Files.createTempDirectory("mcb-harness-data");
        copyTree(dataFolder(), copy);
        Map<String, Object> keep = new LinkedHashMap<>(config);
        String worldName = world == null ? null : world.getName();
        close();
        return new PluginHarness(worldName, keep, copy);
    }

    private void load(Path dataFrom) throws IOException {
        PluginManagerMock pm = server.getPluginManager();
        plugin = (McbPlugin) pm.loadPlugin(McbPlugin.class, new Object[0]);
        Path data = dataFolder();
        if (dataFrom != null) {
            copyTree(dataFrom, data);
        } else {
            YamlConfiguration yml = new YamlConfiguration();
            config.forEach(yml::set);
            Files.createDirectories(data);
            yml.save(data.resolve("config.yml").toFile());
            Path secrets = data.resolve(String.valueOf(config.getOrDefault("token-dir", "secrets")));
            Files.createDirectories(secrets);
            for (Map.Entry<String, String> t : TOKENS.entrySet()) {
                Files.writeString(secrets.resolve(t.getKey() + ".token"), t.getValue() + "\n");
            }
        }
        plugin.getLogger().addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                log.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        List<Permission> perms = new ArrayList<>();
        for (Permission p : plugin.getDescription().getPermissions()) {
            if (pm.getPermission(p.getName()) == null) {
                perms.add(p);
            }
        }
        pm.addPermissions(perms);
        enable();
    }

    /** Enable the plugin (again): {@code onEnable} reads config.yml, binds and logs its port. */
    public void enable() {
        int before = log.size();
        server.getPluginManager().enablePlugin(plugin);
        port = -1;
        for (LogRecord r : log.subList(before, log.size())) {
            Matcher m = LISTENING.matcher(r.getMessage());
            if (m.find()) {
                port = Integer.parseInt(m.group(2));
            }
        }
    }

    /** Disable the plugin as the server does at shutdown or /reload. */
    public void disable() {
        server.getPluginManager().disablePlugin(plugin);
    }

    /** Disable then enable the same instance (a plugin reload); the port may change. */
    public void restartPlugin() {
        disable();
        enable();
    }

    public McbPlugin plugin() {
        return plugin;
    }

    /** The plugin's world-protocol port, or -1 when the last enable did not start the server. */
    public int port() {
        return port;
    }

    public Path dataFolder() {
        return plugin.getDataFolder().toPath();
    }

    /** The token the plugin reads for {@code principal} (from its data folder). */
    public String token(String principal) throws IOException {
        Path dir = dataFolder().resolve(String.valueOf(config.getOrDefault("token-dir", "secrets")));
        return Files.readString(dir.resolve(principal + ".token"), StandardCharsets.UTF_8).strip();
    }

    /** Messages the plugin logged (all levels), oldest first. */
    public List<String> logLines() {
        return log.stream().map(LogRecord::getMessage).toList();
    }

    /** Run one server tick on this (the main) thread: scheduled tasks, the plugin's tick task. */
    public void tick() {
        if (world != null) {
            world.tick(); // chunk loads finish on the server thread (Paper), before the scheduled tasks
        }
        server.getScheduler().performOneTick();
    }

    /**
     * Run {@code call} on a background thread while this thread ticks the server until it returns
     * (at most 20 s). Returns the call's value; {@link #lastTicks()} tells how many ticks it took.
     */
    public <T> T whileTicking(Callable<T> call) throws Exception {
        return ticking(callers.submit(call));
    }

    /** Tick on this thread until {@code f} (e.g. from {@link #rpcAsync}) completes (at most 20 s); its value. */
    public <T> T ticking(Future<T> f) throws Exception {
        long deadline = System.nanoTime() + CALL_LIMIT.toNanos();
        lastTicks = 0;
        while (!f.isDone()) {
            if (System.nanoTime() > deadline) {
                f.cancel(true);
                throw new AssertionError("harness: no answer within " + CALL_LIMIT + " (" + lastTicks + " ticks)");
            }
            tick();
            lastTicks++;
            try {
                f.get(1, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException notYet) {
                // the caller waits for a tick (or for the HTTP round trip): tick again
            }
        }
        return f.get();
    }

    private int lastTicks;

    /** Ticks the last {@link #whileTicking} / {@link #rpc} call ran before its answer arrived. */
    public int lastTicks() {
        return lastTicks;
    }

    /** {@code GET path} on the plugin's server (no server-thread work: no ticking needed). */
    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).timeout(CALL_LIMIT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** {@code POST /v1/rpc} with {@code body} and a bearer token (null: none), sent from a background thread while ticking. */
    public HttpResponse<String> post(String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("/v1/rpc")).timeout(CALL_LIMIT)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpRequest req = b.build();
        return whileTicking(() -> http.send(req, HttpResponse.BodyHandlers.ofString()));
    }

    /**
     * Call {@code method} with {@code paramsJson} as {@code principal} (service, admin, automation)
     * and return the whole envelope ({@code ok}, {@code result} or {@code error}).
     */
    public JsonObject rpc(String principal, String method, String paramsJson) throws Exception {
        HttpResponse<String> r = post(token(principal), "{\"method\":\"" + method + "\",\"params\":" + paramsJson + "}");
        return JsonParser.parseString(r.body()).getAsJsonObject();
    }

    /**
     * Start {@code method} on a background thread and return at once, without ticking: the call
     * waits for the server thread until the test ticks ({@link #ticking}).
     */
    public Future<JsonObject> rpcAsync(String principal, String method, String paramsJson) throws IOException {
        HttpRequest req = HttpRequest.newBuilder(uri("/v1/rpc")).timeout(CALL_LIMIT)
                .header("Authorization", "Bearer " + token(principal))
                .POST(HttpRequest.BodyPublishers.ofString("{\"method\":\"" + method + "\",\"params\":" + paramsJson + "}"))
                .build();
        return callers.submit(() -> JsonParser.parseString(http.send(req, HttpResponse.BodyHandlers.ofString()).body())
                .getAsJsonObject());
    }

    /**
     * {@code batch_apply} params: one entry per position ({@code [x, y, z]}) from {@code expected}
     * to {@code desired}, in the world's epoch 1 unless the config says otherwise.
     */
    public String batch(String batchId, List<int[]> positions, String expected, String desired) {
        StringBuilder b = new StringBuilder("{\"batchId\":\"").append(batchId).append("\",\"worldEpoch\":")
                .append(config.getOrDefault("epoch", 1)).append(",\"operationId\":\"op-").append(batchId)
                .append("\",\"entries\":[");
        for (int i = 0; i < positions.size(); i++) {
            int[] p = positions.get(i);
            b.append(i == 0 ? "" : ",").append("{\"x\":").append(p[0]).append(",\"y\":").append(p[1])
                    .append(",\"z\":").append(p[2]).append(",\"expected\":\"").append(expected)
                    .append("\",\"desired\":\"").append(desired).append("\"}");
        }
        return b.append("]}").toString();
    }

    /** {@code n} positions in a layer at height {@code y}: x 0..31 first, then z (a 32-wide slab). */
    public static List<int[]> slab(int x0, int y, int z0, int n) {
        List<int[]> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new int[] {x0 + i % 32, y, z0 + i / 32});
        }
        return out;
    }

    /**
     * A joined player standing at (0.5, 66, 0.5) in the harness world, op or not. Use this rather
     * than {@code server.addPlayer()}: MockBukkit's player lacks {@code getTargetBlockExact}, which
     * every {@code /ai} line needs ({@link HarnessPlayer}).
     */
    public HarnessPlayer player(String name, boolean op) {
        HarnessPlayer p = new HarnessPlayer(server, name);
        server.addPlayer(p);
        p.setOp(op);
        if (world != null) {
            p.teleport(new org.bukkit.Location(world, 0.5, 66, 0.5));
        }
        return p;
    }

    /** The plugin's core (executor stats, event log, chat queue) from its last enable. */
    public dev.mcb.world.core.WorldHostCore core() {
        return plugin.core();
    }

    /** As {@link #rpc}, expecting {@code ok: true}; returns {@code result}. */
    public JsonObject rpcOk(String principal, String method, String paramsJson) throws Exception {
        JsonObject o = rpc(principal, method, paramsJson);
        if (!o.get("ok").getAsBoolean()) {
            throw new AssertionError(method + " failed: " + o);
        }
        return o.getAsJsonObject("result");
    }

    /** Tasks of this plugin that the scheduler still holds (repeating tick task, queued calls). */
    public long pendingTasks() {
        Plugin p = plugin;
        return server.getScheduler().getPendingTasks().stream().filter(t -> t.getOwner() == p).count();
    }

    private URI uri(String path) {
        if (port < 0) {
            throw new IllegalStateException("the plugin's world-protocol server is not running");
        }
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    @Override
    public void close() {
        // stop the protocol server before the mock goes away, so no in-flight call runs without a server
        if (MockBukkit.isMocked() && plugin != null && plugin.isEnabled()) {
            disable();
        }
        callers.shutdownNow();
        if (MockBukkit.isMocked()) {
            MockBukkit.unmock();
        }
    }
}
