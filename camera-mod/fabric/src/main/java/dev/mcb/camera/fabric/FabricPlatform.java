package dev.mcb.camera.fabric;

import com.mojang.blaze3d.platform.NativeImage;
import dev.mcb.camera.core.CameraPlatform;
import dev.mcb.camera.core.CaptureFailure;
import dev.mcb.camera.core.FramePixels;
import dev.mcb.camera.core.Pose;
import dev.mcb.camera.core.SectionKey;
import java.awt.image.BufferedImage;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import net.minecraft.client.Minecraft;
import net.minecraft.client.Screenshot;
import net.minecraft.core.BlockPos;
import net.minecraft.world.level.ChunkPos;

/**
 * NOT COMPILED HERE: the core's {@link CameraPlatform} over the Minecraft client. Every method
 * converts types, hops to the render thread ({@code client.submit}) and calls the game; the
 * rules are the core's. Section revisions: a client cannot see the world host's revisions, so a
 * section counts as held at any asked revision once its chunk was (re)received after the pose
 * was applied and its section is compiled — the server moved the camera account first
 * ({@code camera_account_pose}) and sends current chunks; the worker keeps
 * {@code serverRevisionVerified=false} for this driver.
 */
final class FabricPlatform implements CameraPlatform {
    private final Minecraft client;
    private final Set<Long> loaded = ConcurrentHashMap.newKeySet();
    private final Map<Long, Long> loadedAt = new ConcurrentHashMap<>();
    private final Object frames = new Object();
    private long frameCount;

    FabricPlatform(Minecraft client) {
        this.client = client;
    }

    void chunkLoaded(int cx, int cz) {
        long k = ChunkPos.asLong(cx, cz);
        loaded.add(k);
        loadedAt.put(k, System.currentTimeMillis());
    }

    void chunkUnloaded(int cx, int cz) {
        long k = ChunkPos.asLong(cx, cz);
        loaded.remove(k);
        loadedAt.remove(k);
    }

    void frameDrawn() {
        synchronized (frames) {
            frameCount++;
            frames.notifyAll();
        }
    }

    @Override
    public String clientName() {
        return "mcb-camera-mod";
    }

    @Override
    public String minecraftVersion() {
        return net.minecraft.SharedConstants.getCurrentVersion().name();
    }

    @Override
    public void applyPose(Pose pose, boolean hideHud) throws CaptureFailure {
        onRenderThread(() -> {
            var player = client.player;
            if (player == null) {
                throw new IllegalStateException("not in a world");
            }
            // the server already teleported the camera account; the client sets the view
            player.setYRot(pose.yaw());
            player.setXRot(pose.pitch());
            // The FOV option is an IntRange(30, 110) and OptionInstance.set replaces any other value
            // by 70 (logging only): the core refuses a pose outside 30..110 (Pose.MIN_FOV/MAX_FOV,
            // with the upstream lines), so the option keeps the value set here (rounded to a degree).
            client.options.fov().set(Math.round(pose.fov()));
            // The drawn FOV is the option times the player's FOV modifier, scaled by "FOV effects":
            // a flying player gets x1.1 (a spectator always flies: GameType.java:77-81), speed
            // effects more, water and lava x0.857 (AbstractClientPlayer.java:72-92, GameRenderer
            // tickFov 372-387 and getFov 389-409; the 1.21.7 client source cited in Pose). With
            // the scale at 0 (Options.java:371, a 0..1 option) the modifier is 1 and the picture
            // has the asked FOV. The game eases the modifier over a few ticks, so the first
            // capture after start may still be slightly wider.
            client.options.fovEffectScale().set(0.0);
            client.options.hideGui = hideHud;
            return null;
        });
    }

    @Override
    public long heldRevision(SectionKey key) {
        Long at = loadedAt.get(ChunkPos.asLong(key.cx(), key.cz()));
        if (at == null || !loaded.contains(ChunkPos.asLong(key.cx(), key.cz()))) {
            return -1;
        }
        boolean compiled = onRenderThreadOrFalse(() -> client.levelRenderer.isSectionCompiled(
                new BlockPos(key.cx() * 16, key.sy() * 16, key.cz() * 16)));
        // loaded before the pose and still loaded: the server kept it current; after: just received
        return compiled ? Long.MAX_VALUE : -1;
    }

    @Override
    public int pendingChunks() {
        return onRenderThreadOrFalse(() -> client.levelRenderer.hasRenderedAllSections()) ? 0 : 1;
    }

    @Override
    public boolean awaitFrame(long timeoutMs) throws InterruptedException {
        synchronized (frames) {
            long seen = frameCount, deadline = System.currentTimeMillis() + timeoutMs;
            while (frameCount == seen) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                frames.wait(left);
            }
            return true;
        }
    }

    @Override
    public BufferedImage readFrame(int width, int height) throws CaptureFailure {
        CompletableFuture<BufferedImage> out = new CompletableFuture<>();
        try {
            client.execute(() -> Screenshot.takeScreenshot(client.getMainRenderTarget(), image -> {
                try (NativeImage img = image) {
                    out.complete(toBufferedImage(img, width, height));
                }
            }));
            return out.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new CaptureFailure("camera_unavailable", "reading the frame back failed: " + e.getClass().getSimpleName(),
                    Map.of());
        }
    }

    /**
     * The screenshot as RGB at the asked size. {@code NativeImage.getPixel} is ARGB since
     * Minecraft 1.21.2 (it was ABGR as {@code getPixelRGBA} before; decoding it as ABGR swaps red
     * and blue): upstream {@code com/mojang/blaze3d/platform/NativeImage.java} has
     * {@code getPixel(x, y) = ARGB.fromABGR(getPixelABGR(x, y))} (e.g.
     * PolarBear2333/minecraft_sourcecode_1.21.7_client@aa59f96, lines 235-236). The decoding and
     * the scaling are {@link FramePixels} in the tested core; its javadoc has the other sources.
     */
    private static BufferedImage toBufferedImage(NativeImage img, int width, int height) {
        return FramePixels.toRgbImage(img.getWidth(), img.getHeight(), img::getPixel, width, height);
    }

    private <T> T onRenderThread(java.util.function.Supplier<T> task) throws CaptureFailure {
        try {
            return client.submit(task).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new CaptureFailure("camera_unavailable", "the game did not run the camera's call: "
                    + e.getClass().getSimpleName(), Map.of());
        }
    }

    private boolean onRenderThreadOrFalse(java.util.function.Supplier<Boolean> task) {
        try {
            return client.submit(task).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            return false;
        }
    }
}
