package dev.mcb.world.core;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Block-entity data ("furniture") as the world protocol carries it: a <em>full state</em> is the
 * canonical block state followed, when the block entity holds data, by that data as canonical JSON
 * ({@code minecraft:chest[...]{"items":[{"count":3,"id":"minecraft:bread","slot":0}]}}). The model and
 * its canonical form are {@code mcb_common/blockentity.py}'s (keys sorted, no spaces, non-ASCII kept,
 * defaults left out, empty data = no braces); {@link #canonical(JsonElement)} writes byte-identical
 * text. One key per kind: {@code items} (containers, campfires), {@code text} (signs), {@code patterns}
 * (banners), {@code profile} (player heads). Item ids are checked for their form only here; the planner
 * checks them against the item registry, the Paper adapter against the server's.
 */
public final class BlockEntityData {
    private BlockEntityData() {}

    public static final List<String> DYES = List.of("white", "orange", "magenta", "light_blue", "yellow", "lime",
            "pink", "gray", "light_gray", "cyan", "purple", "blue", "brown", "green", "red", "black");
    private static final Pattern ITEM = Pattern.compile("^(?:minecraft:)?([a-z0-9_./\\-]+)$");
    private static final Pattern PROFILE = Pattern.compile("^[A-Za-z0-9_]{1,16}$");
    private static final Pattern PATTERN = Pattern.compile("^(?:minecraft:)?([a-z_]+)$");
    private static final Set<String> REFUSED = Set.of("spawner", "trial_spawner", "vault", "command_block",
            "chain_command_block", "repeating_command_block", "structure_block", "jigsaw", "test_block",
            "test_instance_block", "end_portal", "end_gateway", "moving_piston", "suspicious_sand",
            "suspicious_gravel");
    private static final Map<String, Integer> SIZES = Map.ofEntries(Map.entry("chest", 27),
            Map.entry("trapped_chest", 27), Map.entry("barrel", 27), Map.entry("dispenser", 9),
            Map.entry("dropper", 9), Map.entry("hopper", 5), Map.entry("brewing_stand", 5), Map.entry("furnace", 3),
            Map.entry("smoker", 3), Map.entry("blast_furnace", 3), Map.entry("campfire", 4),
            Map.entry("soul_campfire", 4));

    /** Index of the data's opening brace, or -1. */
    public static int split(String full) {
        return full.indexOf('{');
    }

    public static String state(String full) {
        int i = split(full);
        return i < 0 ? full : full.substring(0, i);
    }

    public static String data(String full) {
        int i = split(full);
        return i < 0 ? "" : full.substring(i);
    }

    /** Block id without namespace and properties. */
    public static String name(String state) {
        String s = state(state);
        int b = s.indexOf('[');
        s = b < 0 ? s : s.substring(0, b);
        return s.startsWith("minecraft:") ? s.substring(10) : s;
    }

    /** Whether placing this block is refused (spawners, command blocks, ...). */
    public static boolean refused(String state) {
        return REFUSED.contains(name(state));
    }

    /** Container size of a block (0 = not a container). */
    public static int containerSize(String state) {
        String n = name(state);
        if (n.endsWith("shulker_box")) {
            return 27;
        }
        if (n.endsWith("copper_chest")) {
            return 27;
        }
        return SIZES.getOrDefault(n, 0);
    }

    /** The data key a block accepts ("items", "text", "patterns", "profile") or null. */
    public static String key(String state) {
        String n = name(state);
        if (containerSize(state) > 0) {
            return "items";
        }
        if (n.endsWith("_sign")) {
            return "text";
        }
        if (n.endsWith("_banner")) {
            return "patterns";
        }
        if (n.equals("player_head") || n.equals("player_wall_head")) {
            return "profile";
        }
        return null;
    }

    /** Validate the data of a full state whose block state is canonical; returns the canonical full state. */
    public static String canonicalFull(String state, String dataText) {
        if (refused(state)) {
            throw bad(state + " cannot be written: its block entity carries custom NBT this tool does not write "
                    + "(spawners, command, structure and jigsaw blocks)");
        }
        if (dataText.isEmpty()) {
            return state;
        }
        String key = key(state);
        if (key == null) {
            throw bad(state + " carries no block entity data; it cannot hold " + abbreviate(dataText));
        }
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(dataText);
        } catch (RuntimeException e) {
            throw bad("the block-entity data of " + state + " is not JSON: " + e.getMessage());
        }
        if (!parsed.isJsonObject()) {
            throw bad("the block-entity data of " + state + " must be an object");
        }
        JsonObject o = parsed.getAsJsonObject();
        for (String k : o.keySet()) {
            if (!k.equals(key)) {
                throw bad("data: unknown key '" + k + "' for " + name(state) + "; allowed: " + key);
            }
        }
        if (o.isEmpty()) {
            return state;
        }
        JsonElement v = switch (key) {
            case "items" -> items(o.get("items"), containerSize(state));
            case "text" -> text(o.get("text"));
            case "patterns" -> patterns(o.get("patterns"));
            default -> profile(o.get("profile"));
        };
        if (v == null) {
            return state;
        }
        JsonObject out = new JsonObject();
        out.add(key, v);
        return state + canonical(out);
    }

    private static McbException bad(String message) {
        return new McbException(ErrorCode.UNSUPPORTED_BLOCK, message);
    }

    private static String abbreviate(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "…" : s;
    }

    private static int integer(JsonElement e, String what, int lo, int hi) {
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
            throw bad(what + " must be an integer " + lo + ".." + hi);
        }
        double d = e.getAsDouble();
        if (d != Math.rint(d) || d < lo || d > hi) {
            throw bad(what + " must be " + lo + ".." + hi + ", got " + e);
        }
        return (int) d;
    }

    private static String string(JsonElement e, String what) {
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
            throw bad(what + " must be a string");
        }
        return e.getAsString();
    }

    private static JsonElement items(JsonElement e, int size) {
        if (e == null || !e.isJsonArray()) {
            throw bad("data.items must be an array of {slot, id, count}");
        }
        JsonArray a = e.getAsJsonArray();
        if (a.size() > size) {
            throw bad("data.items holds " + a.size() + " stacks; this block has " + size + " slots");
        }
        TreeMap<Integer, JsonObject> bySlot = new TreeMap<>();
        List<JsonObject> pending = new ArrayList<>();
        for (JsonElement it : a) {
            if (!it.isJsonObject()) {
                throw bad("data.items: every entry must be an object {slot, id, count}");
            }
            JsonObject io = it.getAsJsonObject();
            for (String k : io.keySet()) {
                if (!Set.of("slot", "id", "count").contains(k)) {
                    throw bad("data.items: unknown key '" + k + "'");
                }
            }
            var m = ITEM.matcher(string(io.get("id"), "data.items[].id").strip().toLowerCase(java.util.Locale.ROOT));
            if (!m.matches()) {
                throw bad("data.items[].id must be an item id like minecraft:bread");
            }
            JsonObject entry = new JsonObject();
            entry.addProperty("count", io.has("count") ? integer(io.get("count"), "data.items[].count", 1, 99) : 1);
            entry.addProperty("id", "minecraft:" + m.group(1));
            if (io.has("slot")) {
                int slot = integer(io.get("slot"), "data.items[].slot", 0, size - 1);
                if (bySlot.put(slot, entry) != null) {
                    throw bad("data.items: slot " + slot + " is used twice");
                }
            } else {
                pending.add(entry);
            }
        }
        int next = 0;
        for (JsonObject entry : pending) {
            while (bySlot.containsKey(next)) {
                next++;
            }
            if (next >= size) {
                throw bad("data.items: no free slot left (this block has " + size + ")");
            }
            bySlot.put(next, entry);
        }
        JsonArray out = new JsonArray();
        bySlot.forEach((slot, entry) -> {
            entry.addProperty("slot", slot);
            out.add(entry);
        });
        return out.isEmpty() ? null : out;
    }

    private static JsonObject side(JsonElement e, String what) {
        JsonObject o;
        if (e.isJsonArray()) {
            o = new JsonObject();
            o.add("lines", e);
        } else if (e.isJsonObject()) {
            o = e.getAsJsonObject();
        } else {
            throw bad(what + " must be up to 4 lines or {lines, color, glowing}");
        }
        for (String k : o.keySet()) {
            if (!Set.of("lines", "color", "glowing").contains(k)) {
                throw bad(what + ": unknown key '" + k + "'");
            }
        }
        JsonArray lines = new JsonArray();
        if (o.has("lines")) {
            if (!o.get("lines").isJsonArray() || o.getAsJsonArray("lines").size() > 4) {
                throw bad(what + ".lines: a sign side holds at most 4 lines");
            }
            for (JsonElement l : o.getAsJsonArray("lines")) {
                String s = string(l, what + ".lines[]");
                if (s.length() > 90) {
                    throw bad(what + ".lines[]: a sign line holds at most 90 characters");
                }
                for (int i = 0; i < s.length(); i++) {
                    char c = s.charAt(i);
                    if (c < 32 || c == 0x7f || c == '§') {
                        throw bad(what + ".lines[]: must not contain control characters or §");
                    }
                }
                lines.add(s);
            }
        }
        boolean any = false;
        for (JsonElement l : lines) {
            any |= !l.getAsString().isEmpty();
        }
        while (lines.size() < 4) {
            lines.add("");
        }
        String color = o.has("color") ? string(o.get("color"), what + ".color") : "black";
        if (!DYES.contains(color)) {
            throw bad(what + ".color: '" + color + "' is not a dye colour");
        }
        JsonElement g = o.get("glowing");
        if (g != null && !(g.isJsonPrimitive() && g.getAsJsonPrimitive().isBoolean())) {
            throw bad(what + ".glowing must be true or false");
        }
        boolean glowing = g != null && g.getAsBoolean();
        if (!any && color.equals("black") && !glowing) {
            return null;
        }
        JsonObject out = new JsonObject();
        out.add("lines", lines);
        if (!color.equals("black")) {
            out.addProperty("color", color);
        }
        if (glowing) {
            out.addProperty("glowing", true);
        }
        return out;
    }

    private static JsonElement text(JsonElement e) {
        if (e == null || !e.isJsonObject()) {
            throw bad("data.text must be an object {front, back, waxed}");
        }
        JsonObject o = e.getAsJsonObject();
        JsonObject out = new JsonObject();
        for (String k : o.keySet()) {
            switch (k) {
                case "front", "back" -> {
                    JsonObject s = side(o.get(k), "data.text." + k);
                    if (s != null) {
                        out.add(k, s);
                    }
                }
                case "waxed" -> {
                    JsonElement w = o.get(k);
                    if (!(w.isJsonPrimitive() && w.getAsJsonPrimitive().isBoolean())) {
                        throw bad("data.text.waxed must be true or false");
                    }
                    if (w.getAsBoolean()) {
                        out.addProperty("waxed", true);
                    }
                }
                default -> throw bad("data.text: unknown key '" + k + "'");
            }
        }
        return out.isEmpty() ? null : out;
    }

    private static JsonElement patterns(JsonElement e) {
        if (e == null || !e.isJsonArray() || e.getAsJsonArray().size() > 16) {
            throw bad("data.patterns must be an array of at most 16 {pattern, color}");
        }
        JsonArray out = new JsonArray();
        for (JsonElement p : e.getAsJsonArray()) {
            if (!p.isJsonObject() || !p.getAsJsonObject().keySet().equals(Set.of("pattern", "color"))) {
                throw bad("data.patterns: every entry must be {pattern, color}");
            }
            JsonObject po = p.getAsJsonObject();
            var m = PATTERN.matcher(string(po.get("pattern"), "data.patterns[].pattern"));
            String color = string(po.get("color"), "data.patterns[].color");
            if (!m.matches() || !DYES.contains(color)) {
                throw bad("data.patterns: " + po + " is not a banner pattern and dye colour");
            }
            JsonObject q = new JsonObject();
            q.addProperty("color", color);
            q.addProperty("pattern", "minecraft:" + m.group(1));
            out.add(q);
        }
        return out.isEmpty() ? null : out;
    }

    private static JsonElement profile(JsonElement e) {
        String name = string(e, "data.profile");
        if (!PROFILE.matcher(name).matches()) {
            throw bad("data.profile must be a player name (1..16 of A-Z a-z 0-9 _)");
        }
        return new JsonPrimitive(name);
    }

    /** Canonical JSON text, byte-identical to Python's json.dumps(sort_keys, compact, ensure_ascii=False). */
    public static String canonical(JsonElement e) {
        StringBuilder sb = new StringBuilder();
        write(sb, e);
        return sb.toString();
    }

    private static void write(StringBuilder sb, JsonElement e) {
        if (e == null || e.isJsonNull()) {
            sb.append("null");
        } else if (e.isJsonObject()) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<String, JsonElement> en : new TreeMap<>(e.getAsJsonObject().asMap()).entrySet()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                quote(sb, en.getKey());
                sb.append(':');
                write(sb, en.getValue());
            }
            sb.append('}');
        } else if (e.isJsonArray()) {
            sb.append('[');
            boolean first = true;
            for (JsonElement x : e.getAsJsonArray()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                write(sb, x);
            }
            sb.append(']');
        } else {
            JsonPrimitive p = e.getAsJsonPrimitive();
            if (p.isString()) {
                quote(sb, p.getAsString());
            } else if (p.isBoolean()) {
                sb.append(p.getAsBoolean());
            } else {
                double d = p.getAsDouble();
                sb.append(d == Math.rint(d) ? Long.toString((long) d) : p.getAsString());
            }
        }
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
