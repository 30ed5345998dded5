package dev.mcb.world.paper;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mcb.world.core.BlockEntityData;
import dev.mcb.world.core.ErrorCode;
import dev.mcb.world.core.McbException;
import io.papermc.paper.datacomponent.item.ResolvableProfile;
import io.papermc.paper.registry.RegistryAccess;
import io.papermc.paper.registry.RegistryKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.Bukkit;
import org.bukkit.DyeColor;
import org.bukkit.Material;
import org.bukkit.NamespacedKey;
import org.bukkit.Registry;
import org.bukkit.block.Banner;
import org.bukkit.block.Block;
import org.bukkit.block.BlockState;
import org.bukkit.block.Campfire;
import org.bukkit.block.Chest;
import org.bukkit.block.Container;
import org.bukkit.block.Sign;
import org.bukkit.block.Skull;
import org.bukkit.block.banner.Pattern;
import org.bukkit.block.banner.PatternType;
import org.bukkit.block.sign.Side;
import org.bukkit.block.sign.SignSide;
import org.bukkit.inventory.Inventory;
import org.bukkit.inventory.ItemStack;

/**
 * Block-entity data through the Bukkit/Paper API (the core's {@link BlockEntityData} model): container
 * inventories (and campfire slots), both sides of a sign (plain lines, dye colour, glowing) and its wax,
 * banner patterns, a player head's profile name. {@link #read} answers the canonical data text ("" when
 * empty); an item with components (a renamed or enchanted stack) or styled sign text is beyond the model
 * and reads as {@code {"unsupported": ...}}, which the core never overwrites. {@link #write} replaces the
 * block entity's data as a whole (an empty data text clears it).
 */
final class PaperBlockEntities {
    private PaperBlockEntities() {}

    private static final PlainTextComponentSerializer PLAIN = PlainTextComponentSerializer.plainText();

    /** A sign's wax; false where the server does not implement it (MockBukkit 4.116), so unwaxed signs still work. */
    private static boolean waxed(Sign s) {
        try {
            return s.isWaxed();
        } catch (RuntimeException notImplemented) { // MockBukkit: UnimplementedOperationException
            return false;
        }
    }

    /** The server's banner patterns (Registry.BANNER_PATTERN is deprecated since 1.21). */
    private static Registry<PatternType> patterns() {
        return RegistryAccess.registryAccess().getRegistry(RegistryKey.BANNER_PATTERN);
    }

    /**
     * The container's own slots: a chest's {@code getBlockInventory()} is its half (27), while its
     * {@code getInventory()} is the 54-slot inventory of both halves of a double chest (CraftChest).
     */
    private static Inventory ownInventory(Container c) {
        return c instanceof Chest ch ? ch.getBlockInventory() : c.getInventory();
    }

    /** The canonical full state of a block whose canonical block state is {@code state}. */
    static String read(Block b, String state) {
        String key = BlockEntityData.key(state);
        if (key == null) {
            return state;
        }
        BlockState st = b.getState(false);
        JsonObject raw = new JsonObject();
        String unsupported = null;
        switch (key) {
            case "items" -> {
                JsonArray items = new JsonArray();
                Inventory inv = st instanceof Container c ? ownInventory(c) : null;
                int size = st instanceof Campfire cf ? cf.getSize() : inv != null ? inv.getSize() : 0;
                for (int i = 0; i < size; i++) {
                    ItemStack it = st instanceof Campfire cf ? cf.getItem(i) : inv.getItem(i);
                    if (it == null || it.getType().isAir() || it.getAmount() <= 0) {
                        continue;
                    }
                    if (it.hasItemMeta() && !it.getItemMeta().equals(Bukkit.getItemFactory().getItemMeta(it.getType()))) {
                        unsupported = "item components";
                    }
                    JsonObject o = new JsonObject();
                    o.addProperty("slot", i);
                    o.addProperty("id", it.getType().getKey().toString());
                    o.addProperty("count", it.getAmount());
                    items.add(o);
                }
                raw.add("items", items);
            }
            case "text" -> {
                if (st instanceof Sign s) {
                    JsonObject text = new JsonObject();
                    for (Side side : List.of(Side.FRONT, Side.BACK)) {
                        SignSide ss = s.getSide(side);
                        JsonObject o = new JsonObject();
                        JsonArray lines = new JsonArray();
                        for (Component c : ss.lines()) {
                            if (!c.style().isEmpty() || !c.children().isEmpty()) {
                                unsupported = "styled sign text";
                            }
                            lines.add(PLAIN.serialize(c));
                        }
                        o.add("lines", lines);
                        DyeColor color = ss.getColor();
                        o.addProperty("color", color == null ? "black" : color.name().toLowerCase(Locale.ROOT));
                        o.addProperty("glowing", ss.isGlowingText());
                        text.add(side == Side.FRONT ? "front" : "back", o);
                    }
                    text.addProperty("waxed", waxed(s));
                    raw.add("text", text);
                }
            }
            case "patterns" -> {
                if (st instanceof Banner bn) {
                    JsonArray pats = new JsonArray();
                    for (Pattern p : bn.getPatterns()) {
                        JsonObject o = new JsonObject();
                        o.addProperty("pattern", patterns().getKeyOrThrow(p.getPattern()).toString());
                        o.addProperty("color", p.getColor().name().toLowerCase(Locale.ROOT));
                        pats.add(o);
                    }
                    raw.add("patterns", pats);
                }
            }
            default -> {
                if (st instanceof Skull sk && sk.getProfile() != null && sk.getProfile().name() != null) {
                    raw.addProperty("profile", sk.getProfile().name());
                }
            }
        }
        if (unsupported != null) {
            JsonObject u = new JsonObject();
            u.addProperty("unsupported", unsupported);
            return state + BlockEntityData.canonical(u);
        }
        try {
            return BlockEntityData.canonicalFull(state, BlockEntityData.canonical(raw));
        } catch (McbException e) { // e.g. a count above 99 from another plugin: beyond the model
            JsonObject u = new JsonObject();
            u.addProperty("unsupported", e.getMessage());
            return state + BlockEntityData.canonical(u);
        }
    }

    /** Set the block entity's data (canonical data text, "" = empty) on a block whose state is already set. */
    static void write(Block b, String state, String data) {
        String key = BlockEntityData.key(state);
        if (key == null) {
            return;
        }
        JsonObject o = data.isEmpty() ? new JsonObject() : JsonParser.parseString(data).getAsJsonObject();
        BlockState st = b.getState();
        switch (key) {
            case "items" -> {
                List<ItemStack> stacks = new ArrayList<>();
                List<Integer> slots = new ArrayList<>();
                for (JsonElement e : o.has("items") ? o.getAsJsonArray("items") : new JsonArray()) {
                    JsonObject it = e.getAsJsonObject();
                    Material m = Material.matchMaterial(it.get("id").getAsString());
                    if (m == null || !m.isItem()) {
                        throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, it.get("id").getAsString()
                                + " is not an item on this server (" + Bukkit.getMinecraftVersion() + ")");
                    }
                    stacks.add(ItemStack.of(m, it.get("count").getAsInt())); // the server's own stack (new ItemStack is obsolete since 1.21)
                    slots.add(it.get("slot").getAsInt());
                }
                if (st instanceof Campfire cf) {
                    for (int i = 0; i < cf.getSize(); i++) {
                        cf.setItem(i, null);
                    }
                    for (int i = 0; i < stacks.size(); i++) {
                        cf.setItem(slots.get(i), stacks.get(i));
                    }
                } else if (st instanceof Container c) {
                    Inventory inv = c.getSnapshotInventory();
                    inv.clear();
                    for (int i = 0; i < stacks.size(); i++) {
                        inv.setItem(slots.get(i), stacks.get(i));
                    }
                }
            }
            case "text" -> {
                if (st instanceof Sign s) {
                    JsonObject text = o.has("text") ? o.getAsJsonObject("text") : new JsonObject();
                    for (Side side : List.of(Side.FRONT, Side.BACK)) {
                        String name = side == Side.FRONT ? "front" : "back";
                        JsonObject so = text.has(name) ? text.getAsJsonObject(name) : new JsonObject();
                        SignSide ss = s.getSide(side);
                        JsonArray lines = so.has("lines") ? so.getAsJsonArray("lines") : new JsonArray();
                        for (int i = 0; i < 4; i++) {
                            ss.line(i, Component.text(i < lines.size() ? lines.get(i).getAsString() : ""));
                        }
                        ss.setColor(DyeColor.valueOf((so.has("color") ? so.get("color").getAsString() : "black")
                                .toUpperCase(Locale.ROOT)));
                        ss.setGlowingText(so.has("glowing") && so.get("glowing").getAsBoolean());
                    }
                    boolean wax = text.has("waxed") && text.get("waxed").getAsBoolean();
                    if (wax || waxed(s)) {
                        s.setWaxed(wax);
                    }
                }
            }
            case "patterns" -> {
                if (st instanceof Banner bn) {
                    List<Pattern> pats = new ArrayList<>();
                    for (JsonElement e : o.has("patterns") ? o.getAsJsonArray("patterns") : new JsonArray()) {
                        JsonObject p = e.getAsJsonObject();
                        NamespacedKey pk = NamespacedKey.fromString(p.get("pattern").getAsString());
                        PatternType type = pk == null ? null : patterns().get(pk);
                        if (type == null) {
                            throw new McbException(ErrorCode.UNSUPPORTED_BLOCK, p.get("pattern").getAsString()
                                    + " is not a banner pattern on this server");
                        }
                        pats.add(new Pattern(DyeColor.valueOf(p.get("color").getAsString().toUpperCase(Locale.ROOT)), type));
                    }
                    bn.setPatterns(pats);
                }
            }
            default -> {
                if (st instanceof Skull sk) {
                    // setProfile(null) clears; the deprecated setPlayerProfile refuses null (CraftSkull)
                    sk.setProfile(o.has("profile")
                            ? ResolvableProfile.resolvableProfile().name(o.get("profile").getAsString()).build() : null);
                }
            }
        }
        st.update(true, false);
    }
}
