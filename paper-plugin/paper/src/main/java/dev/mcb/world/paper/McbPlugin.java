package dev.mcb.world.paper;

import dev.mcb.world.core.CameraAccount;
import dev.mcb.world.core.HostConfig;
import dev.mcb.world.core.HostState;
import dev.mcb.world.core.MethodTable;
import dev.mcb.world.core.RpcServer;
import dev.mcb.world.core.SaveSchedule;
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
    private SaveSchedule schedule = SaveSchedule.PAPER_DEFAULTS;
    private String lastDistrust; // the last reason a save event was not taken as a save (logged once)

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
        String folder = c.getString("server-folder", "");
        Path serverFolder = folder == null || folder.isBlank()
                ? getDataFolder().toPath().toAbsolutePath().getParent().getParent() : Path.of(folder);
        schedule = PaperSaveSettings.read(serverFolder, worldFolder(world));
        String why = schedule.distrust();
        getLogger().info("autosave: world-save events every " + schedule.autosaveTicks() + " ticks, chunks every "
                + schedule.chunkIntervalTicks() + " ticks, at most " + schedule.maxChunksPerTick() + " a tick (read from "
                + serverFolder + ")");
        if (why != null) {
            getLogger().warning(why + ". World-save events are not taken as saves of our writes: they count as saved "
                    + "only after the save at disable, and after a crash they are re-checked (README, \"Saves\").");
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
        PaperPreviews previews = new PaperPreviews(world, players);
        previews.core(core);
        core.previews(previews);
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
        getServer().getPluginManager().registerEvents(previews, this);
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

    /** The world's folder, or null where the server cannot say (MockBukkit). */
    private static java.io.File worldFolder(World world) {
        try {
            return world.getWorldFolder();
        } catch (RuntimeException notImplemented) {
            return null;
        }
    }

    /**
     * A {@code WorldSaveEvent} on Paper is not a chunk save: the autosave fires it while the chunks are written
     * on timers of their own ({@link SaveSchedule}). Where the settings make each chunk changed before one
     * event written before the next one, an event covers the records handed over before the <i>previous</i>
     * event (a period for the I/O to finish); otherwise, or while the world's autosave is off
     * ({@code /save-off}), it covers nothing and the chain starts again. A clean stop saves with a flush.
     */
    private final class SaveListener implements Listener {
        @EventHandler(priority = EventPriority.MONITOR)
        public void onSave(WorldSaveEvent e) {
            if (state == null || !e.getWorld().equals(world)) {
                return;
            }
            String why = !world.isAutoSave() ? "autosave is off for world " + world.getName() + " (/save-off)"
                    : schedule.distrust(world.getChunkCount());
            if (why != null) {
                if (!why.equals(lastDistrust)) {
                    getLogger().warning("world save event not taken as a save of our writes: " + why);
                }
                lastDistrust = why;
                saveMark = -1;
                return;
            }
            lastDistrust = null;
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
        if (state != null && (core == null || world == null)) {
            // the enable failed after the state was opened: nothing was written by this process; close it
            // (not as a stop the next start can continue from)
            try {
                state.close(false, 0);
            } catch (IOException | RuntimeException e) {
                getLogger().warning("state not closed cleanly: " + e.getMessage());
            }
            state = null;
        }
        if (state != null) {
            boolean stopping = stopping();
            try {
                long mark = state.saveMark();
                // flush: save() is save(false), which hands the chunks to the I/O threads and returns before
                // they are written (paper-api World.java l.2467, CraftWorld.java l.1134)
                world.save(true);
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
