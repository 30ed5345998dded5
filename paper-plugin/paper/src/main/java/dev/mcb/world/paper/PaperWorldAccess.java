package dev.mcb.world.paper;

import dev.mcb.world.core.ErrorCode;
import dev.mcb.world.core.McbException;
import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import org.bukkit.Bukkit;
import org.bukkit.Material;
import org.bukkit.World;
import org.bukkit.block.Block;
import org.bukkit.block.BlockState;
import org.bukkit.block.TileState;
import org.bukkit.block.data.BlockData;

/** WorldAccess over one Bukkit world: type conversion only. */
final class PaperWorldAccess implements WorldAccess {
    private final World world;
    private final int epoch;
    private final int blockCount;
    private final String registrySha256;

    PaperWorldAccess(World world, int epoch) {
        this.world = world;
        this.epoch = epoch;
        List<String> keys = new ArrayList<>();
        for (Material m : Material.values()) {
            if (!m.isLegacy() && m.isBlock()) {
                keys.add(m.getKey().toString());
            }
        }
        Collections.sort(keys);
        this.blockCount = keys.size();
        try {
            this.registrySha256 = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(String.join("\n", keys).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    @SuppressWarnings("deprecation")
    public WorldDescriptor describe() {
        int dataVersion = Bukkit.getUnsafe().getDataVersion();
        String mc = Bukkit.getMinecraftVersion();
        return new WorldDescriptor(world.getUID().toString(), world.getName(), epoch, dataVersion, mc,
                world.getMinHeight(), world.getMaxHeight() - 1, mc, dataVersion, blockCount, registrySha256, null);
    }

    @Override
    public boolean chunkExists(int cx, int cz) {
        return world.isChunkGenerated(cx, cz);
    }

    @Override
    public String get(int x, int y, int z) {
        return world.getBlockAt(x, y, z).getBlockData().getAsString();
    }

    @Override
    public void set(int x, int y, int z, String canonicalState) {
        world.getBlockAt(x, y, z).setBlockData(Bukkit.createBlockData(canonicalState), false);
    }

    @Override
    public String blockEntityAt(int x, int y, int z) {
        Block b = world.getBlockAt(x, y, z);
        BlockState st = b.getState(false);
        return st instanceof TileState ? b.getType().getKey().toString() : null;
    }

    @Override
    public String canonical(String text) {
        try {
            BlockData d = Bukkit.createBlockData(text.strip());
            return d.getAsString();
        } catch (IllegalArgumentException e) {
            throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "unknown block state '" + text + "' on this server ("
                    + Bukkit.getMinecraftVersion() + ")");
        }
    }
}
