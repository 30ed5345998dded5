package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.world.v1.CameraAccountPoseParams;
import dev.mcb.proto.world.v1.CameraAccountPoseResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CameraAccountTest {
    /** A camera account whose chunks arrive after {@code sendAfter} polls; records the moves. */
    static final class FakePort implements CameraAccount.Port {
        final List<String> moves = new ArrayList<>();
        boolean online = true;
        int polls;
        int sendAfter = 3;

        @Override
        public boolean moveSpectator(String account, double x, double y, double z, float yaw, float pitch) {
            if (online) {
                moves.add(account + "@" + x + "," + y + "," + z + "/" + yaw + "," + pitch);
                polls = 0;
            }
            return online;
        }

        @Override
        public int chunksPending(String account) {
            return !online ? -1 : Math.max(0, sendAfter - polls++);
        }
    }

    static final CameraAccount.ServerThread DIRECT = new CameraAccount.ServerThread() {
        @Override
        public <T> T call(java.util.concurrent.Callable<T> task) {
            try {
                return task.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    };

    final FakePort port = new FakePort();
    final AtomicLong clock = new AtomicLong(1_000);

    CameraAccount camera(String account, long waitMs) {
        return new CameraAccount(new CameraAccount.Settings(account, "", List.of(CameraAccount.Area.parse("20,60,20,-20,100,-20")),
                waitMs), port, () -> clock.addAndGet(10));
    }

    static CameraAccountPoseParams.Builder pose(double x, double y, double z) {
        return CameraAccountPoseParams.newBuilder().setX(x).setY(y).setZ(z).setYaw(45).setPitch(30);
    }

    static ErrorCode code(Runnable r) {
        return assertThrows(McbException.class, r::run).code;
    }

    @Test
    void movesTheSpectatorAndAnswersOnceItsChunksAreSent() {
        CameraAccount c = camera("CamBot", 5_000);
        CameraAccountPoseResult r = c.pose(pose(1.5, 70, -3.5).setAccount("cambot").build(), "world", DIRECT);
        assertTrue(r.getMoved());
        assertEquals("world", r.getWorld());
        assertEquals(List.of("CamBot@1.5,70.0,-3.5/45.0,30.0"), port.moves);
        assertEquals(4, port.polls); // pending 3, 2, 1, then 0
        assertTrue(r.getAtMillis() > 1_000);
        // an empty account name means the configured one
        c.pose(pose(0, 64, 0).build(), "world", DIRECT);
        assertEquals(2, port.moves.size());
    }

    @Test
    void refusalsAreStructuredAndNothingMoves() {
        CameraAccount c = camera("CamBot", 5_000);
        assertEquals(ErrorCode.PERMISSION_DENIED, code(() -> c.pose(pose(0, 70, 0).setAccount("alice").build(), "world", DIRECT)));
        assertEquals(ErrorCode.PERMISSION_DENIED, code(() -> c.pose(pose(0, 70, 0).setWorld("world_nether").build(), "world", DIRECT)));
        McbException out = assertThrows(McbException.class, () -> c.pose(pose(50, 70, 0).build(), "world", DIRECT));
        assertEquals(ErrorCode.PERMISSION_DENIED, out.code);
        assertEquals("outside_allowed_areas", out.details.get("reason").getAsString());
        // the eye counts: feet at 99.5 put the eye above the area's top (100 + 1)
        assertEquals(ErrorCode.PERMISSION_DENIED, code(() -> c.pose(pose(0, 99.5, 0).build(), "world", DIRECT)));
        assertEquals(ErrorCode.INVALID_REQUEST, code(() -> c.pose(pose(0, 70, 0).setPitch(91).build(), "world", DIRECT)));
        assertEquals(ErrorCode.INVALID_REQUEST, code(() -> c.pose(pose(Double.NaN, 70, 0).build(), "world", DIRECT)));
        assertEquals(List.of(), port.moves);
    }

    @Test
    void noAccountOfflineAndUnsentChunks() {
        McbException none = assertThrows(McbException.class, () -> new CameraAccount(CameraAccount.Settings.NONE, port,
                clock::get).pose(pose(0, 70, 0).build(), "world", DIRECT));
        assertEquals(ErrorCode.CAMERA_UNAVAILABLE, none.code);
        assertEquals("no_camera_account", none.details.get("reason").getAsString());
        port.online = false;
        McbException off = assertThrows(McbException.class, () -> camera("CamBot", 100).pose(pose(0, 70, 0).build(), "world", DIRECT));
        assertEquals("camera_account_offline", off.details.get("reason").getAsString());
        port.online = true;
        port.sendAfter = 1_000_000;
        McbException slow = assertThrows(McbException.class, () -> camera("CamBot", 100).pose(pose(0, 70, 0).build(), "world", DIRECT));
        assertEquals(ErrorCode.CAPTURE_NOT_READY, slow.code);
        assertTrue(slow.details.get("chunksPending").getAsInt() > 0);
    }
}
