package dev.mcb.world.core.port;

import java.util.Optional;

/** Online players (the camera account is moved through {@link dev.mcb.world.core.CameraAccount.Port}). */
public interface Players {
    /** No players online (test hosts, benchmarks). */
    Players NONE = new Players() {
        @Override
        public Optional<PlayerView> find(String playerId) {
            return Optional.empty();
        }
    };

    /** Position, look and target block of an online player, on the server thread. */
    Optional<PlayerView> find(String playerId);

    record PlayerView(String playerId, String name, String world, double x, double y, double z,
                      float yaw, float pitch, int[] targetBlock, String targetState) {
    }
}
