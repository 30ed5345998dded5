package dev.mcb.camera.core;

import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;

/**
 * The frame read-back's pixel decoding, kept in the tested core so the Fabric glue only hands
 * over {@code NativeImage::getPixel}.
 *
 * <p>Since Minecraft 1.21.2 {@code NativeImage.getPixel(x, y)} returns <b>ARGB</b>
 * ({@code 0xAARRGGBB}): it is {@code ARGB.fromABGR(getPixelABGR(x, y))}, the raw memory word
 * being ABGR (bytes R, G, B, A), and {@code setPixel} is {@code setPixelABGR(x, y, ARGB.toABGR(c))}.
 * Seen in the decompiled client of 1.21.7 (PolarBear2333/minecraft_sourcecode_1.21.7_client
 * {@code @aa59f96}, {@code com/mojang/blaze3d/platform/NativeImage.java} lines 235-253) and of
 * 26.3 (0khs/minecraft_source_26.3 {@code @74720c2}, same file, {@code getPixel}), which bracket
 * 1.21.11; NativeImage's mapping history (https://mappings.dev/history/ed1b842687.html, 1.21.5
 * to 1.21.11) names both {@code setPixelABGR} (yarn {@code setColor}) and the ARGB
 * {@code setPixel} (yarn {@code setColorArgb}, {@code method_61941}). Before 1.21.2 the call was
 * {@code getPixelRGBA} and returned the raw ABGR word; decoding today's value as ABGR swaps red
 * and blue.
 */
public final class FramePixels {
    /** Where the pixels come from: {@code NativeImage::getPixel} in the mod, an array in tests. */
    @FunctionalInterface
    public interface ArgbSource {
        int argb(int x, int y);
    }

    private FramePixels() {
    }

    /** One ARGB pixel ({@code 0xAARRGGBB}) as the RGB of a TYPE_INT_RGB image ({@code 0x00RRGGBB}). */
    public static int rgbOfArgb(int argb) {
        return argb & 0xFFFFFF;
    }

    /**
     * A {@code width}x{@code height} ARGB frame as a TYPE_INT_RGB image of {@code outWidth}x
     * {@code outHeight} (bilinear scaling when the window is another size than the picture).
     */
    public static BufferedImage toRgbImage(int width, int height, ArgbSource source, int outWidth, int outHeight) {
        if (width <= 0 || height <= 0 || outWidth <= 0 || outHeight <= 0) {
            throw new IllegalArgumentException("sizes must be positive: " + width + "x" + height + " -> "
                    + outWidth + "x" + outHeight);
        }
        BufferedImage full = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                full.setRGB(x, y, rgbOfArgb(source.argb(x, y)));
            }
        }
        if (width == outWidth && height == outHeight) {
            return full;
        }
        BufferedImage scaled = new BufferedImage(outWidth, outHeight, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = scaled.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
            g.setRenderingHint(RenderingHints.KEY_RENDERING, RenderingHints.VALUE_RENDER_QUALITY);
            g.drawImage(full, 0, 0, outWidth, outHeight, null);
        } finally {
            g.dispose();
        }
        return scaled;
    }
}
