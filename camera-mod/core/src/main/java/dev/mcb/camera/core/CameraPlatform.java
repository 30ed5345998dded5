package dev.mcb.camera.core;

import java.awt.image.BufferedImage;

/**
 * What the core needs from the thing that draws: the Fabric client (camera-mod/fabric) or the
 * headless software platform (tests, CI). Implementations convert types and hop threads; every
 * rule lives in the core. Calls come from the core's capture thread.
 */
public interface CameraPlatform {
    /** "mcb-camera-mod", "mcb-camera-headless", ... */
    String clientName();

    String minecraftVersion();

    /** Set the client-side view (position, rotation, fov, framebuffer size, HUD hidden). */
    void applyPose(Pose pose, boolean hideHud) throws CaptureFailure;

    /**
     * The sections the capture will wait for (called after {@link #applyPose}); a client may use
     * it to ask for or prioritise them. The Fabric client ignores it: the server sends what the
     * camera account sees.
     */
    default void expect(java.util.Set<SectionKey> sections) {
    }

    /**
     * The revision at which this client holds the section's blocks, or -1 when the section is
     * not received and built yet.
     */
    long heldRevision(SectionKey key);

    /** Chunks still waiting to be received or rebuilt (0 when the view is complete). */
    int pendingChunks();

    /** Block until the next frame has been drawn (or timeoutMs passed); true if one was. */
    boolean awaitFrame(long timeoutMs) throws InterruptedException;

    /** Read back the last drawn frame, {@code width}x{@code height}, TYPE_INT_RGB. */
    BufferedImage readFrame(int width, int height) throws CaptureFailure;
}
