package dev.mcb.world.paper;

import dev.mcb.world.core.BatchExecutor;
import dev.mcb.world.core.ChatCommands;
import dev.mcb.world.core.McbException;
import dev.mcb.world.core.WorldHostCore;
import dev.mcb.world.core.port.ChatLine;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.format.NamedTextColor;
import org.bukkit.command.Command;
import org.bukkit.command.CommandExecutor;
import org.bukkit.command.CommandSender;
import org.bukkit.command.TabCompleter;
import org.bukkit.entity.Player;

/**
 * {@code /ai}: a line is a command only when it is exactly one ({@link ChatCommands}, the rule the test
 * host and the embedded host share); anything else is a prompt for the AI. {@code resume} and
 * {@code status} act on the core here and now ({@code status} also asks the bridge about the player's
 * project); {@code stop} pauses every write for holders of {@code mcb.ai.stop} and otherwise stops only the
 * player's own requests (the bridge does that); {@code project}, {@code area}, {@code undo},
 * {@code protect} and {@code camera} are answered by the bridge. {@code preview} hides or shows the player's
 * prepared plan here (client-side blocks, {@link dev.mcb.world.core.Previews}); {@code apply} and
 * {@code reject} decide on it in the bridge, which then clears the preview. Permissions are checked here (plugin.yml
 * declares them); every reply is an Adventure component ({@link #line}).
 */
final class AiCommand implements CommandExecutor, TabCompleter {
    static final List<String> FIRST_WORDS = List.of("stop", "resume", "status", "project", "area", "undo", "protect",
            "camera", "preview", "apply", "reject");
    private final WorldHostCore core;

    AiCommand(WorldHostCore core) {
        this.core = core;
    }

    /**
     * The permission a command (by its first word) needs beyond {@code mcb.ai.use}, which /ai itself
     * requires; null for {@code stop} (one's own requests; {@code mcb.ai.stop} widens it to every write) and
     * {@code status}.
     */
    static String permissionFor(String firstWord) {
        return switch (firstWord) {
            case "resume", "project", "area", "undo", "protect" -> "mcb.ai.manage";
            case "camera" -> "mcb.ai.camera";
            default -> null;
        };
    }

    static String idOf(CommandSender sender) {
        return sender instanceof Player p ? p.getUniqueId().toString() : "console";
    }

    /** A line as players see it: "[ai] " then the text, coloured by kind. */
    static Component line(ChatLine l) {
        NamedTextColor colour = switch (l.kind()) {
            case INFO -> NamedTextColor.WHITE;
            case PROGRESS -> NamedTextColor.GRAY;
            case ERROR -> NamedTextColor.RED;
            case NOTICE -> NamedTextColor.YELLOW;
        };
        String text = l.text().startsWith("[ai] ") ? l.text().substring(5) : l.text();
        return Component.text("[ai] ", NamedTextColor.DARK_AQUA).append(Component.text(text, colour));
    }

    private static void tell(CommandSender sender, ChatLine l) {
        sender.sendMessage(line(l));
    }

    @Override
    public boolean onCommand(CommandSender sender, Command command, String label, String[] args) {
        String text = String.join(" ", args).strip();
        if (text.isEmpty()) {
            tell(sender, ChatLine.info("/ai <request> talks to the AI builder; commands: stop, resume, status, "
                    + "project create|use <name>, area set <radius>|<x1 y1 z1 x2 y2 z2>, undo [op], "
                    + "protect <part> [off], camera save <name>, preview, apply, reject"));
            return true;
        }
        Optional<ChatCommands.Command> parsed = ChatCommands.parse(text);
        String perm = parsed.map(c -> permissionFor(c.name().split(" ")[0])).orElse(null);
        if (perm != null && !sender.hasPermission(perm)) {
            tell(sender, ChatLine.error("You lack the permission " + perm + " for /ai " + parsed.get().name() + "."));
            return true;
        }
        try {
            if (parsed.isEmpty()) {
                core.chatFromServerThread(idOf(sender), text);
                tell(sender, new ChatLine("Queued for the AI: " + (text.length() > 80 ? text.substring(0, 77) + "..."
                        : text), ChatLine.Kind.PROGRESS));
                return true;
            }
            switch (parsed.get().name()) {
                case "stop" -> stop(sender, text);
                case "resume" -> core.executor().resume().whenComplete((ok, err) -> tell(sender, err == null
                        ? ChatLine.info("Writes resumed.")
                        : ChatLine.error("Writes stay paused: the plugin cannot store its state ("
                                + (err.getCause() != null ? err.getCause() : err).getMessage() + "); see the server log.")));
                case "status" -> {
                    tell(sender, ChatLine.info(hostStatus()));
                    if (core.chat().activeClient() != null) {
                        core.chatFromServerThread(idOf(sender), text); // the bridge adds the player's project
                    }
                }
                case "preview" -> tell(sender, core.previews().toggle(idOf(sender))
                        .map(v -> ChatLine.info(v.shown()
                                ? "Showing plan " + v.planId() + " (" + v.blocks().size() + " blocks, only you see them). "
                                + "/ai apply builds it, /ai reject drops it."
                                : "Plan " + v.planId() + " hidden: you see the real blocks. /ai preview shows it again."))
                        .orElse(ChatLine.info("No prepared plan to preview. Ask /ai for a build first.")));
                default -> {
                    core.chatFromServerThread(idOf(sender), text);
                    tell(sender, new ChatLine("Sent to the AI bridge: " + text, ChatLine.Kind.PROGRESS));
                }
            }
        } catch (McbException e) {
            tell(sender, ChatLine.error(e.getMessage()));
        }
        return true;
    }

    private void stop(CommandSender sender, String text) {
        if (sender.hasPermission("mcb.ai.stop")) {
            int dropped = core.executor().stopActive("/ai stop by " + sender.getName());
            core.chatFromServerThread(idOf(sender), text, true);
            tell(sender, ChatLine.info("Stopped: no new batch will start (" + dropped
                    + " queued batch(es) dropped). Written blocks stay. /ai resume to continue."));
        } else {
            core.chatFromServerThread(idOf(sender), text, false);
            tell(sender, new ChatLine("Stopping your requests...", ChatLine.Kind.PROGRESS));
        }
    }

    private String hostStatus() {
        BatchExecutor ex = core.executor();
        BatchExecutor.TickStats s = ex.stats();
        return (ex.paused() ? "PAUSED (" + ex.pauseReason() + ")" : "running") + "; queued batches " + ex.queued()
                + "; blocks written " + s.blocks() + "; worst tick " + s.maxOwnNanos() / 1000 + " µs; chat pending "
                + core.chat().pendingCount() + ", bridge " + (core.chat().activeClient() == null ? "not connected"
                : "connected");
    }

    @Override
    public List<String> onTabComplete(CommandSender sender, Command command, String alias, String[] args) {
        String last = args.length == 0 ? "" : args[args.length - 1].toLowerCase(Locale.ROOT);
        List<String> options = switch (args.length) {
            case 1 -> FIRST_WORDS.stream().filter(w -> allowed(sender, w)).toList();
            case 2 -> switch (args[0].toLowerCase(Locale.ROOT)) {
                case "project" -> allowed(sender, "project") ? List.of("create", "use") : List.of();
                case "area" -> allowed(sender, "area") ? List.of("set") : List.of();
                case "camera" -> allowed(sender, "camera") ? List.of("save") : List.of();
                default -> List.of();
            };
            case 3 -> args[0].equalsIgnoreCase("protect") && allowed(sender, "protect") ? List.of("off") : List.of();
            default -> List.of();
        };
        return options.stream().filter(o -> o.startsWith(last)).toList();
    }

    private static boolean allowed(CommandSender sender, String firstWord) {
        String perm = permissionFor(firstWord);
        return perm == null || sender.hasPermission(perm);
    }
}
