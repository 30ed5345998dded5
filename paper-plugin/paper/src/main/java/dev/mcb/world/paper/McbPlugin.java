package dev.mcb.world.paper;

import dev.mcb.world.core.HostConfig;
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
import org.bukkit.plugin.java.JavaPlugin;

/** The plugin: reads config.yml, wires the ports to the core, starts the world-protocol server. */
// Not final: MockBukkit loads a plugin as a generated subclass (tests in src/test, README.md).
public class McbPlugin extends JavaPlugin {
    private RpcServer server;
    private WorldHostCore core;

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
        PaperPlayers players = new PaperPlayers(world);
        WorldHostCore core = new WorldHostCore(cfg, new PaperWorldAccess(world, c.getInt("epoch", 1)),
                new PaperScheduler(this), players, players);
        this.core = core;
        core.chat().projectId(c.getString("project", "default"));
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

    /** The core of the last successful enable (tests: executor stats, event log); null before. */
    WorldHostCore core() {
        return core;
    }

    @Override
    public void onDisable() {
        if (server != null) {
            server.close();
            server = null;
        }
        Bukkit.getScheduler().cancelTasks(this);
    }
}
