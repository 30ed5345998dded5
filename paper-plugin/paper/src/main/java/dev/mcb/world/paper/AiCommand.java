package dev.mcb.world.paper;

import dev.mcb.world.core.BatchExecutor;
import dev.mcb.world.core.McbException;
import dev.mcb.world.core.WorldHostCore;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.bukkit.command.Command;
import org.bukkit.command.CommandExecutor;
import org.bukkit.command.CommandSender;
import org.bukkit.command.TabCompleter;
import org.bukkit.entity.Player;

/**
 * {@code /ai}: stop/resume/status act on the core here and now; everything else (prompts, project,
 * area, undo, camera, protect) is queued for the bridge through the core's chat queue, which the bridge
 * polls and answers. Permissions are checked here (plugin.yml declares them).
 */
final class AiCommand implements CommandExecutor, TabCompleter {
    private static final List<String> SUBS = List.of("stop", "resume", "status", "project", "area", "undo", "camera",
            "protect");
    private final WorldHostCore core;

    AiCommand(WorldHostCore core) {
        this.core = core;
    }

    static String permissionFor(String sub) {
        return switch (sub) {
            case "stop", "cancel" -> "mcb.ai.stop";
            case "resume", "project", "area", "undo", "protect" -> "mcb.ai.manage";
            case "camera" -> "mcb.ai.camera";
            default -> "mcb.ai.use";
        };
    }

    static String idOf(CommandSender sender) {
        return sender instanceof Player p ? p.getUniqueId().toString() : "console";
    }

    @Override
    public boolean onCommand(CommandSender sender, Command command, String label, String[] args) {
        if (args.length == 0) {
            return false;
        }
        String sub = args[0].toLowerCase(Locale.ROOT);
        String perm = permissionFor(sub);
        if (!sender.hasPermission(perm)) {
            sender.sendMessage("[ai] You lack the permission " + perm + ".");
            return true;
        }
        try {
            switch (sub) {
                case "stop", "cancel" -> {
                    int dropped = core.executor().stopActive("/ai stop by " + sender.getName());
                    core.chatFromServerThread(idOf(sender), "cancel");
                    sender.sendMessage("[ai] Stopped: no new batch will start (" + dropped
                            + " queued batch(es) dropped). Written blocks stay. /ai resume to continue.");
                }
                case "resume" -> {
                    core.executor().resume();
                    sender.sendMessage("[ai] Writes resumed.");
                }
                case "status" -> {
                    BatchExecutor.TickStats s = core.executor().stats();
                    sender.sendMessage("[ai] " + (core.executor().paused() ? "PAUSED (" + core.executor().pauseReason() + ")"
                            : "running") + "; queued batches " + core.executor().queued() + "; blocks written "
                            + s.blocks() + "; worst tick " + s.maxOwnNanos() / 1000 + " µs; chat pending "
                            + core.chat().pendingCount() + ", bridge " + (core.chat().activeClient() == null ? "not connected"
                            : "connected"));
                }
                default -> {
                    // prompts and the bridge-side commands (project, area, undo, camera, protect)
                    String text = String.join(" ", args);
                    String queued = SUBS.contains(sub) ? "/ai " + text : text;
                    core.chatFromServerThread(idOf(sender), queued);
                    sender.sendMessage("[ai] Queued for the AI: " + (queued.length() > 80 ? queued.substring(0, 77) + "..." : queued));
                }
            }
        } catch (McbException e) {
            sender.sendMessage("[ai] " + e.getMessage());
        }
        return true;
    }

    @Override
    public List<String> onTabComplete(CommandSender sender, Command command, String alias, String[] args) {
        if (args.length == 1) {
            return SUBS.stream().filter(s -> s.startsWith(args[0].toLowerCase(Locale.ROOT))).toList();
        }
        if (args.length == 2) {
            return switch (args[0].toLowerCase(Locale.ROOT)) {
                case "project" -> Stream.of("create", "use").filter(s -> s.startsWith(args[1])).toList();
                case "area" -> List.of("set");
                case "camera" -> List.of("save");
                default -> List.of();
            };
        }
        return List.of();
    }
}
