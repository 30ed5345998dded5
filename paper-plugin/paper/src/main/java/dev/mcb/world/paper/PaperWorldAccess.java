package dev.mcb.world.paper;

import dev.mcb.world.core.BlockEntityData;
import dev.mcb.world.core.ErrorCode;
import dev.mcb.world.core.McbException;
import dev.mcb.world.core.port.ChunkHold;
import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.bukkit.Bukkit;
import org.bukkit.Material;
import org.bukkit.World;
import org.bukkit.block.Block;
import org.bukkit.block.BlockState;
import org.bukkit.block.TileState;
import org.bukkit.block.data.BlockData;
import org.bukkit.plugin.IllegalPluginAccessException;
import org.bukkit.plugin.Plugin;
import org.bukkit.plugin.java.JavaPlugin;

/**
 * WorldAccess over one Bukkit world: type conversion, and chunk holding without main-thread stalls.
 *
 * <p>{@link #hold} loads chunks with {@code World#getChunkAtAsync(x, z, false, ...)} (never generates:
 * a chunk that was never generated, or is unfinished, comes back null and is reported missing) and, in
 * the load callback on the server thread, adds this plugin's chunk ticket so the chunk stays loaded
 * until the hold is released (tickets are counted per chunk: concurrent requests share one ticket).
 * {@code addPluginChunkTicket} is only called for a chunk that just finished loading, so it never loads
 * one itself. {@link #get} and {@link #set} refuse a chunk that is not loaded instead of letting Bukkit
 * load it synchronously; the core only touches held (or, for observations, loaded) chunks.
 */
final class PaperWorldAccess implements WorldAccess {
    private final World world;
    private final int epoch;
    private final int blockCount;
    private final String registrySha256;
    /** Canonical text per block state (BlockData equality is the state's): getAsString builds a new string. */
    private final Map<BlockData, String> texts = new ConcurrentHashMap<>();
    /** Whether a block state's block entity carries data of the model (chest items, sign text, ...). */
    private final Map<String, Boolean> furnished = new ConcurrentHashMap<>();
    /** Ticket count per chunk key; server thread only. */
    private final Map<Long, Integer> tickets = new HashMap<>();
    private volatile Plugin plugin;

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

    private Plugin plugin() {
        Plugin p = plugin;
        if (p == null) {
            try {
                p = JavaPlugin.getProvidingPlugin(PaperWorldAccess.class);
            } catch (IllegalArgumentException | IllegalStateException notAPluginLoader) {
                p = Bukkit.getPluginManager().getPlugin("MinecraftBuilderMcp"); // test servers
            }
            plugin = p;
        }
        return p;
    }

    @Override
    @SuppressWarnings("deprecation")
    public WorldDescriptor describe() {
        int dataVersion = Bukkit.getUnsafe().getDataVersion();
        String mc = Bukkit.getMinecraftVersion();
        return new WorldDescriptor(world.getUID().toString(), world.getName(), epoch, dataVersion, mc,
                world.getMinHeight(), world.getMaxHeight() - 1, mc, dataVersion, blockCount, registrySha256, null);
    }

    /**
     * Paper: a loaded chunk answers at once; for an unloaded one {@code isChunkGenerated} reads the chunk's
     * status from disk and waits for it on the server thread (CraftWorld l.400-420). The core never calls this
     * here: it uses {@link #chunkLoaded} and {@link #hold} (WorldAccess); kept for the port's contract.
     */
    @Override
    public boolean chunkExists(int cx, int cz) {
        return world.isChunkLoaded(cx, cz) || world.isChunkGenerated(cx, cz);
    }

    @Override
    public boolean chunkLoaded(int cx, int cz) {
        return world.isChunkLoaded(cx, cz);
    }

    private static long key(int cx, int cz) {
        return ((long) cx << 32) | (cz & 0xFFFFFFFFL);
    }

    @Override
    public CompletableFuture<ChunkHold> hold(List<int[]> chunks) {
        CompletableFuture<ChunkHold> out = new CompletableFuture<>();
        List<int[]> missing = Collections.synchronizedList(new ArrayList<>());
        List<int[]> held = Collections.synchronizedList(new ArrayList<>());
        Plugin p = plugin();
        if (chunks.isEmpty()) {
            out.complete(new ChunkHold(List.of(), null));
            return out;
        }
        AtomicInteger left = new AtomicInteger(chunks.size());
        for (int[] c : chunks) {
            // the callback runs on the server thread once the chunk is loaded (or known not to exist)
            world.getChunkAtAsync(c[0], c[1], false, false, chunk -> {
                if (chunk == null) {
                    missing.add(c);
                } else {
                    synchronized (tickets) {
                        if (tickets.merge(key(c[0], c[1]), 1, Integer::sum) == 1) {
                            world.addPluginChunkTicket(c[0], c[1], p); // loaded just now: loads nothing
                        }
                    }
                    held.add(c);
                }
                if (left.decrementAndGet() == 0) {
                    out.complete(new ChunkHold(missing, () -> release(p, List.copyOf(held))));
                }
            });
        }
        return out;
    }

    private void release(Plugin p, List<int[]> held) {
        Runnable r = () -> {
            synchronized (tickets) {
                for (int[] c : held) {
                    Integer n = tickets.computeIfPresent(key(c[0], c[1]), (k, v) -> v == 1 ? null : v - 1);
                    if (n == null) {
                        world.removePluginChunkTicket(c[0], c[1], p);
                    }
                }
            }
        };
        if (Bukkit.isPrimaryThread()) {
            r.run();
            return;
        }
        try {
            Bukkit.getScheduler().runTask(p, r);
        } catch (IllegalPluginAccessException disabled) {
            // the plugin is being disabled: Paper removes all of its chunk tickets itself
        }
    }

    private Block loadedBlock(int x, int y, int z) {
        if (!world.isChunkLoaded(x >> 4, z >> 4)) {
            throw new McbException(ErrorCode.UNAVAILABLE, "chunk (" + (x >> 4) + "," + (z >> 4)
                    + ") is not loaded; the host does not load chunks on the server thread");
        }
        return world.getBlockAt(x, y, z);
    }

    @Override
    public String get(int x, int y, int z) {
        Block b = loadedBlock(x, y, z);
        String state = texts.computeIfAbsent(b.getBlockData(), BlockData::getAsString);
        // furniture: the block entity's data travels with the state (core BlockEntityData)
        return furnished.computeIfAbsent(state, s -> BlockEntityData.key(s) != null)
                ? PaperBlockEntities.read(b, state) : state;
    }

    @Override
    public void set(int x, int y, int z, String canonicalState) {
        int i = BlockEntityData.split(canonicalState);
        String state = i < 0 ? canonicalState : canonicalState.substring(0, i);
        Block b = loadedBlock(x, y, z);
        BlockData data = Bukkit.createBlockData(state);
        if (furnished.computeIfAbsent(state, s -> BlockEntityData.key(s) != null)) {
            // the block entity first (a new one when the block changes), its data, then the exact state:
            // setBlockData keeps the block entity of the same block
            if (b.getType() != data.getMaterial()) {
                b.setType(data.getMaterial(), false);
            }
            PaperBlockEntities.write(b, state, i < 0 ? "" : canonicalState.substring(i));
        }
        b.setBlockData(data, false);
    }

    @Override
    public String blockEntityAt(int x, int y, int z) {
        Block b = loadedBlock(x, y, z);
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
