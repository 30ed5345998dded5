package dev.mcb.world.paper;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.bukkit.Bukkit;
import org.bukkit.Material;
import org.bukkit.block.data.BlockData;
import org.mockbukkit.mockbukkit.block.BlockMock;
import org.mockbukkit.mockbukkit.world.Coordinate;

/**
 * The world of {@link MockPaperHost}: {@link HarnessWorld} (MockBukkit's world with the chunk calls the
 * adapter uses) shaped like the other hosts' worlds, and kept on disk like a server's save.
 *
 * <ul>
 *   <li>Superflat as the embedded and Java test hosts: bedrock at -64, stone to 59, dirt 60-62, grass 63,
 *       air above (MockBukkit's own flat world is grass from -63 to its grass height).</li>
 *   <li>Only the chunks of the pre-generated rectangle exist ({@code isChunkGenerated}; async loads
 *       without generation give null elsewhere, as Paper's {@code getChunkAtAsync(x, z, false)}).</li>
 *   <li>A stable world UUID ({@code world-uuid.txt}) and a save file ({@code blocks.txt}: every block
 *       that differs from the flat ground, as its block data) written only by {@code save} — the plugin's
 *       save at disable ({@code save(true)}: at once; {@code save(false)}: a second later); there is no autosave (Paper's runs every 6000 ticks, bukkit.yml
 *       {@code ticks-per.autosave}; a test run rarely sees one). A kill -9 loses every change since the
 *       last save, as on a server. Block entity contents (chest items, sign text) are not saved: MockBukkit's
 *       block states have no serialised form, so after a restart a furnished block is empty.</li>
 * </ul>
 * Server thread only, like the game's world (the driver thread of {@link MockPaperHost}).
 */
public final class HostWorld extends HarnessWorld {
    private final int minCx;
    private final int minCz;
    private final int maxCx;
    private final int maxCz;
    private final Path dir;
    private final UUID uuid;
    /** Every block MockBukkit created (read or written): the candidates of a save. */
    private final List<Coordinate> created = new ArrayList<>();
    private boolean loading;

    /** {@code pregen}: the block rectangle {@code x0,z0,x1,z1} whose chunks exist; {@code dir}: the save folder, or null. */
    public HostWorld(String name, int[] pregen, Path dir) throws IOException {
        super(name);
        minCx = Math.min(pregen[0], pregen[2]) >> 4;
        minCz = Math.min(pregen[1], pregen[3]) >> 4;
        maxCx = Math.max(pregen[0], pregen[2]) >> 4;
        maxCz = Math.max(pregen[1], pregen[3]) >> 4;
        this.dir = dir;
        UUID id = UUID.randomUUID();
        if (dir != null) {
            Files.createDirectories(dir);
            Path f = dir.resolve("world-uuid.txt");
            if (Files.exists(f)) {
                id = UUID.fromString(Files.readString(f, StandardCharsets.UTF_8).strip());
            } else {
                Files.writeString(f, id + "\n", StandardCharsets.UTF_8);
            }
        }
        uuid = id;
    }

    @Override
    public UUID getUID() {
        return uuid;
    }

    private static Material ground(int y) {
        if (y == -64) {
            return Material.BEDROCK;
        }
        if (y <= 59) {
            return Material.STONE;
        }
        if (y <= 62) {
            return Material.DIRT;
        }
        return y == 63 ? Material.GRASS_BLOCK : Material.AIR;
    }

    @Override
    public BlockMock createBlock(Coordinate c) {
        BlockMock b = super.createBlock(c);
        Material m = ground(c.y);
        if (b.getType() != m) {
            b.setType(m);
        }
        if (!loading) {
            created.add(c);
        }
        return b;
    }

    private boolean pregenerated(int cx, int cz) {
        return cx >= minCx && cx <= maxCx && cz >= minCz && cz <= maxCz;
    }

    /** Only the pre-generated rectangle exists: isChunkGenerated and loads without generation agree. */
    @Override
    protected synchronized boolean generated(int x, int z) {
        return super.generated(x, z) && pregenerated(x, z);
    }

    /** Put back the blocks of the last save (before the plugin starts). */
    public void load() throws IOException {
        Path f = dir == null ? null : dir.resolve("blocks.txt");
        if (f == null || !Files.exists(f)) {
            return;
        }
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
            String[] p = line.split(" ", 4);
            if (p.length == 4) {
                int x = Integer.parseInt(p[0]);
                int y = Integer.parseInt(p[1]);
                int z = Integer.parseInt(p[2]);
                created.add(new Coordinate(x, y, z));
                loading = true;
                try {
                    getBlockAt(x, y, z).setBlockData(Bukkit.createBlockData(p[3]));
                } finally {
                    loading = false;
                }
            }
        }
    }

    /**
     * {@code save(true)} writes the save file now; {@code save(false)} hands it to "the I/O threads": it is written
     * {@link #IO_TICKS} ticks later, so a kill -9 in between loses it, as on Paper (CraftWorld.java l.1134, tag 1.21.11:
     * without {@code flush} the chunks are queued to the I/O threads and the call returns).
     */
    @Override
    public synchronized void save(boolean flush) {
        super.save(flush);
        if (dir == null) {
            return;
        }
        if (flush) {
            writeSave();
            pendingWrite = -1;
        } else if (pendingWrite < 0) {
            pendingWrite = IO_TICKS;
        }
    }

    /** Ticks an unflushed save waits for "the I/O threads". */
    static final int IO_TICKS = 20;
    private int pendingWrite = -1;

    @Override
    public void tick() {
        super.tick();
        synchronized (this) {
            if (pendingWrite >= 0 && pendingWrite-- == 0) {
                writeSave();
            }
        }
    }

    /** Every block that is not flat ground, written to a new file that then replaces the old one. */
    private void writeSave() {
        Path tmp = dir.resolve("blocks.txt.tmp");
        try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            for (Coordinate c : created) {
                BlockData d = getBlockAt(c.x, c.y, c.z).getBlockData();
                if (!d.equals(ground(c.y).createBlockData())) {
                    w.write(c.x + " " + c.y + " " + c.z + " " + d.getAsString() + "\n");
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("world save failed: " + e.getMessage(), e);
        }
        try {
            Files.move(tmp, dir.resolve("blocks.txt"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException("world save failed: " + e.getMessage(), e);
        }
    }
}
