package dev.mcb.world.paper;

import dev.mcb.world.core.CameraAccount;
import org.bukkit.Chunk;
import org.bukkit.GameMode;
import org.bukkit.Location;
import org.bukkit.World;
import org.bukkit.entity.Player;

/**
 * The camera account over Bukkit (rules in {@link CameraAccount}; called on the server thread):
 * spectator mode, teleport in the plugin's world, and which chunks around it the server has sent
 * to that player (Paper's {@code Player#isChunkSent}).
 */
final class PaperCameraAccount implements CameraAccount.Port {
    private final World world;
    private final int radius;

    PaperCameraAccount(World world, int radius) {
        this.world = world;
        this.radius = Math.max(0, radius);
    }

    @Override
    public boolean moveSpectator(String account, double x, double y, double z, float yaw, float pitch) {
        Player p = PaperPlayers.lookup(account);
        if (p == null) {
            return false;
        }
        if (p.getGameMode() != GameMode.SPECTATOR) {
            p.setGameMode(GameMode.SPECTATOR);
        }
        return p.teleport(new Location(world, x, y, z, yaw, pitch));
    }

    @Override
    public int chunksPending(String account) {
        Player p = PaperPlayers.lookup(account);
        if (p == null) {
            return -1;
        }
        Location l = p.getLocation();
        int r = Math.min(radius, p.getSendViewDistance());
        int cx = l.getBlockX() >> 4, cz = l.getBlockZ() >> 4, pending = 0;
        for (int dx = -r; dx <= r; dx++) {
            for (int dz = -r; dz <= r; dz++) {
                if (!p.isChunkSent(Chunk.getChunkKey(cx + dx, cz + dz))) {
                    pending++;
                }
            }
        }
        return pending;
    }
}
