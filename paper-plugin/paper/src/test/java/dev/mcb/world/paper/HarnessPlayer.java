package dev.mcb.world.paper;

import java.util.UUID;
import org.bukkit.FluidCollisionMode;
import org.bukkit.Location;
import org.bukkit.block.Block;
import org.bukkit.util.Vector;
import org.mockbukkit.mockbukkit.ServerMock;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * MockBukkit's player plus {@code getTargetBlockExact}, which MockBukkit 4.116 leaves unimplemented
 * ({@code UnimplementedOperationException}) and the adapter calls for the player context of every
 * {@code /ai} line: steps along the look direction from the eye (0.05 blocks) to the first block
 * that is not air, within the distance.
 */
public class HarnessPlayer extends PlayerMock {
    public HarnessPlayer(ServerMock server, String name) {
        super(server, name, UUID.nameUUIDFromBytes(("harness:" + name).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
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
