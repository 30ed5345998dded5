package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokensTest {
    @TempDir
    Path dir;

    @Test
    void firstStartCreatesOwnerOnlyTokenFilesThatLoadAndAreNeverReplaced() throws Exception {
        Path secrets = dir.resolve("secrets");
        assertEquals(List.of("service", "admin"), Tokens.ensureFiles(secrets, Map.of(), "service", "admin"));
        String service = Files.readString(secrets.resolve("service.token")).strip();
        String admin = Files.readString(secrets.resolve("admin.token")).strip();
        assertTrue(service.length() >= 43, "32 random bytes, base64");
        assertNotEquals(service, admin);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(secrets.resolve("service.token"))));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(secrets)));
        assertFalse(Files.exists(secrets.resolve("service.token.tmp")));
        Tokens t = Tokens.load(secrets, Map.of());
        assertEquals("service", t.principalFor(service));
        assertEquals("admin", t.principalFor(admin));
        assertFalse(t.has("automation"), "automation is never created: it is for tests only");
        // a second start keeps what is there (the stack was given these tokens)
        assertEquals(List.of(), Tokens.ensureFiles(secrets, Map.of(), "service", "admin"));
        assertEquals(service, Files.readString(secrets.resolve("service.token")).strip());
    }

    @Test
    void anEnvironmentOverrideMeansNoFile() throws Exception {
        Path secrets = dir.resolve("s2");
        assertEquals(List.of("admin"),
                Tokens.ensureFiles(secrets, Map.of("MCB_SERVICE_TOKEN", "from-env"), "service", "admin"));
        assertFalse(Files.exists(secrets.resolve("service.token")));
    }
}
