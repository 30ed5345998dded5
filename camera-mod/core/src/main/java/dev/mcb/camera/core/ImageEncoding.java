package dev.mcb.camera.core;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.ImageOutputStream;

/** PNG and JPEG with the JDK's own encoders (javax.imageio); no alpha in either. */
public final class ImageEncoding {
    public record Encoded(byte[] data, String mimeType) {
    }

    public static final float JPEG_QUALITY = 0.9f;

    private ImageEncoding() {
    }

    public static Encoded encode(BufferedImage img, String format) {
        BufferedImage rgb = img.getType() == BufferedImage.TYPE_INT_RGB ? img : toRgb(img);
        try {
            if ("jpeg".equals(format)) {
                return new Encoded(jpeg(rgb), "image/jpeg");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            if (!ImageIO.write(rgb, "png", out)) {
                throw new IllegalStateException("no PNG writer in this JDK");
            }
            return new Encoded(out.toByteArray(), "image/png");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] jpeg(BufferedImage img) throws IOException {
        Iterator<ImageWriter> it = ImageIO.getImageWritersByFormatName("jpeg");
        if (!it.hasNext()) {
            throw new IllegalStateException("no JPEG writer in this JDK");
        }
        ImageWriter w = it.next();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ImageOutputStream ios = ImageIO.createImageOutputStream(out)) {
            w.setOutput(ios);
            ImageWriteParam p = w.getDefaultWriteParam();
            p.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
            p.setCompressionQuality(JPEG_QUALITY);
            w.write(null, new IIOImage(img, null, null), p);
        } finally {
            w.dispose();
        }
        return out.toByteArray();
    }

    private static BufferedImage toRgb(BufferedImage img) {
        BufferedImage out = new BufferedImage(img.getWidth(), img.getHeight(), BufferedImage.TYPE_INT_RGB);
        out.getGraphics().drawImage(img, 0, 0, null);
        return out;
    }
}
