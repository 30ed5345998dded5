package dev.mcb.world.paper;

import dev.mcb.world.core.CameraAccount;
import dev.mcb.world.core.HostConfig;
import dev.mcb.world.core.HostState;
import dev.mcb.world.core.MethodTable;
import dev.mcb.world.core.RpcServer;
import dev.mcb.world.core.Tokens;
import dev.mcb.world.core.WorldHostCore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.bukkit.Bukkit;
import org.bukkit.World;
import org.bukkit.command.PluginCommand;
import org.bukkit.configuration.file.FileConfiguration;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.world.WorldSaveEvent;
import org.bukkit.plugin.java.JavaPlugin;

/**
 * The plugin: reads config.yml, wires the ports to the core, starts the world-protocol server. The pause
 * flag, idempotency records and event tail live in {@code <plugin folder>/state/} ({@link HostState});
 * world saves are reported to it (README, *Restarts*).
 */
// Not final: MockBukkit loads a plugin as a generated subclass (tests in src/test, README.md).
public class McbPlugin extends JavaPlugin {
    private RpcServer server;
    private WorldHostCore core;
    private HostState state;
    private World world;
    private long saveMark = -1; // the state's mark when the world's previous save began

    @Override
    public void onEnable() {
        saveDefaultConfig();
        FileConfiguration c = getConfig();
        World world = Bukkit.getWorld(c.getString("world", "world"));
        if (world == null) {
            getLogger().severe("world '" + c.getString("world") + "' is not loaded; set `world` in config.yml. Disabled.");
            getServer().getPluginManager().disablePlugin(this);
            return;
        }
        boolean automation = c.getBoolean("allow-local-automation", false);
        HostConfig cfg = new HostConfig("paper-plugin", getPluginMeta().getVersion(), c.getString("bind", "127.0.0.1"),
                c.getInt("port", 8765), automation, HostConfig.MAX_BODY,
                Duration.ofSeconds(Math.max(1, c.getInt("call-timeout-seconds", 30))), 4);
        PaperPlayers players = new PaperPlayers();
        PaperWorldAccess access = new PaperWorldAccess(world, c.getInt("epoch", 1));
        try {
            state = HostState.open(getDataFolder().toPath().resolve("state"));
        } catch (IOException e) {
            getLogger().severe("cannot open the plugin's state folder: " + e.getMessage() + ". Disabled.");
            getServer().getPluginManager().disablePlugin(this);
            return;
        }
        if (!state.repairNote().isEmpty()) {
            getLogger().warning("state: " + state.repairNote());
        }
        PaperScheduler scheduler = new PaperScheduler(this);
        WorldHostCore core = new WorldHostCore(cfg, access, scheduler, players, players, state);
        this.core = core;
        this.world = world;
        var restart = state.restartInfo();
        getLogger().info("previous stop: " + restart.getPreviousStop() + "; " + state.batches().size()
                + " batch records, " + state.tail().size() + " events restored"
                + (restart.getDoubtfulBatches() > 0 ? "; " + restart.getDoubtfulBatches()
                + " applied batches were not covered by a world save (a replay re-checks them)" : ""));
        // the restart check re-reads our unsaved writes off the server thread's back: chunks held asynchronously,
        // positions read by the tick in budgeted slices (WorldHostCore#verifyRestart); world_info says "being
        // checked" until it is done
        HostState st = state;
        Thread check = new Thread(() -> {
            try {
                core.verifyRestart();
                if (st.restartInfo().getLostWrites() > 0) {
                    getLogger().warning(st.restartNote());
                }
            } catch (RuntimeException e) {
                getLogger().warning("could not check the writes after the last save: " + e);
            }
        }, "mcb-restart-check");
        check.setDaemon(true);
        check.start();
        core.chat().projectId(c.getString("project", "default"));
        core.cameraAccount(cameraAccount(c, world));
        core.serverVersion(Bukkit.getName() + " " + Bukkit.getVersion());
        Path tokenDir = getDataFolder().toPath().resolve(c.getString("token-dir", "secrets"));
        try {
            // First start: the service and admin tokens the stack will use (never the agent's).
            if (!Tokens.ensureFiles(tokenDir, System.getenv(), "service", "admin").isEmpty()) {
                getLogger().info("created " + tokenDir.resolve("service.token") + " and admin.token (owner-only); "
                        + "keep them secret");
            }
            server = new RpcServer(core, Tokens.load(tokenDir, System.getenv()), MethodTable.load());
        } catch (IOException e) {
            getLogger().severe("cannot start the world protocol server: " + e.getMessage() + ". Disabled.");
            getServer().getPluginManager().disablePlugin(this);
            return;
        }
        server.start();
        getServer().getPluginManager().registerEvents(new BlockListener(core, world), this);
        getServer().getPluginManager().registerEvents(new SaveListener(), this);
        PluginCommand ai = getCommand("ai");
        if (ai != null) {
            AiCommand cmd = new AiCommand(core);
            ai.setExecutor(cmd);
            ai.setTabCompleter(cmd);
        }
        String url = "http://" + server.address().getHostString() + ":" + server.port();
        getLogger().info("world protocol on " + url + " for world " + world.getName()
                + (automation ? " (local automation ON)" : ""));
        getLogger().info("point the stack at this server: mcb up --world-host " + url + " --world-host-token-file "
                + tokenDir.toAbsolutePath().resolve("service.token"));
    }

    /** config.yml {@code camera:} (issue 17); a malformed area is logged and left out. */
    private CameraAccount cameraAccount(FileConfiguration c, World world) {
        java.util.List<CameraAccount.Area> areas = new java.util.ArrayList<>();
        for (String a : c.getStringList("camera.areas")) {
            try {
                areas.add(CameraAccount.Area.parse(a));
            } catch (IllegalArgumentException e) {
                getLogger().warning("camera.areas: ignoring '" + a + "': " + e.getMessage());
            }
        }
        String account = c.getString("camera.account", "");
        if (account != null && !account.isBlank()) {
            getLogger().info("camera account " + account + ": " + areas.size() + " allowed area(s)");
        }
        return new CameraAccount(new CameraAccount.Settings(account, world.getName(), areas,
                Math.max(0, c.getLong("camera.chunk-wait-ms", 10_000))),
                new PaperCameraAccount(world, c.getInt("camera.chunk-radius", 4)), System::currentTimeMillis);
    }

    /** The core of the last successful enable (tests: executor stats, event log); null before. */
    WorldHostCore core() {
        return core;
    }

    /**
     * WorldSaveEvent fires when a save <i>begins</i>; with Paper the chunk data is written by its I/O
     * threads afterwards. So a save covers the records handed over before the <i>previous</i> save began
     * (one autosave period is the time we trust the I/O to finish); a clean stop saves synchronously.
     */
    private final class SaveListener implements Listener {
        @EventHandler(priority = EventPriority.MONITOR)
        public void onSave(WorldSaveEvent e) {
            if (state == null || !e.getWorld().equals(world)) {
                return;
            }
            long now = state.saveMark();
            if (saveMark >= 0) {
                state.saved(saveMark);
            }
            saveMark = now;
        }
    }

    @Override
    public void onDisable() {
        if (server != null) {
            server.close();
            server = null;
        }
        Bukkit.getScheduler().cancelTasks(this);
        if (state != null) {
            boolean stopping = stopping();
            try {
                long mark = state.saveMark();
                world.save(); // synchronous: the blocks of every answered batch are on disk after this
                state.saved(mark);
            } catch (RuntimeException e) {
                getLogger().warning("world save at disable failed (" + e + "); unsaved batches stay doubtful");
            }
            try {
                // the server stopping: nothing changes the world unobserved until the next start
                state.close(stopping, core.revisions().high());
            } catch (IOException e) {
                getLogger().warning("state not closed cleanly: " + e.getMessage());
            }
            state = null;
        }
    }

    private static boolean stopping() {
        try {
            return Bukkit.isStopping();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}
