package dev.mcb.camera.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The render-readiness rule (seed 002 §13; docs/camera-link.md): a picture may be taken only
 * when every section the job names is held at the revision it asks for or a later one, no chunk
 * is pending, and then {@code stableFrames} more frames have been drawn — all within the job's
 * timeout. Otherwise the capture fails with {@code capture_not_ready}; an older frame is never
 * returned.
 */
public final class Readiness {
    public record Report(int sectionsChecked, int stableFrames, long waitedMs) {
    }

    private static final long POLL_MS = 10;

    private Readiness() {
    }

    public static Report await(CameraPlatform platform, CaptureJob job, LongSupplier clockMs)
            throws CaptureFailure, InterruptedException {
        long start = clockMs.getAsLong();
        long deadline = start + job.timeoutMs();
        while (true) {
            List<SectionKey> behind = behind(platform, job);
            int pending = platform.pendingChunks();
            if (behind.isEmpty() && pending == 0) {
                break;
            }
            long left = deadline - clockMs.getAsLong();
            if (left <= 0) {
                throw notReady(platform, job, behind, pending, "the client does not hold the scene at the "
                        + "revisions asked for after " + job.timeoutMs() + " ms");
            }
            platform.awaitFrame(Math.min(POLL_MS, left));
        }
        int frames = 0;
        while (frames < job.stableFrames()) {
            long left = deadline - clockMs.getAsLong();
            if (left <= 0 || !platform.awaitFrame(left)) {
                throw notReady(platform, job, behind(platform, job), platform.pendingChunks(),
                        "only " + frames + " of " + job.stableFrames() + " stable frames within " + job.timeoutMs() + " ms");
            }
            // a section falling behind again (the server sent a change) restarts the count
            if (!behind(platform, job).isEmpty() || platform.pendingChunks() > 0) {
                frames = 0;
                continue;
            }
            frames++;
        }
        return new Report(job.sections().size(), frames, clockMs.getAsLong() - start);
    }

    static List<SectionKey> behind(CameraPlatform platform, CaptureJob job) {
        List<SectionKey> out = new ArrayList<>();
        for (Map.Entry<SectionKey, Long> e : job.sections().entrySet()) {
            if (platform.heldRevision(e.getKey()) < e.getValue()) {
                out.add(e.getKey());
            }
        }
        return out;
    }

    private static CaptureFailure notReady(CameraPlatform platform, CaptureJob job, List<SectionKey> behind, int pending,
                                           String why) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("chunksPending", pending);
        d.put("sectionsBehind", behind.size());
        if (!behind.isEmpty()) {
            SectionKey k = behind.get(0);
            d.put("firstBehind", Map.of("cx", k.cx(), "sy", k.sy(), "cz", k.cz(),
                    "wanted", job.sections().get(k), "held", platform.heldRevision(k)));
        }
        return new CaptureFailure("capture_not_ready", why + "; no picture was taken", d);
    }
}
