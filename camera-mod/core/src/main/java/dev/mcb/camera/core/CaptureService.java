package dev.mcb.camera.core;

import java.awt.image.BufferedImage;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * One capture, start to end: validate the pose against the allowed areas, set the view, wait by
 * the readiness rule, read the frame back, encode it. Pure rules over a {@link CameraPlatform}.
 */
public final class CaptureService {
    public record Result(byte[] data, String mimeType, String sha256, Map<String, Object> metadata) {
    }

    public interface Progress {
        void stage(String stage);
    }

    private final CameraPlatform platform;
    private final AllowedAreas areas;
    private final LongSupplier clockMs;

    public CaptureService(CameraPlatform platform, AllowedAreas areas, LongSupplier clockMs) {
        this.platform = platform;
        this.areas = areas;
        this.clockMs = clockMs;
    }

    public Result capture(CaptureJob job, Progress progress) throws CaptureFailure, InterruptedException {
        long t0 = clockMs.getAsLong();
        Pose pose = job.pose();
        pose.validate(areas);
        progress.stage("moving");
        platform.applyPose(pose, job.hideHud());
        platform.expect(job.sections().keySet());
        progress.stage("loading_chunks");
        Readiness.Report ready = Readiness.await(platform, job, clockMs);
        progress.stage("stabilising");
        long tf = clockMs.getAsLong();
        BufferedImage frame = platform.readFrame(pose.width(), pose.height());
        if (frame.getWidth() != pose.width() || frame.getHeight() != pose.height()) {
            throw new CaptureFailure("camera_unavailable", "the client read back " + frame.getWidth() + "x"
                    + frame.getHeight() + " instead of " + pose.width() + "x" + pose.height(), Map.of());
        }
        ImageEncoding.Encoded enc = ImageEncoding.encode(frame, job.format());
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("chunksPending", platform.pendingChunks());
        meta.put("sectionsChecked", ready.sectionsChecked());
        meta.put("stableFrames", ready.stableFrames());
        meta.put("waitedMs", ready.waitedMs());
        meta.put("frameTimeMs", clockMs.getAsLong() - tf);
        meta.put("totalMs", clockMs.getAsLong() - t0);
        meta.put("hudHidden", job.hideHud());
        meta.put("eye", Map.of("x", pose.x(), "y", pose.eyeY(), "z", pose.z()));
        // the client holds the sections at (at least) the asked revisions, but cannot prove the
        // frame shows exactly them: the worker keeps serverRevisionVerified false for this driver
        meta.put("serverRevisionVerified", false);
        return new Result(enc.data(), enc.mimeType(), sha256(enc.data()), meta);
    }

    static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
