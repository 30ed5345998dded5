package dev.mcb.world.paper;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.bukkit.FluidCollisionMode;
import org.bukkit.Location;
import org.bukkit.block.Block;
import org.bukkit.block.BlockState;
import org.bukkit.block.data.BlockData;
import org.bukkit.util.Vector;
import org.mockbukkit.mockbukkit.ServerMock;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * MockBukkit's player plus {@code getTargetBlockExact}, which MockBukkit 4.116 leaves unimplemented
 * ({@code UnimplementedOperationException}) and the adapter calls for the player context of every
 * {@code /ai} line: steps along the look direction from the eye (0.05 blocks) to the first block
 * that is not air, within the distance.
 *
 * <p>It also keeps what this player's client shows, because MockBukkit 4.116.3's {@code sendBlockChange} does
 * nothing and its {@code sendBlockChanges} throws {@code UnimplementedOperationException}. Modelled on Paper
 * 1.21.11's {@code CraftPlayer#sendBlockChange(Location, BlockData)} / {@code #sendBlockChanges}
 * (paper-server/src/main/java/org/bukkit/craftbukkit/entity/CraftPlayer.java: nothing when the connection is
 * gone; otherwise one block-update packet to this player's connection with the location's block position only,
 * its world never checked) and on the client (net.minecraft.client.multiplayer.ClientLevel / ClientChunkCache):
 * a change in a chunk the client has not loaded (outside the server's view distance around the player, the
 * chunks Paper's ChunkMap sends) is dropped; a fake block is forgotten when the server sends
 * that position again (any real change there) or its chunk again ({@link #chunkResent}). As strict as Paper:
 * a change sent while the player is in another world lands in that world's view at the same coordinates.
 */
public class HarnessPlayer extends PlayerMock {
    public HarnessPlayer(ServerMock server, String name) {
        super(server, name, UUID.nameUUIDFromBytes(("harness:" + name).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /** A fake block on this client: the data sent and the real block's data when it was sent. */
    private record Fake(BlockData shown, BlockData realThen) {
    }

    private final Map<String, Map<Long, Fake>> fakes = new HashMap<>(); // world name -> position -> fake
    private int packets;

    private static long key(int x, int y, int z) {
        return ((long) x & 0x3FFFFFFL) << 38 | ((long) z & 0x3FFFFFFL) << 12 | (y & 0xFFFL);
    }

    @Override
    public void sendBlockChange(Location loc, BlockData block) {
        com.google.common.base.Preconditions.checkNotNull(loc, "Location cannot be null");
        com.google.common.base.Preconditions.checkNotNull(block, "Block cannot be null");
        if (!isOnline()) {
            return;
        }
        packets++;
        org.bukkit.World w = getWorld(); // the client's world; loc's world is not looked at (as in CraftPlayer)
        int x = loc.getBlockX(), y = loc.getBlockY(), z = loc.getBlockZ();
        if (!clientHasChunk(x >> 4, z >> 4)) {
            return; // the client has no such chunk: the packet changes nothing
        }
        BlockData real = w.getBlockAt(x, y, z).getBlockData();
        Map<Long, Fake> mine = fakes.computeIfAbsent(w.getName(), k -> new HashMap<>());
        if (block.equals(real)) {
            mine.remove(key(x, y, z)); // the client shows the real block again
        } else {
            mine.put(key(x, y, z), new Fake(block.clone(), real.clone()));
        }
    }

    @Override
    public void sendBlockChanges(Collection<BlockState> blocks) {
        com.google.common.base.Preconditions.checkArgument(blocks != null, "blocks must not be null");
        for (BlockState s : blocks) {
            sendBlockChange(s.getLocation(), s.getBlockData());
        }
    }

    /** Whether the client holds chunk (cx, cz): within the server's view distance of the player's chunk. */
    public boolean clientHasChunk(int cx, int cz) {
        Location at = getLocation();
        int r = getServer().getViewDistance();
        return Math.abs(cx - (at.getBlockX() >> 4)) <= r && Math.abs(cz - (at.getBlockZ() >> 4)) <= r;
    }

    /** What this client shows at a position of its current world: a fake block, else the real one. */
    public BlockData clientBlock(int x, int y, int z) {
        org.bukkit.World w = getWorld();
        BlockData real = w.getBlockAt(x, y, z).getBlockData();
        Map<Long, Fake> mine = fakes.getOrDefault(w.getName(), Map.of());
        Fake f = mine.get(key(x, y, z));
        if (f == null) {
            return real;
        }
        if (!f.realThen().equals(real)) {
            mine.remove(key(x, y, z)); // the block changed for real: the server sent it, the fake is gone
            return real;
        }
        return f.shown();
    }

    /** Fake blocks this client shows now (in its current world). */
    public int fakeCount() {
        return fakeBlocks().size();
    }

    /** The fake blocks this client shows now, "x y z state", sorted. */
    public java.util.List<String> fakeBlocks() {
        org.bukkit.World w = getWorld();
        java.util.List<String> out = new java.util.ArrayList<>();
        for (Map.Entry<Long, Fake> e : new java.util.ArrayList<>(fakes.getOrDefault(w.getName(), Map.of()).entrySet())) {
            long k = e.getKey();
            int x = (int) (k >> 38), z = (int) (k << 26 >> 38), y = (int) (k << 52 >> 52);
            if (clientBlock(x, y, z).equals(e.getValue().shown())) {
                out.add(x + " " + y + " " + z + " " + e.getValue().shown().getAsString());
            }
        }
        java.util.Collections.sort(out);
        return out;
    }

    /** Block-change packets sent to this player. */
    public int blockPackets() {
        return packets;
    }

    /**
     * The server sent chunk (cx, cz) to this client again (it left the view and came back): the client forgets
     * its fake blocks there, and Paper fires {@code PlayerChunkLoadEvent} after the chunk was sent.
     */
    public void chunkResent(int cx, int cz) {
        org.bukkit.World w = getWorld();
        fakes.getOrDefault(w.getName(), new HashMap<>()).keySet().removeIf(k -> (int) (k >> 38) >> 4 == cx
                && (int) (k << 26 >> 38) >> 4 == cz);
        org.bukkit.Bukkit.getPluginManager().callEvent(
                new io.papermc.paper.event.packet.PlayerChunkLoadEvent(w.getChunkAt(cx, cz), this));
    }

    @Override
    public Block getTargetBlockExact(int maxDistance) {
        return getTargetBlockExact(maxDistance, FluidCollisionMode.NEVER);
    }

    @Override
    public Block getTargetBlockExact(int maxDistance, FluidCollisionMode mode) {
        Location eye = getEyeLocation();
        Vector dir = eye.getDirection().normalize().multiply(0.05);
        Location at = eye.clone();
        for (double d = 0; d <= maxDistance; d += 0.05) {
            Block b = at.getBlock();
            if (!b.getType().isAir() && (mode == FluidCollisionMode.ALWAYS || !b.isLiquid())) {
                return b;
            }
            at.add(dir);
        }
        return null;
    }
}
