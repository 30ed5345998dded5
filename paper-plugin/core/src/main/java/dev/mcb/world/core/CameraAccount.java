package dev.mcb.world.core;

import com.google.gson.JsonObject;
import dev.mcb.proto.world.v1.CameraAccountPoseParams;
import dev.mcb.proto.world.v1.CameraAccountPoseResult;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * {@code camera_account_pose} (issue 17; docs/camera-link.md, docs/world-protocol.md): move the
 * configured camera account — a spectator the Fabric camera client is logged in as — to a pose
 * inside the server owner's allowed areas, then wait until the server has sent it the chunks
 * around that pose, so the client can draw them. Rules here, the game calls behind {@link Port}.
 *
 * <ul>
 *   <li>no camera account configured: {@code camera_unavailable} (reason {@code no_camera_account});</li>
 *   <li>another account named, another world, or the eye outside every allowed area:
 *       {@code permission_denied} (the account has no edit rights, but it must not roam);</li>
 *   <li>non-finite numbers or pitch outside -90..90: {@code invalid_request};</li>
 *   <li>the account is not online: {@code camera_unavailable} (reason {@code camera_account_offline});</li>
 *   <li>chunks still unsent after {@code waitMillis}: {@code capture_not_ready} with the count.</li>
 * </ul>
 * The answer's {@code at_millis} is when the last chunk around the pose had been sent.
 */
public final class CameraAccount {
    public static final double EYE_HEIGHT = 1.62;

    /** An inclusive block box the camera's eye may be in. */
    public record Area(int x0, int y0, int z0, int x1, int y1, int z1) {
        public static Area of(int ax, int ay, int az, int bx, int by, int bz) {
            return new Area(Math.min(ax, bx), Math.min(ay, by), Math.min(az, bz), Math.max(ax, bx), Math.max(ay, by),
                    Math.max(az, bz));
        }

        /** "x0,y0,z0,x1,y1,z1" */
        public static Area parse(String s) {
            String[] p = s.split(",");
            if (p.length != 6) {
                throw new IllegalArgumentException("a camera area is x0,y0,z0,x1,y1,z1, got '" + s + "'");
            }
            int[] v = new int[6];
            for (int i = 0; i < 6; i++) {
                v[i] = Integer.parseInt(p[i].strip());
            }
            return of(v[0], v[1], v[2], v[3], v[4], v[5]);
        }

        boolean contains(double x, double y, double z) {
            return x >= x0 && x < x1 + 1 && y >= y0 && y < y1 + 1 && z >= z0 && z < z1 + 1;
        }
    }

    /** {@code account} blank = no camera account; {@code world} blank = the host's world. */
    public record Settings(String account, String world, List<Area> areas, long waitMillis) {
        public static final Settings NONE = new Settings("", "", List.of(), 0);

        public Settings {
            account = account == null ? "" : account.strip();
            world = world == null ? "" : world.strip();
            areas = List.copyOf(areas);
        }

        public boolean configured() {
            return !account.isEmpty();
        }
    }

    /** The game side; every method runs on the server thread. */
    public interface Port {
        /** Spectator mode, then teleport; false when the account is not online. */
        boolean moveSpectator(String account, double x, double y, double z, float yaw, float pitch);

        /** Chunks within the account's view distance not yet sent to it; -1 when it is offline. */
        int chunksPending(String account);
    }

    /** Runs a task on the server thread (WorldHostCore#onServer). */
    public interface ServerThread {
        <T> T call(java.util.concurrent.Callable<T> task);
    }

    private final Settings settings;
    private final Port port;
    private final LongSupplier clockMs;

    public CameraAccount(Settings settings, Port port, LongSupplier clockMs) {
        this.settings = settings;
        this.port = port;
        this.clockMs = clockMs;
    }

    public boolean configured() {
        return settings.configured();
    }

    public CameraAccountPoseResult pose(CameraAccountPoseParams p, String hostWorld, ServerThread server) {
        if (!settings.configured()) {
            throw new McbException(ErrorCode.CAMERA_UNAVAILABLE, "this world host has no camera account configured "
                    + "(camera.account in the plugin's config.yml); the built-in renderer needs none",
                    reason("no_camera_account"));
        }
        String account = settings.account();
        if (!p.getAccount().isBlank() && !p.getAccount().strip().equalsIgnoreCase(account)) {
            throw new McbException(ErrorCode.PERMISSION_DENIED, "only the configured camera account can be moved",
                    reason("not_the_camera_account"));
        }
        String world = settings.world().isEmpty() ? hostWorld : settings.world();
        if (!p.getWorld().isBlank() && !p.getWorld().equals(world)) {
            throw new McbException(ErrorCode.PERMISSION_DENIED, "the camera account may only stand in world '" + world
                    + "', not '" + p.getWorld() + "'", reason("other_world"));
        }
        double x = p.getX(), y = p.getY(), z = p.getZ();
        float yaw = p.getYaw(), pitch = p.getPitch();
        if (!Double.isFinite(x) || !Double.isFinite(y) || !Double.isFinite(z) || !Float.isFinite(yaw)
                || !Float.isFinite(pitch) || pitch < -90f || pitch > 90f) {
            throw McbException.invalid("camera_account_pose needs finite x, y, z, yaw and a pitch within -90..90");
        }
        if (settings.areas().stream().noneMatch(a -> a.contains(x, y + EYE_HEIGHT, z))) {
            JsonObject d = reason("outside_allowed_areas");
            d.addProperty("allowedAreas", settings.areas().size());
            throw new McbException(ErrorCode.PERMISSION_DENIED, String.format(Locale.ROOT,
                    "the camera may not stand at %.2f %.2f %.2f (eye): outside every allowed camera area (%d configured)",
                    x, y + EYE_HEIGHT, z, settings.areas().size()), d);
        }
        boolean moved = server.call(() -> port.moveSpectator(account, x, y, z, yaw, pitch));
        if (!moved) {
            throw offline(account);
        }
        long deadline = clockMs.getAsLong() + settings.waitMillis();
        int pending;
        while ((pending = server.call(() -> port.chunksPending(account))) != 0) {
            if (pending < 0) {
                throw offline(account);
            }
            if (clockMs.getAsLong() >= deadline) {
                JsonObject d = reason("chunks_not_sent");
                d.addProperty("chunksPending", pending);
                throw new McbException(ErrorCode.CAPTURE_NOT_READY, "the server had not sent " + pending
                        + " chunk(s) around the pose to the camera account after " + settings.waitMillis() + " ms", d);
            }
            try {
                Thread.sleep(25);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new McbException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the camera's chunks");
            }
        }
        return CameraAccountPoseResult.newBuilder().setMoved(true).setWorld(world).setX(x).setY(y).setZ(z)
                .setYaw(yaw).setPitch(pitch).setAtMillis(clockMs.getAsLong()).build();
    }

    private static McbException offline(String account) {
        return new McbException(ErrorCode.CAMERA_UNAVAILABLE, "the camera account " + account + " is not online; "
                + "start the camera client (camera-mod/README.md)", reason("camera_account_offline"));
    }

    private static JsonObject reason(String r) {
        JsonObject d = new JsonObject();
        d.addProperty("reason", r);
        return d;
    }
}
