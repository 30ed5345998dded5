package dev.mcb.world.core;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * An append-only file of checksummed records, fsynced on request (the plugin's state file).
 *
 * <p>Format: the 8-byte magic {@code MCBSTAT1}, then records {@code [int32 length][int32 crc32c(payload)]
 * [payload]} (big-endian, 1 ≤ length ≤ {@link #MAX_RECORD}). Appends go to the end; {@link #sync()} is
 * {@code fdatasync}. {@link #rewrite} replaces the whole file atomically (tmp file, fsync, rename, fsync of
 * the folder), so a crash leaves the old or the new file, never a mix.
 *
 * <p>Opening reads every record. A <b>torn tail</b> — the bytes after the last good record are an
 * incomplete record, a last record whose checksum does not match, or zeros — is what a crash in the middle
 * of an append leaves: the whole file is copied to {@code <name>.torn-<millis>}, the tail is cut off and
 * the file is fsynced. Anything else that does not check out (a bad record followed by more data, a wrong
 * magic) is damage this class does not guess about: {@link Corrupt} is thrown and the file is left as it
 * is.
 */
final class RecordLog implements Closeable {
    static final byte[] MAGIC = "MCBSTAT1".getBytes(StandardCharsets.US_ASCII);
    static final int MAX_RECORD = 64 << 20;

    /** The file is damaged in a way that is not a torn tail. */
    static final class Corrupt extends IOException {
        Corrupt(String message) {
            super(message);
        }
    }

    /** What {@link #open} found. {@code tornBackup} is set when a torn tail was cut off. */
    record Opened(RecordLog log, List<byte[]> records, long tornBytes, Path tornBackup) {
    }

    private final Path file;
    private FileChannel ch;

    private RecordLog(Path file, FileChannel ch) {
        this.file = file;
        this.ch = ch;
    }

    static Opened open(Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            long size = ch.size();
            if (size < MAGIC.length) {
                // new, or torn while it was being created: nothing was ever committed to it
                ch.truncate(0);
                ch.write(ByteBuffer.wrap(MAGIC), 0);
                ch.force(true);
                fsyncDir(file);
                ch.position(MAGIC.length);
                return new Opened(new RecordLog(file, ch), new ArrayList<>(), size, null);
            }
            byte[] all = new byte[(int) Math.min(size, Integer.MAX_VALUE - 8)];
            if (size != all.length) {
                throw new Corrupt(file + " is larger than 2 GiB: not a state file of this plugin");
            }
            ByteBuffer buf = ByteBuffer.wrap(all);
            while (buf.hasRemaining()) {
                if (ch.read(buf, buf.position()) < 0) {
                    break;
                }
            }
            if (!Arrays.equals(Arrays.copyOf(all, MAGIC.length), MAGIC)) {
                throw new Corrupt(file + " does not start with " + new String(MAGIC, StandardCharsets.US_ASCII));
            }
            List<byte[]> records = new ArrayList<>();
            int off = MAGIC.length;
            int good = off;
            String damage = null;
            while (off < all.length) {
                int rest = all.length - off;
                if (rest < 8) {
                    break; // incomplete header: torn
                }
                ByteBuffer h = ByteBuffer.wrap(all, off, 8);
                int len = h.getInt();
                int crc = h.getInt();
                if (len <= 0 || len > MAX_RECORD) { // every record has a type byte: 0 is zeros or damage
                    if (!zeros(all, off)) {
                        damage = "record at byte " + off + " has an impossible length " + len;
                    }
                    break;
                }
                if (len > rest - 8) {
                    break; // incomplete payload: torn
                }
                if (crc32c(all, off + 8, len) != crc) {
                    if (off + 8 + len != all.length && !zeros(all, off)) {
                        damage = "record at byte " + off + " fails its checksum and more records follow";
                    }
                    break; // the last record: torn while it was written
                }
                records.add(Arrays.copyOfRange(all, off + 8, off + 8 + len));
                off += 8 + len;
                good = off;
            }
            if (damage != null) {
                throw new Corrupt(file + ": " + damage);
            }
            Path backup = null;
            long torn = all.length - good;
            if (torn > 0) {
                backup = file.resolveSibling(file.getFileName() + ".torn-" + System.currentTimeMillis());
                Files.copy(file, backup, StandardCopyOption.REPLACE_EXISTING);
                ch.truncate(good);
                ch.force(true);
            }
            ch.position(good);
            return new Opened(new RecordLog(file, ch), records, torn, backup);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static boolean zeros(byte[] b, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    static int crc32c(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    private static ByteBuffer frame(List<byte[]> payloads) {
        int total = 0;
        for (byte[] p : payloads) {
            if (p.length == 0 || p.length > MAX_RECORD) {
                throw new IllegalArgumentException("record of " + p.length + " bytes exceeds " + MAX_RECORD);
            }
            total += 8 + p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(total);
        for (byte[] p : payloads) {
            b.putInt(p.length).putInt(crc32c(p, 0, p.length)).put(p);
        }
        return b.flip();
    }

    /** Append records at the end (not yet durable: call {@link #sync()}). */
    void append(List<byte[]> payloads) throws IOException {
        if (payloads.isEmpty()) {
            return;
        }
        ByteBuffer b = frame(payloads);
        long at = ch.position();
        try {
            while (b.hasRemaining()) {
                ch.write(b);
            }
        } catch (IOException e) {
            // never leave a half record behind a later good one
            ch.truncate(at);
            ch.position(at);
            throw e;
        }
    }

    /** Make every appended record durable (fdatasync). */
    void sync() throws IOException {
        ch.force(false);
    }

    long size() throws IOException {
        return ch.size();
    }

    /** Replace the whole file with these records, atomically and durably. */
    void rewrite(List<byte[]> payloads) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel t = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer m = ByteBuffer.wrap(MAGIC);
            while (m.hasRemaining()) {
                t.write(m);
            }
            ByteBuffer b = frame(payloads);
            while (b.hasRemaining()) {
                t.write(b);
            }
            t.force(true);
        }
        ch.close();
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDir(file);
        ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        ch.position(ch.size());
    }

    /** fsync the folder holding {@code file} (a new or renamed name survives a crash). */
    static void fsyncDir(Path file) throws IOException {
        try (FileChannel d = FileChannel.open(file.toAbsolutePath().getParent(), StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            if (!System.getProperty("os.name", "").toLowerCase().startsWith("windows")) {
                throw e;
            }
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
