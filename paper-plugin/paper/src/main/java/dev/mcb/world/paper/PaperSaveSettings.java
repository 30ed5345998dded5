package dev.mcb.world.paper;

import dev.mcb.world.core.SaveSchedule;
import java.io.File;
import java.nio.file.Path;
import org.bukkit.configuration.file.YamlConfiguration;

/**
 * The autosave settings a world-save event depends on ({@link SaveSchedule}), read from the server's files as
 * Paper 1.21.11 lays them out: {@code ticks-per.autosave} in bukkit.yml (default 6000),
 * {@code chunks.auto-save-interval} and {@code chunks.max-auto-save-chunks-per-tick} in
 * config/paper-world-defaults.yml, overridden by the world folder's paper-world.yml
 * (paper-server/src/main/java/io/papermc/paper/configuration/WorldConfiguration.java l.504-505: defaults
 * {@code AutosavePeriod.def()} and 24; type/fallback/AutosavePeriod.java: {@code default} or a negative value
 * is the server's autosave period). There is no API for them (Server.Spigot#getPaperConfig is deprecated for
 * removal), so the files are read; a missing file or key is Paper's default. Values from a server started with
 * other file locations (--bukkit-settings, --paper-settings-directory) are not seen: config.yml
 * {@code server-folder} names the folder to read.
 */
final class PaperSaveSettings {
    private PaperSaveSettings() {}

    static SaveSchedule read(Path serverFolder, File worldFolder) {
        YamlConfiguration bukkit = YamlConfiguration.loadConfiguration(serverFolder.resolve("bukkit.yml").toFile());
        int autosave = bukkit.getInt("ticks-per.autosave", SaveSchedule.PAPER_DEFAULTS.autosaveTicks());
        YamlConfiguration defaults = YamlConfiguration.loadConfiguration(
                serverFolder.resolve("config").resolve("paper-world-defaults.yml").toFile());
        YamlConfiguration world = worldFolder == null ? new YamlConfiguration()
                : YamlConfiguration.loadConfiguration(new File(worldFolder, "paper-world.yml"));
        Object interval = value(world, defaults, "chunks.auto-save-interval");
        int chunkInterval = interval instanceof Number n ? n.intValue()
                : interval instanceof String s && s.strip().matches("-?\\d+") ? Integer.parseInt(s.strip()) : -1;
        if (chunkInterval < 0) { // "default" (or absent): the server's autosave period
            chunkInterval = autosave;
        }
        Object perTick = value(world, defaults, "chunks.max-auto-save-chunks-per-tick");
        int max = perTick instanceof Number n ? n.intValue() : SaveSchedule.PAPER_DEFAULTS.maxChunksPerTick();
        return new SaveSchedule(autosave, chunkInterval, max);
    }

    private static Object value(YamlConfiguration world, YamlConfiguration defaults, String key) {
        Object w = world.get(key);
        return w != null && !"default".equals(String.valueOf(w).strip()) ? w : defaults.get(key);
    }
}
