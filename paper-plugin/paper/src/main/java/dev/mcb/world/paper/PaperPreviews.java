package dev.mcb.world.paper;

import dev.mcb.world.core.Previews;
import dev.mcb.world.core.WorldHostCore;
import dev.mcb.world.core.port.ChatLine;
import io.papermc.paper.event.packet.PlayerChunkLoadEvent;
import java.util.List;
import org.bukkit.Bukkit;
import org.bukkit.Location;
import org.bukkit.World;
import org.bukkit.block.data.BlockData;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.PlayerQuitEvent;

/**
 * The preview port over Bukkit: block changes sent to one player's client, never to the world.
 * {@code Player#sendBlockChange(Location, BlockData)} sends one block-update packet to that player's
 * connection only, with the location's position alone (CraftPlayer: the location's world is not checked, so a
 * player in another world would get the blocks drawn into theirs): blocks go only to a player in the plugin's
 * world. The client drops a change in a chunk it has not loaded and forgets a fake block when the server sends
 * the position or its chunk again; {@link PlayerChunkLoadEvent} (a chunk sent to the player) shows the preview
 * again there. Restoring sends each position's real block data.
 */
final class PaperPreviews implements Previews.Port, Listener {
    private final World world;
    private final PaperPlayers players;
    private WorldHostCore core;

    PaperPreviews(World world, PaperPlayers players) {
        this.world = world;
        this.players = players;
    }

    void core(WorldHostCore core) {
        this.core = core;
    }

    private Player inWorld(String playerId) {
        Player p = PaperPlayers.lookup(playerId);
        return p != null && p.isOnline() && p.getWorld().equals(world) ? p : null;
    }

    @Override
    public boolean online(String playerId) {
        return inWorld(playerId) != null;
    }

    @Override
    public void show(String playerId, List<Previews.Block> blocks) {
        Player p = inWorld(playerId);
        if (p == null) {
            return;
        }
        for (Previews.Block b : blocks) {
            BlockData data = Bukkit.createBlockData(b.state()); // IllegalArgumentException for a bad state
            p.sendBlockChange(new Location(world, b.x(), b.y(), b.z()), data);
        }
    }

    @Override
    public void restore(String playerId, List<Previews.Block> blocks) {
        Player p = inWorld(playerId);
        if (p == null) {
            return;
        }
        for (Previews.Block b : blocks) {
            Location at = new Location(world, b.x(), b.y(), b.z());
            p.sendBlockChange(at, world.getBlockAt(at).getBlockData());
        }
    }

    @Override
    public void tell(String playerId, String text) {
        players.tell(playerId, new ChatLine(text, ChatLine.Kind.NOTICE));
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onChunkSent(PlayerChunkLoadEvent e) {
        if (core != null && e.getWorld().equals(world)) {
            core.previews().resend(AiCommand.idOf(e.getPlayer()), e.getChunk().getX(), e.getChunk().getZ());
        }
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onQuit(PlayerQuitEvent e) {
        if (core != null) {
            core.previews().left(AiCommand.idOf(e.getPlayer()));
        }
    }
}
