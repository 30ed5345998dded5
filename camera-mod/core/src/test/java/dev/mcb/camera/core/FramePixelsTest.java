package dev.mcb.camera.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.awt.Color;
import java.awt.image.BufferedImage;
import org.junit.jupiter.api.Test;

/** NativeImage.getPixel is ARGB since Minecraft 1.21.2 (FramePixels' javadoc has the evidence). */
class FramePixelsTest {
    static final int RED = 0xFFFF0000;
    static final int GREEN = 0xFF00FF00;
    static final int BLUE = 0xFF0000FF;

    @Test
    void pureRedArgbDecodesToRedNotBlue() {
        // the old glue decoded ABGR: 0xFFFF0000 became 0x0000FF (blue)
        assertEquals(0xFF0000, FramePixels.rgbOfArgb(RED));
        assertEquals(0x00FF00, FramePixels.rgbOfArgb(GREEN));
        assertEquals(0x0000FF, FramePixels.rgbOfArgb(BLUE));
        assertEquals(0x123456, FramePixels.rgbOfArgb(0x80123456)); // alpha dropped, channels kept in place
    }

    @Test
    void aFrameKeepsEveryChannelWhereItIs() {
        int[] argb = {RED, GREEN, BLUE, 0xFF102030};
        BufferedImage img = FramePixels.toRgbImage(2, 2, (x, y) -> argb[y * 2 + x], 2, 2);
        assertEquals(BufferedImage.TYPE_INT_RGB, img.getType());
        Color red = new Color(img.getRGB(0, 0));
        assertEquals(255, red.getRed());
        assertEquals(0, red.getBlue());
        assertEquals(0x00FF00, img.getRGB(1, 0) & 0xFFFFFF);
        assertEquals(0x0000FF, img.getRGB(0, 1) & 0xFFFFFF);
        assertEquals(0x102030, img.getRGB(1, 1) & 0xFFFFFF);
    }

    @Test
    void aWindowOfAnotherSizeIsScaledToTheAskedSize() {
        BufferedImage img = FramePixels.toRgbImage(64, 36, (x, y) -> RED, 32, 18);
        assertEquals(32, img.getWidth());
        assertEquals(18, img.getHeight());
        assertEquals(0xFF0000, img.getRGB(16, 9) & 0xFFFFFF);
        BufferedImage same = FramePixels.toRgbImage(4, 4, (x, y) -> BLUE, 4, 4);
        assertEquals(BufferedImage.TYPE_INT_RGB, same.getType());
        assertEquals(0x0000FF, same.getRGB(3, 3) & 0xFFFFFF);
        assertThrows(IllegalArgumentException.class, () -> FramePixels.toRgbImage(0, 4, (x, y) -> RED, 4, 4));
    }
}
