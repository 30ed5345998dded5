package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import org.bukkit.GameMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/** camera_account_pose over the plugin: the configured account becomes a spectator at the pose. */
class CameraAccountPoseTest {
    /** MockBukkit does not track sent chunks: this player has been sent every chunk once {@code sent}. */
    static final class CameraPlayer extends PlayerMock {
        volatile boolean sent;
        final java.util.Set<Long> asked = java.util.concurrent.ConcurrentHashMap.newKeySet();

        CameraPlayer(org.mockbukkit.mockbukkit.ServerMock server) {
            super(server, "CamBot", java.util.UUID.nameUUIDFromBytes("CamBot".getBytes()));
        }

        @Override
        public int getSendViewDistance() {
            return 2;
        }

        @Override
        public boolean isChunkSent(long key) {
            asked.add(key);
            return sent;
        }
    }

    PluginHarness h;

    @AfterEach
    void stop() {
        if (h != null) {
            h.close();
        }
    }

    @Test
    void theConfiguredAccountIsMovedAsASpectatorWithinTheAllowedAreas() throws Exception {
        h = PluginHarness.start(Map.of("camera.account", "CamBot", "camera.areas", List.of("-40,0,-40,40,200,40"),
                "camera.chunk-wait-ms", 300, "camera.chunk-radius", 8));
        JsonObject info = h.rpc("service", "world_info", "{}");
        assertTrue(info.toString().contains("camera_account_pose"), info.toString());
        String pose = "{\"x\":3.5,\"y\":70,\"z\":-2.5,\"yaw\":90,\"pitch\":20}";
        JsonObject offline = h.ticking(h.rpcAsync("service", "camera_account_pose", pose));
        assertEquals("camera_unavailable", offline.getAsJsonObject("error").get("code").getAsString(), offline.toString());
        CameraPlayer cam = new CameraPlayer(h.server);
        h.server.addPlayer(cam);
        cam.setGameMode(GameMode.SURVIVAL);
        JsonObject r = h.ticking(h.rpcAsync("service", "camera_account_pose", pose));
        // moved as a spectator, but the chunks were never sent: capture_not_ready with the count
        assertEquals(GameMode.SPECTATOR, cam.getGameMode());
        assertEquals(3.5, cam.getLocation().getX(), 1e-9);
        assertEquals(90f, cam.getLocation().getYaw(), 1e-6);
        assertEquals("capture_not_ready", r.getAsJsonObject("error").get("code").getAsString(), r.toString());
        assertEquals(25, r.getAsJsonObject("error").getAsJsonObject("details").get("chunksPending").getAsInt());
        assertEquals(25, cam.asked.size()); // radius min(8, send view distance 2): 5 x 5 chunks
        cam.sent = true;
        r = h.ticking(h.rpcAsync("service", "camera_account_pose", pose));
        assertTrue(r.getAsJsonObject("result").get("moved").getAsBoolean(), r.toString());
        JsonObject far = h.ticking(h.rpcAsync("service", "camera_account_pose",
                "{\"x\":500,\"y\":70,\"z\":0,\"yaw\":0,\"pitch\":0}"));
        assertFalse(far.get("ok").getAsBoolean());
        assertEquals("permission_denied", far.getAsJsonObject("error").get("code").getAsString());
        assertEquals(3.5, cam.getLocation().getX(), 1e-9); // not moved
    }

    @Test
    void withoutAConfiguredAccountNothingMoves() throws Exception {
        h = PluginHarness.start();
        JsonObject r = h.rpc("service", "camera_account_pose", "{\"x\":0,\"y\":70,\"z\":0}");
        assertEquals("camera_unavailable", r.getAsJsonObject("error").get("code").getAsString(), r.toString());
        assertTrue(r.toString().contains("no_camera_account"), r.toString());
    }
}
