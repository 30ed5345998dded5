package dev.mcb.world.testhost;

import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An in-memory superflat world like the embedded host's default: bedrock at -64, stone to 59, dirt
 * 60–62, grass 63, air above, over a pre-generated rectangle of chunks. Changed sections hold a
 * 4096-entry palette index array; untouched sections are computed from y. Not thread-safe: the core
 * calls it on the tick thread only ({@link TickScheduler}).
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
