package dev.mcb.world.testhost;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mcb.world.core.ErrorCode;
import dev.mcb.world.core.McbException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The block registry of one Minecraft version from the npm minecraft-data {@code blocks.json} that the
 * Python side vendors; canonical state strings as in mcb_common/blockstate.py (every property, sorted by
 * name, defaults filled in). On Paper the server's own registry plays this role.
 */
public final class JsonBlockRegistry {
    private static final Pattern NAME = Pattern.compile("^(?:([a-z0-9_.\\-]+):)?([a-z0-9_./\\-]+)$");
    private static final Pattern PROP = Pattern.compile("^[a-z0-9_]+$");

    record BlockType(String name, Map<String, List<String>> properties, Map<String, String> defaults) {
    }

    private final Map<String, BlockType> blocks = new TreeMap<>();
    private final Map<String, String> cache = new ConcurrentHashMap<>();
    public final String version;
    public final int dataVersion;
    public final String sha256;

    public JsonBlockRegistry(String version, int dataVersion, byte[] raw) {
        this.version = version;
        this.dataVersion = dataVersion;
        try {
            this.sha256 = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        JsonArray arr = JsonParser.parseString(new String(raw, StandardCharsets.UTF_8)).getAsJsonArray();
        for (JsonElement el : arr) {
            JsonObject e = el.getAsJsonObject();
            Map<String, List<String>> props = new LinkedHashMap<>();
            if (e.has("states") && e.get("states").isJsonArray()) {
                for (JsonElement s : e.getAsJsonArray("states")) {
                    JsonObject st = s.getAsJsonObject();
                    List<String> values = new ArrayList<>();
                    String type = st.get("type").getAsString();
                    if (type.equals("bool")) {
                        values.add("true");
                        values.add("false");
                    } else {
                        st.getAsJsonArray("values").forEach(v -> values.add(v.getAsString()));
                    }
                    props.put(st.get("name").getAsString(), values);
                }
            }
            // the default state id is a mixed-radix number over the properties, last fastest
            long idx = e.get("defaultState").getAsLong() - e.get("minStateId").getAsLong();
            Map<String, String> defaults = new TreeMap<>();
            List<String> names = new ArrayList<>(props.keySet());
            for (int i = names.size() - 1; i >= 0; i--) {
                List<String> values = props.get(names.get(i));
                defaults.put(names.get(i), values.get((int) (idx % values.size())));
                idx /= values.size();
            }
            String name = "minecraft:" + e.get("name").getAsString();
            blocks.put(name, new BlockType(name, props, defaults));
        }
    }

    public int size() {
        return blocks.size();
    }

    public String canonical(String text) {
        String c = cache.get(text);
        if (c == null) {
            c = canonicalUncached(text);
            if (cache.size() < 65_536) {
                cache.put(text, c);
            }
        }
        return c;
    }

    private String canonicalUncached(String text) {
        if (text == null) {
            throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "a block state must be a string");
        }
        String s = text.strip().toLowerCase(java.util.Locale.ROOT);
        Map<String, String> props = new TreeMap<>();
        int br = s.indexOf('[');
        if (br >= 0) {
            if (!s.endsWith("]")) {
                throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "block state '" + text + "' opens '[' but does not end with ']'");
            }
            String inner = s.substring(br + 1, s.length() - 1).strip();
            s = s.substring(0, br);
            if (!inner.isEmpty()) {
                for (String part : inner.split(",", -1)) {
                    int eq = part.indexOf('=');
                    if (eq < 0) {
                        throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "block state '" + text + "': property '"
                                + part.strip() + "' needs the form name=value");
                    }
                    String k = part.substring(0, eq).strip();
                    String v = part.substring(eq + 1).strip();
                    if (!PROP.matcher(k).matches() || !PROP.matcher(v).matches()) {
                        throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "block state '" + text + "': " + k + "=" + v
                                + " is not a valid property assignment");
                    }
                    String prev = props.put(k, v);
                    if (prev != null && !prev.equals(v)) {
                        throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "block state '" + text + "' sets " + k + " twice");
                    }
                }
            }
        }
        var m = NAME.matcher(s.strip());
        if (!m.matches()) {
            throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "'" + text + "' is not a block id like minecraft:stone");
        }
        String name = (m.group(1) == null ? "minecraft" : m.group(1)) + ":" + m.group(2);
        BlockType bt = blocks.get(name);
        if (bt == null) {
            JsonObject det = new JsonObject();
            det.addProperty("block", name);
            JsonArray sugg = new JsonArray();
            String bare = m.group(2);
            blocks.keySet().stream().filter(n -> n.contains(bare) || bare.contains(n.substring(10))).limit(3).forEach(sugg::add);
            det.add("suggestions", sugg);
            throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, "unknown block '" + name + "' in Minecraft " + version
                    + (sugg.isEmpty() ? "" : "; did you mean " + sugg + "?"), det);
        }
        Map<String, String> state = new TreeMap<>(bt.defaults());
        for (Map.Entry<String, String> e : props.entrySet()) {
            List<String> allowed = bt.properties().get(e.getKey());
            if (allowed == null) {
                throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, name + " has no property '" + e.getKey()
                        + "'; its properties are " + (bt.properties().isEmpty() ? "(none)" : String.join(", ", new TreeMap<>(bt.properties()).keySet())));
            }
            if (!allowed.contains(e.getValue())) {
                throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, name + ": " + e.getKey() + "=" + e.getValue()
                        + " is not allowed; use one of " + String.join(", ", allowed));
            }
            state.put(e.getKey(), e.getValue());
        }
        if (state.isEmpty()) {
            return name;
        }
        StringBuilder b = new StringBuilder(name).append('[');
        boolean first = true;
        for (Map.Entry<String, String> e : state.entrySet()) {
            if (!first) {
                b.append(',');
            }
            b.append(e.getKey()).append('=').append(e.getValue());
            first = false;
        }
        return b.append(']').toString();
    }
}
