package dev.mcb.world.core;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The shared method table {@code proto/mcb/world/v1/methods.json} (bundled into the jar at build time). */
public final class MethodTable {
    public record Spec(String name, String params, String result, List<String> scopes, boolean implemented) {
    }

    private final Map<String, Spec> specs;

    public MethodTable(Map<String, Spec> specs) {
        this.specs = Collections.unmodifiableMap(new TreeMap<>(specs));
    }

    public static MethodTable load() {
        try (InputStream in = MethodTable.class.getResourceAsStream("/mcb/world/v1/methods.json")) {
            if (in == null) {
                throw new IllegalStateException("methods.json is not on the classpath (build from the repository)");
            }
            JsonObject root = JsonParser.parseReader(new InputStreamReader(in, StandardCharsets.UTF_8)).getAsJsonObject();
            Map<String, Spec> m = new TreeMap<>();
            for (Map.Entry<String, JsonElement> e : root.getAsJsonObject("methods").entrySet()) {
                JsonObject o = e.getValue().getAsJsonObject();
                List<String> scopes = new ArrayList<>();
                o.getAsJsonArray("scopes").forEach(s -> scopes.add(s.getAsString()));
                m.put(e.getKey(), new Spec(e.getKey(), str(o, "params"), str(o, "result"), List.copyOf(scopes),
                        o.has("implemented") && o.get("implemented").getAsBoolean()));
            }
            return new MethodTable(m);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String str(JsonObject o, String k) {
        return o.has(k) && !o.get(k).isJsonNull() ? o.get(k).getAsString() : null;
    }

    public Spec get(String name) {
        return specs.get(name);
    }

    public Map<String, Spec> all() {
        return specs;
    }
}
