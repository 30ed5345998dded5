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
 * MockBukkit's flat world plus the chunk calls the adapter uses that MockBukkit 4.116 leaves unimplemented
 * ({@code UnimplementedOperationException}), each as Paper 1.21.11 does it
 * (paper-server/src/main/java/org/bukkit/craftbukkit/CraftWorld.java at tag 1.21.11):
 * <ul>
 * <li>{@code isChunkGenerated} of a chunk that is not loaded schedules a load and blocks the server thread
 *     until the disk answers (l.401-420; called off the server thread it moves onto it and waits the same):
 *     each such call is counted in {@link #diskWaits()}, and tests assert none happen;</li>
 * <li>{@code getChunkAtAsync} completes on the server thread after the load (l.1990: the chunk system's
 *     callback), never inline on the caller's thread: here on the next {@link #tick()};</li>
 * <li>plugin chunk tickets are recorded so tests can assert that the adapter adds and removes them;</li>
 * <li>{@code save(flush)} is counted with its flag (l.1134: {@code flush} false hands the chunks to the I/O
 *     threads without waiting for them).</li>
 * </ul>
 * Chunks count as generated unless a test marks them missing with {@link #ungenerate}; MockBukkit keeps
 * every chunk in memory, so a load only marks it loaded. Every block's skull and chest states are as strict
 * as Paper's ({@link StrictStates}).
 */
public class HarnessWorld extends WorldMock {
    private final Set<Long> missing = new HashSet<>();
    private final Map<Long, Set<Plugin>> tickets = new HashMap<>();
    private int saves;
    private int flushedSaves;
    private int diskWaits;
    private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> loads = new java.util.concurrent.ConcurrentLinkedQueue<>();

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

    /** Whether chunk (x, z) was ever generated (no disk wait counted: the double's own bookkeeping). */
    protected synchronized boolean generated(int x, int z) {
        return !missing.contains(key(x, z));
    }

    @Override
    public synchronized boolean isChunkGenerated(int x, int z) {
        if (!isChunkLoaded(x, z)) {
            diskWaits++;
        }
        return generated(x, z);
    }

    /** Calls that would have made Paper's server thread wait for the disk ({@code isChunkGenerated} of an unloaded chunk). */
    public synchronized int diskWaits() {
        return diskWaits;
    }

    @Override
    public CompletableFuture<Chunk> getChunkAtAsync(int x, int z, boolean gen, boolean urgent) {
        CompletableFuture<Chunk> f = new CompletableFuture<>();
        getChunkAtAsync(x, z, gen, urgent, f::complete);
        return f;
    }

    @Override
    public void getChunkAtAsync(int x, int z, boolean gen, boolean urgent, Consumer<? super Chunk> cb) {
        loads.add(() -> cb.accept(gen || generated(x, z) ? getChunkAt(x, z) : null));
    }

    /** The start of a server tick (PluginHarness#tick): chunk loads requested before complete now, on this thread. */
    public void tick() {
        for (Runnable r; (r = loads.poll()) != null; ) {
            r.run();
        }
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
        if (flush) {
            flushedSaves++;
        }
    }

    /** paper-api World.java l.2467: {@code save()} is {@code save(false)}. */
    @Override
    public void save() {
        save(false);
    }

    /** How many of the saves waited for the chunk writer ({@code save(true)}). */
    public synchronized int flushedSaves() {
        return flushedSaves;
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
