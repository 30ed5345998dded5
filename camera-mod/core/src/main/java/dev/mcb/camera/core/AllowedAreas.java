package dev.mcb.camera.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The boxes the server owner lets the camera stand in (the eye position, inclusive block
 * coordinates as in the world protocol). No area at all means the camera may stand nowhere:
 * {@link #ANYWHERE} must be chosen explicitly.
 */
public final class AllowedAreas {
    public record Area(int x0, int y0, int z0, int x1, int y1, int z1) {
        public Area {
            if (x0 > x1 || y0 > y1 || z0 > z1) {
                throw new IllegalArgumentException("an area's min corner must not exceed its max corner");
            }
        }

        boolean contains(double x, double y, double z) {
            return x >= x0 && x < x1 + 1 && y >= y0 && y < y1 + 1 && z >= z0 && z < z1 + 1;
        }

        /** "x0,y0,z0,x1,y1,z1" (corners in any order). */
        public static Area parse(String s) {
            String[] p = s.split(",");
            if (p.length != 6) {
                throw new IllegalArgumentException("an area is x0,y0,z0,x1,y1,z1, got '" + s + "'");
            }
            int[] v = new int[6];
            for (int i = 0; i < 6; i++) {
                v[i] = Integer.parseInt(p[i].trim());
            }
            return new Area(Math.min(v[0], v[3]), Math.min(v[1], v[4]), Math.min(v[2], v[5]),
                    Math.max(v[0], v[3]), Math.max(v[1], v[4]), Math.max(v[2], v[5]));
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d,%d,%d..%d,%d,%d", x0, y0, z0, x1, y1, z1);
        }
    }

    public static final AllowedAreas ANYWHERE = new AllowedAreas(List.of(), true);
    public static final AllowedAreas NOWHERE = new AllowedAreas(List.of(), false);

    private final List<Area> areas;
    private final boolean anywhere;

    private AllowedAreas(List<Area> areas, boolean anywhere) {
        this.areas = List.copyOf(areas);
        this.anywhere = anywhere;
    }

    public static AllowedAreas of(List<Area> areas) {
        return new AllowedAreas(new ArrayList<>(areas), false);
    }

    public boolean contains(double x, double y, double z) {
        if (anywhere) {
            return true;
        }
        for (Area a : areas) {
            if (a.contains(x, y, z)) {
                return true;
            }
        }
        return false;
    }

    public String describe() {
        if (anywhere) {
            return "anywhere";
        }
        return areas.isEmpty() ? "no area is configured" : "allowed: " + areas;
    }
}
