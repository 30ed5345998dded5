package dev.mcb.camera.core;

import java.util.Map;

/**
 * Where the camera stands and what it draws (docs/camera-link.md): the feet position (the eye is
 * {@link #EYE_HEIGHT} above), yaw/pitch in the game's convention (yaw 0 looks south/+z, 90 west/-x;
 * pitch +90 straight down), the vertical field of view in degrees and the picture size.
 */
public record Pose(double x, double y, double z, float yaw, float pitch, float fov, int width, int height) {
    public static final double EYE_HEIGHT = 1.62;
    public static final int MIN_SIZE = 16;
    public static final int MAX_WIDTH = 3840;
    public static final int MAX_HEIGHT = 2160;
    /**
     * The vertical FOV range the camera accepts: the Minecraft client's own FOV option. Its value
     * set is {@code new OptionInstance.IntRange(30, 110)} ({@code net/minecraft/client/Options.java})
     * and {@code OptionInstance.set} replaces a value outside it by the option's initial value, 70,
     * logging only "Illegal option value" (PolarBear2333/minecraft_sourcecode_1.21.7_client
     * {@code @aa59f96}: Options.java line 356, OptionInstance.java lines 131-135 and 279). A pose
     * outside it would silently be drawn at 70, so it is refused instead. The camera worker
     * (services/camera-worker, {@code MIN_FOV}/{@code MAX_FOV}) and the MCP tool schema hold the
     * same range.
     */
    public static final float MIN_FOV = 30f;
    public static final float MAX_FOV = 110f;

    public double eyeY() {
        return y + EYE_HEIGHT;
    }

    /** The pose's own rules (finite, pitch, fov, size) and the server owner's allowed areas. */
    public void validate(AllowedAreas areas) throws CaptureFailure {
        if (!Double.isFinite(x) || !Double.isFinite(y) || !Double.isFinite(z) || !Float.isFinite(yaw)
                || !Float.isFinite(pitch) || !Float.isFinite(fov)) {
            throw new CaptureFailure("invalid_request", "the pose has a non-finite number", Map.of());
        }
        if (pitch < -90f || pitch > 90f) {
            throw new CaptureFailure("invalid_request", "pitch must be within -90..90 degrees, got " + pitch,
                    Map.of("pitch", pitch));
        }
        if (fov < MIN_FOV || fov > MAX_FOV) {
            throw new CaptureFailure("invalid_request", "fov must be within " + fmtDeg(MIN_FOV) + ".." + fmtDeg(MAX_FOV)
                    + " degrees (vertical), got " + fov + ": the Minecraft client's FOV option takes only this range"
                    + " and would draw any other value at 70; ask for a FOV in it (70 is the game's default)",
                    Map.of("fov", fov, "min", MIN_FOV, "max", MAX_FOV));
        }
        if (width < MIN_SIZE || height < MIN_SIZE || width > MAX_WIDTH || height > MAX_HEIGHT) {
            throw new CaptureFailure("invalid_request", "the picture must be between " + MIN_SIZE + "x" + MIN_SIZE
                    + " and " + MAX_WIDTH + "x" + MAX_HEIGHT + " pixels, got " + width + "x" + height,
                    Map.of("width", width, "height", height));
        }
        if (!areas.contains(x, eyeY(), z)) {
            throw new CaptureFailure("out_of_bounds", "the camera may not stand at " + fmt(x) + " " + fmt(eyeY())
                    + " " + fmt(z) + " (eye): it is outside every allowed area of this camera client ("
                    + areas.describe() + ")", Map.of("eye", Map.of("x", x, "y", eyeY(), "z", z)));
        }
    }

    private static String fmtDeg(float v) {
        return String.format(java.util.Locale.ROOT, "%.0f", v);
    }

    private static String fmt(double v) {
        return String.format(java.util.Locale.ROOT, "%.2f", v);
    }
}
