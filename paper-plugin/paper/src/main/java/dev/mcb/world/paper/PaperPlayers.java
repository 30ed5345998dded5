package dev.mcb.world.paper;

import dev.mcb.world.core.port.ChatLine;
import dev.mcb.world.core.port.ChatSink;
import dev.mcb.world.core.port.Players;
import java.util.Optional;
import java.util.UUID;
import net.kyori.adventure.text.Component;
import org.bukkit.Bukkit;
import org.bukkit.Location;
import org.bukkit.block.Block;
import org.bukkit.entity.Player;

/** Players and ChatSink over Bukkit. Player ids are UUID strings (names accepted too). */
final class PaperPlayers implements Players, ChatSink {
    static Player lookup(String id) {
        try {
            return Bukkit.getPlayer(UUID.fromString(id));
        } catch (IllegalArgumentException notUuid) {
            return Bukkit.getPlayerExact(id);
        }
    }

    @Override
    public Optional<PlayerView> find(String playerId) {
        Player p = lookup(playerId);
        if (p == null) {
            return Optional.empty();
        }
        Location l = p.getLocation();
        Block t = p.getTargetBlockExact(64);
        return Optional.of(new PlayerView(p.getUniqueId().toString(), p.getName(), l.getWorld().getName(), l.getX(),
                l.getY(), l.getZ(), l.getYaw(), l.getPitch(),
                t == null ? null : new int[] {t.getX(), t.getY(), t.getZ()},
                t == null ? null : t.getBlockData().getAsString()));
    }

    @Override
    public void tell(String playerId, String text) {
        tell(playerId, ChatLine.info(text));
    }

    /** Components, never legacy section-sign strings (the core removed any from the text already). */
    @Override
    public void tell(String playerId, ChatLine line) {
        Component message = AiCommand.line(line);
        Runnable r = () -> {
            Player p = lookup(playerId);
            if (p != null) {
                p.sendMessage(message);
            }
        };
        if (Bukkit.isPrimaryThread()) {
            r.run();
        } else {
            Bukkit.getScheduler().runTask(Bukkit.getPluginManager().getPlugin("MinecraftBuilderMcp"), r);
        }
    }
}
