package dev.mcb.world.core.port;

import java.util.Optional;

/** Online players and the camera account (a spectator account the camera client logs in as). */
public interface Players {
    /** No players online and no camera account (test hosts, benchmarks). */
    Players NONE = new Players() {
        @Override
        public Optional<PlayerView> find(String playerId) {
            return Optional.empty();
        }

        @Override
        public boolean poseCamera(String account, double x, double y, double z, float yaw, float pitch) {
            return false;
        }
    };

    /** Position, look and target block of an online player, on the server thread. */
    Optional<PlayerView> find(String playerId);

    /** Move the named camera account to a pose; false when that account is not online. */
    boolean poseCamera(String account, double x, double y, double z, float yaw, float pitch);

    record PlayerView(String playerId, String name, String world, double x, double y, double z,
                      float yaw, float pitch, int[] targetBlock, String targetState) {
    }
}
