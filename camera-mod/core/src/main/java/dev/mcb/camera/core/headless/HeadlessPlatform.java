package dev.mcb.camera.core.headless;

import dev.mcb.camera.core.CameraPlatform;
import dev.mcb.camera.core.CaptureFailure;
import dev.mcb.camera.core.Pose;
import dev.mcb.camera.core.SectionKey;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The camera client without Minecraft: frames from {@link SoftwareFrames}, sections "received"
 * {@code loadDelayMs} after each pose change at the revision the world host reports (through
 * {@link WorldRevisions}), minus {@code lagRevisions} (a client that never catches up, to test
 * {@code capture_not_ready}). Without a world host it holds no section at all.
 */
public final class HeadlessPlatform implements CameraPlatform {
    private final SoftwareFrames frames;
    private final WorldRevisions world;
    private final long lagRevisions;
    private final long loadDelayMs;
    private final long frameMs;
    private final LongSupplier clockMs;
    private final Map<SectionKey, long[]> held = new HashMap<>(); // key -> {revision, fetchedAtMs}
    private Set<SectionKey> expected = Set.of();
    private volatile Pose pose;
    private volatile long poseAtMs;

    public HeadlessPlatform(double groundY, String worldUrl, String worldToken, long lagRevisions, long loadDelayMs,
                            long frameMs, LongSupplier clockMs) {
        this.frames = new SoftwareFrames(groundY);
        this.world = worldUrl == null ? null : new WorldRevisions(worldUrl, worldToken);
        this.lagRevisions = lagRevisions;
        this.loadDelayMs = loadDelayMs;
        this.frameMs = frameMs;
        this.clockMs = clockMs;
    }

    @Override
    public String clientName() {
        return "mcb-camera-headless";
    }

    @Override
    public String minecraftVersion() {
        return "none (headless)";
    }

    @Override
    public synchronized void applyPose(Pose p, boolean hideHud) {
        pose = p;
        poseAtMs = clockMs.getAsLong();
        held.clear(); // a new view: sections are received again
    }

    @Override
    public synchronized long heldRevision(SectionKey key) {
        long now = clockMs.getAsLong();
        if (world == null || pose == null || now - poseAtMs < loadDelayMs) {
            return -1;
        }
        long[] h = held.get(key);
        if (h == null || now - h[1] >= 50) {
            // "receive" the view's whole layer at once: one request, like a batch of chunk packets
            Map<SectionKey, Long> got = null;
            try {
                int[] b = bounds(key);
                got = world.layer(b[0], b[1], b[2], b[3], key.sy());
                if (got == null && (b[0] != b[2] || b[1] != b[3])) { // part of it does not exist: this one alone
                    got = world.layer(key.cx(), key.cz(), key.cx(), key.cz(), key.sy());
                }
            } catch (IOException | RuntimeException e) {
                got = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (got == null) {
                h = new long[] {-1, now};
                held.put(key, h);
            } else {
                for (Map.Entry<SectionKey, Long> e : got.entrySet()) {
                    held.put(e.getKey(), new long[] {e.getValue() - lagRevisions, now});
                }
                h = held.get(key);
            }
        }
        return h[0];
    }

    @Override
    public synchronized void expect(Set<SectionKey> sections) {
        expected = Set.copyOf(sections);
    }

    /** The chunk square of the expected sections (the view), or the section alone: cx0, cz0, cx1, cz1. */
    private int[] bounds(SectionKey key) {
        int[] b = {key.cx(), key.cz(), key.cx(), key.cz()};
        if (expected.contains(key)) {
            for (SectionKey k : expected) {
                b[0] = Math.min(b[0], k.cx());
                b[1] = Math.min(b[1], k.cz());
                b[2] = Math.max(b[2], k.cx());
                b[3] = Math.max(b[3], k.cz());
            }
        }
        return b;
    }

    @Override
    public int pendingChunks() {
        return pose != null && clockMs.getAsLong() - poseAtMs < loadDelayMs ? 1 : 0;
    }

    @Override
    public boolean awaitFrame(long timeoutMs) throws InterruptedException {
        long wait = Math.min(frameMs, Math.max(0, timeoutMs));
        Thread.sleep(wait);
        return wait >= frameMs;
    }

    @Override
    public BufferedImage readFrame(int width, int height) throws CaptureFailure {
        Pose p = pose;
        if (p == null) {
            throw new CaptureFailure("camera_unavailable", "no frame has been drawn yet", Map.of());
        }
        return frames.draw(p, width, height);
    }
}
