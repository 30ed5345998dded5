package dev.mcb.world.testhost;

import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ByteArrayInputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An in-memory superflat world like the embedded host's default: bedrock at -64, stone to 59, dirt
 * 60–62, grass 63, air above, over a pre-generated rectangle of chunks. Changed sections hold a
 * 4096-entry palette index array; untouched sections are computed from y. Not thread-safe: the core
 * calls it on the tick thread only ({@link TickScheduler}).
 *
 * <p>Like a game server, blocks reach disk only when the world is saved ({@link #save}: the periodic
 * autosave and a clean stop), not when they are set: a killed process loses what changed since the last
 * save, exactly as a crashed Paper server does. The save file ({@code world.bin}: magic, palette, changed
 * sections, CRC-32C) is written to a temporary file, fsynced and renamed, so it is the old or the new save.
 */
public final class MemoryWorld implements WorldAccess {
    public static final int MIN_Y = -64;
    public static final int MAX_Y = 319;

    private final JsonBlockRegistry registry;
    private final String uuid;
    private final String name;
    private final int minCx;
    private final int minCz;
    private final int maxCx;
    private final int maxCz;
    private final List<String> palette = new ArrayList<>();
    private final Map<String, Short> paletteIndex = new HashMap<>();
    private final Map<Long, short[]> sections = new HashMap<>();
    private final short air;
    private final short bedrock;
    private final short stone;
    private final short dirt;
    private final short grass;

    /** pregen: block coordinates x0,z0,x1,z1 of the area whose chunks exist. */
    public MemoryWorld(JsonBlockRegistry registry, String uuid, String name, int x0, int z0, int x1, int z1) {
        this.registry = registry;
        this.uuid = uuid;
        this.name = name;
        this.minCx = Math.min(x0, x1) >> 4;
        this.minCz = Math.min(z0, z1) >> 4;
        this.maxCx = Math.max(x0, x1) >> 4;
        this.maxCz = Math.max(z0, z1) >> 4;
        air = idx("minecraft:air");
        bedrock = idx("minecraft:bedrock");
        stone = idx("minecraft:stone");
        dirt = idx("minecraft:dirt");
        grass = idx(registry.canonical("minecraft:grass_block"));
    }

    private short idx(String state) {
        Short i = paletteIndex.get(state);
        if (i == null) {
            if (palette.size() >= Short.MAX_VALUE) {
                throw new IllegalStateException("palette full");
            }
            i = (short) palette.size();
            palette.add(state);
            paletteIndex.put(state, i);
        }
        return i;
    }

    private short base(int y) {
        if (y == -64) {
            return bedrock;
        }
        if (y <= 59) {
            return stone;
        }
        if (y <= 62) {
            return dirt;
        }
        if (y == 63) {
            return grass;
        }
        return air;
    }

    private static long sectionKey(int x, int y, int z) {
        return ((long) ((x >> 4) & 0x3FFFFF) << 42) | ((long) ((z >> 4) & 0x3FFFFF) << 20) | ((y >> 4) & 0xFFFFF);
    }

    private static int inner(int x, int y, int z) {
        return ((y & 15) << 8) | ((z & 15) << 4) | (x & 15);
    }

    @Override
    public WorldDescriptor describe() {
        return new WorldDescriptor(uuid, name, 1, registry.dataVersion, registry.version, MIN_Y, MAX_Y,
                registry.version, registry.dataVersion, registry.size(), registry.sha256,
                new int[] {minCx, minCz, maxCx, maxCz});
    }

    @Override
    public boolean chunkExists(int cx, int cz) {
        return cx >= minCx && cx <= maxCx && cz >= minCz && cz <= maxCz;
    }

    @Override
    public String get(int x, int y, int z) {
        check(x, y, z);
        short[] s = sections.get(sectionKey(x, y, z));
        return palette.get(s == null ? base(y) : s[inner(x, y, z)]);
    }

    @Override
    public void set(int x, int y, int z, String canonicalState) {
        check(x, y, z);
        long k = sectionKey(x, y, z);
        short[] s = sections.get(k);
        if (s == null) {
            s = new short[4096];
            int sy = y >> 4;
            for (int i = 0; i < 4096; i++) {
                s[i] = base((sy << 4) + (i >> 8));
            }
            sections.put(k, s);
        }
        s[inner(x, y, z)] = idx(canonicalState);
    }

    private static final int SAVE_MAGIC = 0x4d435731; // "MCW1"

    /** Write every changed section to {@code file} atomically and durably (call on the tick thread). */
    public void save(Path file) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + sections.size() * 8200);
        try (DataOutputStream d = new DataOutputStream(bytes)) {
            d.writeInt(SAVE_MAGIC);
            d.writeInt(palette.size());
            for (String st : palette) {
                d.writeUTF(st);
            }
            d.writeInt(sections.size());
            for (Map.Entry<Long, short[]> e : sections.entrySet()) {
                d.writeLong(e.getKey());
                for (short v : e.getValue()) {
                    d.writeShort(v);
                }
            }
        }
        byte[] body = bytes.toByteArray();
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(body);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(body.length + 4).put(body).putInt((int) crc.getValue())
                    .flip();
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.toAbsolutePath().getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    /** Load a save written by {@link #save} (before the world is used); refuses a damaged file. */
    public void load(Path file) throws IOException {
        byte[] all = Files.readAllBytes(file);
        if (all.length < 8) {
            throw new IOException(file + " is not a world save (too short)");
        }
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(all, 0, all.length - 4);
        if ((int) crc.getValue() != java.nio.ByteBuffer.wrap(all, all.length - 4, 4).getInt()) {
            throw new IOException(file + " fails its checksum: the world save is damaged");
        }
        try (DataInputStream d = new DataInputStream(new ByteArrayInputStream(all, 0, all.length - 4))) {
            if (d.readInt() != SAVE_MAGIC) {
                throw new IOException(file + " is not a world save of this test host");
            }
            int n = d.readInt();
            short[] map = new short[n];
            for (int i = 0; i < n; i++) {
                map[i] = idx(d.readUTF());
            }
            int count = d.readInt();
            sections.clear();
            for (int i = 0; i < count; i++) {
                long k = d.readLong();
                short[] s = new short[4096];
                for (int j = 0; j < 4096; j++) {
                    s[j] = map[d.readShort()];
                }
                sections.put(k, s);
            }
        }
    }

    private void check(int x, int y, int z) {
        if (y < MIN_Y || y > MAX_Y || !chunkExists(x >> 4, z >> 4)) {
            throw new IllegalArgumentException("(" + x + "," + y + "," + z + ") is not in a loaded chunk");
        }
    }

    @Override
    public String blockEntityAt(int x, int y, int z) {
        return null;
    }

    @Override
    public String canonical(String text) {
        return registry.canonical(text);
    }
}
