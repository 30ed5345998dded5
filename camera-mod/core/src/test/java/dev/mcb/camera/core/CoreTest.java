package dev.mcb.camera.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mcb.camera.core.headless.SoftwareFrames;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

class CoreTest {
    /** A scripted platform on a fake clock: every awaitFrame advances time by one frame. */
    static final class FakePlatform implements CameraPlatform {
        final AtomicLong clock = new AtomicLong(1_000);
        final Map<SectionKey, Long> held = new HashMap<>();
        int pending;
        int frames;
        Pose applied;
        Runnable onFrame = () -> { };

        @Override public String clientName() { return "fake"; }
        @Override public String minecraftVersion() { return "1.21.11"; }
        @Override public void applyPose(Pose pose, boolean hideHud) { applied = pose; }
        @Override public long heldRevision(SectionKey key) { return held.getOrDefault(key, -1L); }
        @Override public int pendingChunks() { return pending; }

        @Override
        public boolean awaitFrame(long timeoutMs) {
            long step = Math.min(16, timeoutMs);
            clock.addAndGet(step);
            frames++;
            onFrame.run();
            return step >= 16;
        }

        @Override
        public BufferedImage readFrame(int w, int h) {
            BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
            img.setRGB(0, 0, 0x123456);
            return img;
        }
    }

    static CaptureJob job(String json) throws CaptureFailure {
        return CaptureJob.parse(JsonParser.parseString(json).getAsJsonObject());
    }

    static final String POSE = "\"pose\":{\"x\":0.5,\"y\":70,\"z\":0.5,\"yaw\":30,\"pitch\":20,\"fov\":70,\"width\":64,\"height\":32}";

    @Test
    void readyWhenSectionsHeldAtTheAskedRevisionsThenStableFrames() throws Exception {
        FakePlatform p = new FakePlatform();
        CaptureJob j = job("{\"type\":\"capture\",\"id\":\"c1\"," + POSE
                + ",\"readiness\":{\"timeoutMs\":2000,\"stableFrames\":3},\"sections\":[{\"cx\":0,\"sy\":4,\"cz\":0,\"revision\":\"7\"}]}");
        p.pending = 2;
        p.onFrame = () -> {
            if (p.frames == 5) {
                p.pending = 0;
                p.held.put(new SectionKey(0, 4, 0), 6L); // still behind
            }
            if (p.frames == 9) {
                p.held.put(new SectionKey(0, 4, 0), 7L);
            }
        };
        List<String> stages = new ArrayList<>();
        CaptureService.Result r = new CaptureService(p, AllowedAreas.ANYWHERE, p.clock::get).capture(j, stages::add);
        assertEquals(List.of("moving", "loading_chunks", "stabilising"), stages);
        assertEquals(12, p.frames); // ready at frame 9, then three stable frames
        assertEquals(3, r.metadata().get("stableFrames"));
        assertEquals("image/png", r.mimeType());
        BufferedImage back = ImageIO.read(new ByteArrayInputStream(r.data()));
        assertEquals(64, back.getWidth());
        assertEquals(0x123456, back.getRGB(0, 0) & 0xffffff);
        assertEquals(CaptureService.sha256(r.data()), r.sha256());
    }

    @Test
    void aSectionThatNeverCatchesUpIsCaptureNotReadyAndNoFrameIsRead() throws Exception {
        FakePlatform p = new FakePlatform();
        p.held.put(new SectionKey(1, 4, -1), 3L);
        CaptureJob j = job("{\"id\":\"c2\"," + POSE
                + ",\"readiness\":{\"timeoutMs\":500,\"stableFrames\":3},\"sections\":[{\"cx\":1,\"sy\":4,\"cz\":-1,\"revision\":4}]}");
        CaptureFailure f = assertThrows(CaptureFailure.class,
                () -> new CaptureService(p, AllowedAreas.ANYWHERE, p.clock::get).capture(j, s -> { }));
        assertEquals("capture_not_ready", f.code());
        assertEquals(1, f.details().get("sectionsBehind"));
        assertTrue(p.clock.get() - 1_000 >= 500 && p.clock.get() - 1_000 < 600);
    }

    @Test
    void aChangeDuringStabilisingRestartsTheCount() throws Exception {
        FakePlatform p = new FakePlatform();
        SectionKey k = new SectionKey(0, 4, 0);
        p.held.put(k, 5L);
        p.onFrame = () -> {
            if (p.frames == 2) {
                p.pending = 1; // the server sent a change: the chunk is rebuilt
            }
            if (p.frames == 3) {
                p.pending = 0;
            }
        };
        CaptureJob j = job("{\"id\":\"c3\"," + POSE + ",\"readiness\":{\"timeoutMs\":1000,\"stableFrames\":3},"
                + "\"sections\":[{\"cx\":0,\"sy\":4,\"cz\":0,\"revision\":5}]}");
        Readiness.Report r = Readiness.await(p, j, p.clock::get);
        assertEquals(3, r.stableFrames());
        assertEquals(5, p.frames); // frame 2 restarts the count; 3, 4, 5 are stable
    }

    @Test
    void poseRulesAndAllowedAreas() throws Exception {
        AllowedAreas areas = AllowedAreas.of(List.of(AllowedAreas.Area.parse("10,60,10,-10,90,-10")));
        new Pose(0.5, 70, 0.5, 0, 0, 70, 64, 64).validate(areas);
        CaptureFailure out = assertThrows(CaptureFailure.class, () -> new Pose(50, 70, 0, 0, 0, 70, 64, 64).validate(areas));
        assertEquals("out_of_bounds", out.code());
        // the eye (feet + 1.62) counts: feet at 89 put the eye above the area
        assertEquals("out_of_bounds", assertThrows(CaptureFailure.class,
                () -> new Pose(0, 89.5, 0, 0, 0, 70, 64, 64).validate(areas)).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class,
                () -> new Pose(0, 70, 0, 0, 91, 70, 64, 64).validate(areas)).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class,
                () -> new Pose(0, 70, 0, 0, 0, 70, 8, 64).validate(areas)).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class,
                () -> new Pose(Double.NaN, 70, 0, 0, 0, 70, 64, 64).validate(areas)).code());
        assertEquals("out_of_bounds", assertThrows(CaptureFailure.class,
                () -> new Pose(0, 70, 0, 0, 0, 70, 64, 64).validate(AllowedAreas.NOWHERE)).code());
        FakePlatform p = new FakePlatform();
        assertThrows(CaptureFailure.class, () -> new CaptureService(p, areas, p.clock::get)
                .capture(job("{\"id\":\"c4\",\"pose\":{\"x\":500,\"y\":70,\"z\":0}}"), s -> { }));
        assertEquals(null, p.applied); // never moved
    }

    @Test
    void aFovOutsideTheGamesOptionRangeIsRefusedAndTheCameraDoesNotMove() throws Exception {
        // the game's FOV option takes 30..110 and silently uses 70 for anything else
        for (float fov : new float[] {30f, 30.4f, 70f, 109.6f, 110f}) {
            new Pose(0, 70, 0, 0, 0, fov, 64, 64).validate(AllowedAreas.ANYWHERE);
        }
        for (float fov : new float[] {29.99f, 10f, 0f, -70f, 110.01f, 120f, 170f}) {
            CaptureFailure f = assertThrows(CaptureFailure.class,
                    () -> new Pose(0, 70, 0, 0, 0, fov, 64, 64).validate(AllowedAreas.ANYWHERE), "fov " + fov);
            assertEquals("invalid_request", f.code());
            assertTrue(f.getMessage().contains("30..110") && f.getMessage().contains("got " + fov), f.getMessage());
            assertEquals(Map.of("fov", fov, "min", 30f, "max", 110f), f.details());
        }
        FakePlatform p = new FakePlatform();
        CaptureFailure f = assertThrows(CaptureFailure.class, () -> new CaptureService(p, AllowedAreas.ANYWHERE,
                p.clock::get).capture(job("{\"id\":\"c5\",\"pose\":{\"x\":0,\"y\":70,\"z\":0,\"fov\":20}}"), s -> { }));
        assertEquals("invalid_request", f.code());
        assertEquals(null, p.applied); // never moved
        // no fov in the message: the game's default 70
        assertEquals(70f, job("{\"id\":\"c6\",\"pose\":{\"x\":0,\"y\":70,\"z\":0}}").pose().fov());
    }

    @Test
    void malformedJobsAreInvalidRequest() {
        assertEquals("invalid_request", assertThrows(CaptureFailure.class, () -> job("{\"pose\":{}}")).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class, () -> job("{\"id\":\"x\"}")).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class,
                () -> job("{\"id\":\"x\"," + POSE + ",\"format\":\"gif\"}")).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class,
                () -> job("{\"id\":\"x\"," + POSE + ",\"readiness\":{\"timeoutMs\":-1}}")).code());
        assertEquals("invalid_request", assertThrows(CaptureFailure.class,
                () -> job("{\"id\":\"x\"," + POSE + ",\"sections\":[{\"cx\":\"a\"}]}")).code());
    }

    @Test
    void pngAndJpegEncode() throws Exception {
        BufferedImage img = new SoftwareFrames(64).draw(new Pose(0, 70, 0, 45, 30, 70, 96, 54), 96, 54);
        ImageEncoding.Encoded png = ImageEncoding.encode(img, "png");
        ImageEncoding.Encoded jpg = ImageEncoding.encode(img, "jpeg");
        assertEquals("image/png", png.mimeType());
        assertEquals("image/jpeg", jpg.mimeType());
        assertEquals((byte) 0x89, png.data()[0]);
        assertEquals((byte) 0xFF, jpg.data()[0]);
        BufferedImage back = ImageIO.read(new ByteArrayInputStream(png.data()));
        assertEquals(img.getRGB(10, 40), back.getRGB(10, 40));
        BufferedImage j = ImageIO.read(new ByteArrayInputStream(jpg.data()));
        assertEquals(96, j.getWidth());
    }

    @Test
    void softwareFramesAreDeterministicAndFollowThePose() {
        SoftwareFrames f = new SoftwareFrames(64);
        Pose a = new Pose(3, 70, 3, 10, 25, 70, 80, 45);
        int[] one = f.draw(a, 80, 45).getRGB(0, 0, 80, 45, null, 0, 80);
        int[] two = f.draw(a, 80, 45).getRGB(0, 0, 80, 45, null, 0, 80);
        assertArrayEquals(one, two);
        int[] other = f.draw(new Pose(3, 70, 3, 100, 25, 70, 80, 45), 80, 45).getRGB(0, 0, 80, 45, null, 0, 80);
        assertFalse(java.util.Arrays.equals(one, other));
        // looking straight up shows only sky, straight down only ground
        BufferedImage up = f.draw(new Pose(0, 70, 0, 0, -90, 70, 16, 16), 16, 16);
        BufferedImage down = f.draw(new Pose(0, 70, 0, 0, 90, 70, 16, 16), 16, 16);
        assertEquals(255, up.getRGB(8, 8) & 0xff);
        assertTrue((down.getRGB(8, 8) & 0xff) < 100);
    }

    @Test
    void backoffDoublesCapsAndResets() {
        Backoff b = new Backoff(100, 1_000, 42);
        long[] d = new long[6];
        for (int i = 0; i < d.length; i++) {
            d[i] = b.nextDelayMs();
        }
        assertTrue(d[0] >= 100 && d[0] <= 120);
        assertTrue(d[1] >= 200 && d[1] <= 240);
        assertTrue(d[2] >= 400 && d[2] <= 480);
        assertEquals(1_000, d[5]);
        b.reset();
        assertTrue(b.nextDelayMs() <= 120);
        assertThrows(IllegalArgumentException.class, () -> new Backoff(0, 10, 1));
    }

    @Test
    void theLinkClientNeedsItsKey() {
        FakePlatform p = new FakePlatform();
        assertThrows(IllegalArgumentException.class, () -> new LinkClient(java.net.URI.create("ws://127.0.0.1:1/"), " ",
                p, new CaptureService(p, AllowedAreas.ANYWHERE, p.clock::get), new Backoff(1, 1, 1), s -> { }));
        JsonObject unused = new JsonObject();
        assertTrue(unused.isEmpty());
    }
}
