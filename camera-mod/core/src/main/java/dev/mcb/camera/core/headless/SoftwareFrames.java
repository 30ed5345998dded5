package dev.mcb.camera.core.headless;

import dev.mcb.camera.core.Pose;
import java.awt.image.BufferedImage;

/**
 * A deterministic software frame source for the headless platform: the view from the pose's eye
 * (the game's camera convention and projection) onto a checkered ground plane at
 * {@code groundY} under a sky gradient. The same pose always gives the same pixels; a different
 * pose gives a different picture. It draws no blocks: it exists to exercise the link, the
 * readiness rule and the encoders as a real process, not to show the world.
 */
public final class SoftwareFrames {
    private final double groundY;

    public SoftwareFrames(double groundY) {
        this.groundY = groundY;
    }

    public BufferedImage draw(Pose pose, int width, int height) {
        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        double yaw = Math.toRadians(pose.yaw());
        double pitch = Math.toRadians(pose.pitch());
        // forward, right, up in world space (yaw 0 = +z, 90 = -x; pitch +90 = down)
        double fx = -Math.sin(yaw) * Math.cos(pitch), fy = -Math.sin(pitch), fz = Math.cos(yaw) * Math.cos(pitch);
        double rx = -Math.cos(yaw), ry = 0, rz = -Math.sin(yaw);
        double ux = ry * fz - rz * fy, uy = rz * fx - rx * fz, uz = rx * fy - ry * fx;
        double tanHalf = Math.tan(Math.toRadians(pose.fov()) / 2);
        double aspect = width / (double) height;
        double ex = pose.x(), ey = pose.eyeY(), ez = pose.z();
        int[] row = new int[width];
        for (int j = 0; j < height; j++) {
            double v = (1 - 2 * (j + 0.5) / height) * tanHalf;
            for (int i = 0; i < width; i++) {
                double u = (2 * (i + 0.5) / width - 1) * tanHalf * aspect;
                double dx = fx + u * rx + v * ux, dy = fy + u * ry + v * uy, dz = fz + u * rz + v * uz;
                double len = Math.sqrt(dx * dx + dy * dy + dz * dz);
                dx /= len;
                dy /= len;
                dz /= len;
                row[i] = shade(ex, ey, ez, dx, dy, dz);
            }
            img.setRGB(0, j, width, 1, row, 0, width);
        }
        return img;
    }

    private int shade(double ex, double ey, double ez, double dx, double dy, double dz) {
        double t = dy < -1e-6 ? (groundY - ey) / dy : -1;
        if (t > 0 && ey > groundY) {
            double x = ex + dx * t, z = ez + dz * t;
            boolean dark = ((int) Math.floor(x) + (int) Math.floor(z) & 1) == 0;
            double fog = Math.min(1.0, t / 160.0);
            int r = mix(dark ? 96 : 127, 190, fog), g = mix(dark ? 140 : 178, 215, fog), b = mix(dark ? 44 : 56, 255, fog);
            return r << 16 | g << 8 | b;
        }
        double s = Math.max(0, dy);
        return mix(190, 120, s) << 16 | mix(215, 166, s) << 8 | 255;
    }

    private static int mix(int a, int b, double t) {
        return (int) Math.round(a + (b - a) * t);
    }
}
