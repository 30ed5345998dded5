package dev.mcb.world.testhost;

import dev.mcb.world.core.CameraAccount;
import java.util.ArrayList;
import java.util.List;

/**
 * The test host's camera account: a spectator that is always online and "receives" the chunks
 * around a new pose {@value #SEND_MILLIS} ms after it moved (so the core's wait is exercised).
 * Configured by MCB_CAMERA_ACCOUNT (name) and MCB_CAMERA_AREAS ("x0,y0,z0,x1,y1,z1;...").
 */
final class SimulatedCamera implements CameraAccount.Port {
    static final long SEND_MILLIS = 60;

    private final String name;
    private volatile long movedAt = -1;

    SimulatedCamera(String name) {
        this.name = name;
    }

    static CameraAccount account(String name, String areas, long waitMillis) {
        List<CameraAccount.Area> list = new ArrayList<>();
        for (String a : areas.split(";")) {
            if (!a.isBlank()) {
                list.add(CameraAccount.Area.parse(a));
            }
        }
        return new CameraAccount(new CameraAccount.Settings(name, "", list, waitMillis), new SimulatedCamera(name),
                System::currentTimeMillis);
    }

    @Override
    public boolean moveSpectator(String account, double x, double y, double z, float yaw, float pitch) {
        if (!account.equalsIgnoreCase(name)) {
            return false;
        }
        movedAt = System.currentTimeMillis();
        return true;
    }

    @Override
    public int chunksPending(String account) {
        if (!account.equalsIgnoreCase(name)) {
            return -1;
        }
        return movedAt >= 0 && System.currentTimeMillis() - movedAt >= SEND_MILLIS ? 0 : 9;
    }
}
