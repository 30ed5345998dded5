package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.DyeColor;
import org.bukkit.Material;
import org.bukkit.block.Banner;
import org.bukkit.block.Chest;
import org.bukkit.block.Sign;
import org.bukkit.block.Skull;
import org.bukkit.block.sign.Side;
import org.bukkit.inventory.Inventory;
import org.bukkit.inventory.ItemStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Furniture on Paper (MockBukkit): batch_apply with full states (block state + block-entity data) sets the
 * block entity through the API — chest inventory, both sign sides, banner patterns, a player head's
 * profile — blocks_get reads it back in the core's canonical form, and a player's change to a chest's
 * contents makes a batch expecting the old contents a conflict.
 */
class FurnitureTest {
    static final String CHEST = "minecraft:chest[facing=north,type=single,waterlogged=false]";
    static final String ITEMS = "{\"items\":[{\"count\":3,\"id\":\"minecraft:bread\",\"slot\":0},"
            + "{\"count\":1,\"id\":\"minecraft:diamond_sword\",\"slot\":13}]}";
    static final String SIGN = "minecraft:oak_sign[rotation=0,waterlogged=false]{\"text\":{\"back\":{\"color\":\"red\","
            + "\"glowing\":true,\"lines\":[\"back\",\"\",\"\",\"\"]},\"front\":{\"lines\":[\"Hello\",\"wörld\",\"\",\"\"]}}}";
    // unwaxed: MockBukkit 4.116 does not implement Sign#setWaxed (wax is tested on the other hosts)
    static final String BANNER = "minecraft:red_banner[rotation=0]{\"patterns\":[{\"color\":\"white\","
            + "\"pattern\":\"minecraft:stripe_top\"}]}";
    static final String HEAD = "minecraft:player_head[powered=false,rotation=0]{\"profile\":\"Notch\"}";

    PluginHarness h;

    @BeforeEach
    void start() {
        h = PluginHarness.start();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    private JsonObject apply(String id, int[][] pos, String[] expected, String[] desired) throws Exception {
        JsonObject p = new JsonObject();
        p.addProperty("batchId", id);
        p.addProperty("worldEpoch", 1);
        p.addProperty("operationId", "op-" + id);
        JsonArray entries = new JsonArray();
        for (int i = 0; i < pos.length; i++) {
            JsonObject e = new JsonObject();
            e.addProperty("x", pos[i][0]);
            e.addProperty("y", pos[i][1]);
            e.addProperty("z", pos[i][2]);
            e.addProperty("expected", expected[i]);
            e.addProperty("desired", desired[i]);
            entries.add(e);
        }
        p.add("entries", entries);
        JsonObject r = h.ticking(h.rpcAsync("service", "batch_apply", p.toString()));
        assertTrue(r.get("ok").getAsBoolean(), r.toString());
        return r.getAsJsonObject("result");
    }

    private String get(int x, int y, int z) throws Exception {
        JsonObject r = h.ticking(h.rpcAsync("service", "blocks_get", "{\"xyz\":[" + x + "," + y + "," + z + "]}"));
        assertTrue(r.get("ok").getAsBoolean(), r.toString());
        JsonObject res = r.getAsJsonObject("result");
        return res.getAsJsonArray("palette").get(res.getAsJsonArray("state").get(0).getAsInt()).getAsString();
    }

    @Test
    void furnitureIsSetThroughTheApiAndReadBack() throws Exception {
        int[][] pos = {{0, 65, 0}, {1, 65, 0}, {2, 65, 0}, {3, 65, 0}};
        String[] desired = {CHEST + ITEMS, SIGN, BANNER, HEAD};
        String air = "minecraft:air";
        JsonObject r = apply("f1", pos, new String[] {air, air, air, air}, desired);
        assertEquals("applied", r.get("status").getAsString(), r.toString());
        for (int i = 0; i < pos.length; i++) {
            assertEquals(desired[i], get(pos[i][0], pos[i][1], pos[i][2]));
        }
        // through the API, as a plugin (or the game) sees them
        Chest chest = (Chest) h.world.getBlockAt(0, 65, 0).getState();
        assertEquals(new ItemStack(Material.BREAD, 3), chest.getInventory().getItem(0));
        assertEquals(Material.DIAMOND_SWORD, chest.getInventory().getItem(13).getType());
        Sign sign = (Sign) h.world.getBlockAt(1, 65, 0).getState();
        PlainTextComponentSerializer plain = PlainTextComponentSerializer.plainText();
        assertEquals("Hello", plain.serialize(sign.getSide(Side.FRONT).line(0)));
        assertEquals("back", plain.serialize(sign.getSide(Side.BACK).line(0)));
        assertEquals(DyeColor.RED, sign.getSide(Side.BACK).getColor());
        assertTrue(sign.getSide(Side.BACK).isGlowingText());
        Banner banner = (Banner) h.world.getBlockAt(2, 65, 0).getState();
        assertEquals(1, banner.getPatterns().size());
        assertEquals(DyeColor.WHITE, banner.getPatterns().get(0).getColor());
        Skull skull = (Skull) h.world.getBlockAt(3, 65, 0).getState();
        assertEquals("Notch", skull.getProfile().name());
    }

    @Test
    void aPlayersChangeToTheContentsIsAConflict() throws Exception {
        int[][] pos = {{5, 65, 5}};
        assertEquals("applied", apply("c1", pos, new String[] {"minecraft:air"}, new String[] {CHEST + ITEMS})
                .get("status").getAsString());
        Chest chest = (Chest) h.world.getBlockAt(5, 65, 5).getState();
        chest.getInventory().setItem(0, null); // a player takes the bread (the chest's live inventory)
        String now = get(5, 65, 5);
        assertEquals(CHEST + "{\"items\":[{\"count\":1,\"id\":\"minecraft:diamond_sword\",\"slot\":13}]}", now);
        JsonObject r = apply("c2", pos, new String[] {CHEST + ITEMS}, new String[] {"minecraft:air"});
        assertEquals("conflict", r.get("status").getAsString(), r.toString());
        assertEquals(now, r.getAsJsonArray("problems").get(0).getAsJsonObject().get("current").getAsString());
        // the same block with other contents is a write; empty data clears the inventory
        assertEquals("applied", apply("c3", pos, new String[] {now}, new String[] {CHEST}).get("status").getAsString());
        assertEquals(CHEST, get(5, 65, 5));
        assertTrue(((Chest) h.world.getBlockAt(5, 65, 5).getState()).getInventory().isEmpty());
    }

    @Test
    void aPlayerMovingItemsInAChestIsObservedAsTheirEdit() throws Exception {
        int[][] pos = {{7, 65, 7}};
        assertEquals("applied", apply("o1", pos, new String[] {"minecraft:air"}, new String[] {CHEST + ITEMS})
                .get("status").getAsString());
        JsonObject start = h.rpc("service", "events_since", "{\"cursor\":\"\"}");
        String cursor = start.getAsJsonObject("result").get("nextCursor").getAsString();
        HarnessPlayer alice = h.player("alice", false);
        Chest chest = (Chest) h.world.getBlockAt(7, 65, 7).getState();
        alice.openInventory(chest.getInventory());
        chest.getInventory().setItem(0, null); // takes the bread
        alice.closeInventory();
        JsonObject ev = h.rpc("service", "events_since", "{\"cursor\":\"" + cursor + "\"}").getAsJsonObject("result");
        JsonArray events = ev.getAsJsonArray("events");
        assertEquals(1, events.size(), ev.toString());
        JsonObject e = events.get(0).getAsJsonObject();
        assertEquals("player", e.get("source").getAsString());
        assertEquals(CHEST + ITEMS, e.get("before").getAsString());
        assertEquals(CHEST + "{\"items\":[{\"count\":1,\"id\":\"minecraft:diamond_sword\",\"slot\":13}]}",
                e.get("after").getAsString());
        assertEquals(alice.getUniqueId().toString(), e.get("playerId").getAsString());
    }

    static final String PLAIN_HEAD = "minecraft:player_head[powered=false,rotation=0]";

    /**
     * A head without a profile (the plain item a player places) is written with {@code setProfile(null)}:
     * Paper's {@code setPlayerProfile(null)} throws (CraftSkull.java l.133), which rolled back every batch or
     * undo with a plain head. An undo of a profiled head back to a plain one clears the profile.
     */
    @Test
    void headsWithoutAProfileAreWrittenAndAProfileIsCleared() throws Exception {
        int[][] pos = {{9, 65, 0}};
        JsonObject r = apply("h1", pos, new String[] {"minecraft:air"}, new String[] {PLAIN_HEAD});
        assertEquals("applied", r.get("status").getAsString(), r.toString());
        assertEquals(PLAIN_HEAD, get(9, 65, 0));
        assertEquals("applied", apply("h2", pos, new String[] {PLAIN_HEAD}, new String[] {HEAD}).get("status").getAsString());
        assertEquals(HEAD, get(9, 65, 0));
        r = apply("h3", pos, new String[] {HEAD}, new String[] {PLAIN_HEAD}); // an undo of h2
        assertEquals("applied", r.get("status").getAsString(), r.toString());
        assertEquals(PLAIN_HEAD, get(9, 65, 0));
        assertEquals(null, ((Skull) h.world.getBlockAt(9, 65, 0).getState()).getProfile());
    }

    // a double chest facing north: the left half's partner is east of it (clockwise), the right half west
    static final String LEFT = "minecraft:chest[facing=north,type=left,waterlogged=false]";
    static final String RIGHT = "minecraft:chest[facing=north,type=right,waterlogged=false]";
    static final String BREAD = "{\"items\":[{\"count\":3,\"id\":\"minecraft:bread\",\"slot\":0}]}";
    static final String APPLES = "{\"items\":[{\"count\":2,\"id\":\"minecraft:apple\",\"slot\":26}]}";

    /**
     * Each half of a double chest holds, reads and is observed as its own 27 slots: Paper's
     * {@code Chest#getInventory()} of a half is the 54-slot double inventory (CraftChest.java l.41-56), so
     * reading it showed the other half's items (or {@code unsupported} past slot 26) and failed the
     * read-back of every furnished double chest.
     */
    @Test
    void eachHalfOfADoubleChestIsItsOwnSlots() throws Exception {
        int[][] pos = {{20, 65, 0}, {21, 65, 0}};
        JsonObject r = apply("d1", pos, new String[] {"minecraft:air", "minecraft:air"},
                new String[] {LEFT + BREAD, RIGHT + APPLES});
        assertEquals("applied", r.get("status").getAsString(), r.toString());
        assertEquals(LEFT + BREAD, get(20, 65, 0));
        assertEquals(RIGHT + APPLES, get(21, 65, 0));
        Chest right = (Chest) h.world.getBlockAt(21, 65, 0).getState();
        assertEquals(54, right.getInventory().getSize(), "the double is as strict as Paper: 54 slots");
        assertEquals(Material.APPLE, right.getInventory().getItem(26).getType()); // the right half is first
        assertEquals(Material.BREAD, right.getInventory().getItem(27).getType());

        String cursor = h.rpc("service", "events_since", "{\"cursor\":\"\"}").getAsJsonObject("result")
                .get("nextCursor").getAsString();
        HarnessPlayer alice = h.player("alice", false);
        Inventory both = right.getInventory();
        alice.openInventory(both);
        both.setItem(27, null); // takes the bread from the left half
        alice.closeInventory();
        JsonObject ev = h.rpc("service", "events_since", "{\"cursor\":\"" + cursor + "\"}").getAsJsonObject("result");
        JsonArray events = ev.getAsJsonArray("events");
        assertEquals(1, events.size(), "only the half whose items changed: " + ev);
        JsonObject e = events.get(0).getAsJsonObject();
        assertEquals(20, e.get("x").getAsInt());
        assertEquals(LEFT + BREAD, e.get("before").getAsString());
        assertEquals(LEFT, e.get("after").getAsString());
        assertEquals(RIGHT + APPLES, get(21, 65, 0));
    }
}
