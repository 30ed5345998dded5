package dev.mcb.world.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Bearer tokens → principals. The world host accepts {@code service}, {@code admin} and
 * {@code automation}; an agent token is unknown here (401). Token files are
 * {@code <secrets>/<principal>.token}; a non-empty {@code MCB_<PRINCIPAL>_TOKEN} overrides a file.
 * Comparison is constant-time against every token; tokens are never logged.
 */
public final class Tokens {
    public static final String[] HOST_PRINCIPALS = {"service", "admin", "automation"};
    private final Map<String, byte[]> tokens = new LinkedHashMap<>();

    public Tokens(Map<String, String> byPrincipal) {
        byPrincipal.forEach((p, t) -> {
            if (t != null && !t.isBlank()) {
                tokens.put(p, t.strip().getBytes(StandardCharsets.UTF_8));
            }
        });
    }

    public static Tokens load(Path secretsDir, Map<String, String> env) throws IOException {
        Map<String, String> m = new LinkedHashMap<>();
        for (String p : HOST_PRINCIPALS) {
            String e = env.get("MCB_" + p.toUpperCase() + "_TOKEN");
            if (e != null && !e.isBlank()) {
                m.put(p, e.strip());
                continue;
            }
            try {
                m.put(p, Files.readString(secretsDir.resolve(p + ".token"), StandardCharsets.UTF_8).strip());
            } catch (NoSuchFileException ignored) {
                // that principal cannot call this host
            }
        }
        return new Tokens(m);
    }

    /**
     * Creates {@code <secretsDir>/<principal>.token} for each principal that has neither a file nor an
     * environment override: 32 random bytes (URL-safe base64), owner-only permissions where the file
     * system has them, written to a temporary file, fsynced and moved into place. Existing files are
     * never changed. Returns the principals whose files were created (the caller says so in its log;
     * never the tokens).
     */
    public static java.util.List<String> ensureFiles(Path secretsDir, Map<String, String> env, String... principals)
            throws IOException {
        Files.createDirectories(secretsDir);
        restrict(secretsDir, "rwx------");
        java.util.List<String> created = new java.util.ArrayList<>();
        java.security.SecureRandom random = new java.security.SecureRandom();
        for (String p : principals) {
            String e = env.get("MCB_" + p.toUpperCase() + "_TOKEN");
            Path file = secretsDir.resolve(p + ".token");
            if ((e != null && !e.isBlank()) || Files.exists(file)) {
                continue;
            }
            byte[] raw = new byte[32];
            random.nextBytes(raw);
            String token = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
            Path tmp = secretsDir.resolve(p + ".token.tmp");
            Files.deleteIfExists(tmp);
            Files.createFile(tmp);
            restrict(tmp, "rw-------");
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(tmp,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap((token + "\n").getBytes(StandardCharsets.UTF_8)));
                ch.force(true);
            }
            Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            created.add(p);
        }
        return created;
    }

    private static void restrict(Path path, String perms) throws IOException {
        try {
            Files.setPosixFilePermissions(path, java.nio.file.attribute.PosixFilePermissions.fromString(perms));
        } catch (UnsupportedOperationException ignored) {
            // not a POSIX file system (Windows): the folder's own ACLs apply
        }
    }

    /** The principal for a presented token, or null. */
    public String principalFor(String presented) {
        if (presented == null || presented.isEmpty()) {
            return null;
        }
        byte[] b = presented.getBytes(StandardCharsets.UTF_8);
        String found = null;
        for (Map.Entry<String, byte[]> e : tokens.entrySet()) {
            if (MessageDigest.isEqual(b, e.getValue())) {
                found = e.getKey();
            }
        }
        return found;
    }

    public boolean has(String principal) {
        return tokens.containsKey(principal);
    }

    public static String bearer(String header) {
        if (header == null) {
            return null;
        }
        String h = header.strip();
        if (h.length() > 7 && h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return h.substring(7).strip();
        }
        return null;
    }
}
