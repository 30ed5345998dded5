package dev.mcb.world.paper;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.bukkit.Chunk;
import org.bukkit.Material;
import org.bukkit.block.Biome;
import org.bukkit.plugin.Plugin;
import org.mockbukkit.mockbukkit.block.BlockMock;
import org.mockbukkit.mockbukkit.world.Coordinate;
import org.mockbukkit.mockbukkit.world.WorldMock;

/**
 * MockBukkit's flat world plus the few chunk calls the adapter uses that MockBukkit 4.116 leaves
 * unimplemented ({@code UnimplementedOperationException}): {@code isChunkGenerated},
 * {@code getChunkAtAsync}, plugin chunk tickets and {@code save} (counted; MockBukkit worlds live in
 * memory only). Chunks count as generated unless a test marks
 * them missing with {@link #ungenerate}; async loads complete at once (MockBukkit keeps every chunk
 * in memory); tickets are recorded so tests can assert that the adapter adds and removes them.
 */
public class HarnessWorld extends WorldMock {
    private final Set<Long> missing = new HashSet<>();
    private final Map<Long, Set<Plugin>> tickets = new HashMap<>();
    private int saves;

    /** A flat overworld-height world (y -64..319): grass up to y=64, air above. */
    public HarnessWorld(String name) {
        super(Material.GRASS_BLOCK, Biome.PLAINS, -64, 320, 64);
        setName(name);
    }

    /** Every block is a {@link StrictStates.StrictBlock}: skull and chest states as strict as Paper's. */
    private final Map<Coordinate, BlockMock> strict = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public BlockMock getBlockAt(Coordinate c) {
        return strict.computeIfAbsent(c, k -> {
            BlockMock b = super.getBlockAt(k); // MockBukkit keeps its own, never handed out
            BlockMock s = new StrictStates.StrictBlock(b.getType(), b.getLocation());
            s.setBlockData(b.getBlockData());
            return s;
        });
    }

    static long key(int cx, int cz) {
        return ((long) cx << 32) ^ (cz & 0xffffffffL);
    }

    /** Mark chunk (cx, cz) as never generated: {@code isChunkGenerated} is false, async loads without generation give null. */
    public synchronized void ungenerate(int cx, int cz) {
        missing.add(key(cx, cz));
    }

    @Override
    public synchronized boolean isChunkGenerated(int x, int z) {
        return !missing.contains(key(x, z));
    }

    @Override
    public CompletableFuture<Chunk> getChunkAtAsync(int x, int z, boolean gen, boolean urgent) {
        if (!gen && !isChunkGenerated(x, z)) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.completedFuture(getChunkAt(x, z));
    }

    @Override
    public void getChunkAtAsync(int x, int z, boolean gen, boolean urgent, Consumer<? super Chunk> cb) {
        cb.accept(getChunkAtAsync(x, z, gen, urgent).join());
    }

    @Override
    public synchronized boolean addPluginChunkTicket(int x, int z, Plugin plugin) {
        return tickets.computeIfAbsent(key(x, z), k -> new HashSet<>()).add(plugin);
    }

    @Override
    public synchronized boolean removePluginChunkTicket(int x, int z, Plugin plugin) {
        Set<Plugin> s = tickets.get(key(x, z));
        return s != null && s.remove(plugin);
    }

    @Override
    public synchronized void removePluginChunkTickets(Plugin plugin) {
        tickets.values().forEach(s -> s.remove(plugin));
    }

    @Override
    public synchronized Collection<Plugin> getPluginChunkTickets(int x, int z) {
        return List.copyOf(tickets.getOrDefault(key(x, z), Set.of()));
    }

    @Override
    public synchronized void save(boolean flush) {
        saves++;
    }

    /** How many times {@code save()} / {@code save(flush)} was called. */
    public synchronized int saves() {
        return saves;
    }

    /** How many chunks hold a ticket of {@code plugin}. */
    public synchronized int ticketCount(Plugin plugin) {
        return (int) tickets.values().stream().filter(s -> s.contains(plugin)).count();
    }
}
