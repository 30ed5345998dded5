package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The state file breaks on purpose: torn tails are cut off (with a copy), other damage is refused. */
class RecordLogTest {
    @TempDir
    Path dir;

    private static byte[] rec(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private Path write(String... records) throws IOException {
        return writeTo("state.log", records);
    }

    private Path writeTo(String name, String... records) throws IOException {
        Path f = dir.resolve(name);
        RecordLog.Opened o = RecordLog.open(f);
        List<byte[]> rs = new ArrayList<>();
        for (String r : records) {
            rs.add(rec(r));
        }
        o.log().append(rs);
        o.log().sync();
        o.log().close();
        return f;
    }

    private static List<String> texts(RecordLog.Opened o) {
        return o.records().stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void roundTripAndAppendAfterReopen() throws IOException {
        Path f = write("one", "two");
        RecordLog.Opened o = RecordLog.open(f);
        assertEquals(List.of("one", "two"), texts(o));
        assertNull(o.tornBackup());
        o.log().append(List.of(rec("three")));
        o.log().sync();
        o.log().close();
        RecordLog.Opened again = RecordLog.open(f);
        assertEquals(List.of("one", "two", "three"), texts(again));
        again.log().close();
    }

    @Test
    void everyTruncationPointKeepsTheWholeRecordsBeforeIt() throws IOException {
        Path f = write("alpha", "beta", "gamma");
        byte[] full = Files.readAllBytes(f);
        int[] ends = {8, 8 + 8 + 5, 8 + 8 + 5 + 8 + 4, full.length};
        for (int cut = 0; cut <= full.length; cut++) {
            Files.write(f, Arrays.copyOf(full, cut));
            RecordLog.Opened o = RecordLog.open(f);
            int whole = 0;
            for (int i = 1; i < ends.length; i++) {
                if (cut >= ends[i]) {
                    whole = i;
                }
            }
            assertEquals(List.of("alpha", "beta", "gamma").subList(0, whole), texts(o), "cut at " + cut);
            boolean torn = cut > 8 && cut != ends[whole];
            assertEquals(torn, o.tornBackup() != null, "cut at " + cut);
            if (torn) {
                assertArrayEquals(Arrays.copyOf(full, cut), Files.readAllBytes(o.tornBackup()), "the backup is the file as found");
                Files.delete(o.tornBackup());
            }
            o.log().close();
            // the repair is durable: the file now ends at the last whole record
            assertEquals(cut < 8 ? 8 : ends[whole], Files.size(f), "cut at " + cut);
        }
    }

    @Test
    void aBadChecksumInTheLastRecordIsATornTail() throws IOException {
        Path f = write("alpha", "beta");
        flip(f, Files.size(f) - 1);
        RecordLog.Opened o = RecordLog.open(f);
        assertEquals(List.of("alpha"), texts(o));
        assertNotNull(o.tornBackup());
        o.log().close();
    }

    @Test
    void zerosAfterTheLastRecordAreATornTail() throws IOException {
        Path f = write("alpha");
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.setLength(r.length() + 4096); // a crash after the size grew but before the data landed
        }
        RecordLog.Opened o = RecordLog.open(f);
        assertEquals(List.of("alpha"), texts(o));
        assertEquals(4096, o.tornBytes());
        o.log().close();
    }

    @Test
    void damageBeforeTheEndIsRefusedAndTheFileLeftAlone() throws IOException {
        Path f = write("alpha", "beta", "gamma");
        flip(f, 8 + 8 + 2); // inside "alpha"
        byte[] before = Files.readAllBytes(f);
        RecordLog.Corrupt c = assertThrows(RecordLog.Corrupt.class, () -> RecordLog.open(f));
        assertTrue(c.getMessage().contains("checksum"), c.getMessage());
        assertArrayEquals(before, Files.readAllBytes(f));
        // an impossible length in the middle
        Path g = writeTo("other.log", "alpha", "beta");
        flip(g, 8); // high byte of the first length
        assertThrows(RecordLog.Corrupt.class, () -> RecordLog.open(g));
        // not our file at all
        Files.writeString(f, "hello, this is not a state file");
        assertThrows(RecordLog.Corrupt.class, () -> RecordLog.open(f));
    }

    @Test
    void rewriteReplacesTheFileAtomically() throws IOException {
        Path f = write("a", "b", "c");
        RecordLog.Opened o = RecordLog.open(f);
        o.log().rewrite(List.of(rec("snapshot")));
        o.log().append(List.of(rec("after")));
        o.log().sync();
        o.log().close();
        RecordLog.Opened again = RecordLog.open(f);
        assertEquals(List.of("snapshot", "after"), texts(again));
        assertTrue(Files.notExists(dir.resolve("state.log.tmp")));
        again.log().close();
    }

    private static void flip(Path f, long at) throws IOException {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.seek(at);
            int b = r.read();
            r.seek(at);
            r.write(b ^ 0x40);
        }
    }
}
