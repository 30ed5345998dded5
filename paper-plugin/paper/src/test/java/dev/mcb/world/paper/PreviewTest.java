package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.Material;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * In-game plan previews (issue 32 item 2) in the real plugin under MockBukkit: {@code chat_preview} from the chat
 * lease holder shows a plan to one player as client-side blocks ({@link HarnessPlayer} keeps what each client
 * shows, as strict as CraftPlayer#sendBlockChange), {@code /ai preview} hides and shows it, clear / expiry / a new
 * bridge restore the real view, nothing is ever written, and a player's edit under a shown preview is a real
 * edit that the plan's compare-and-set then meets as a conflict.
 */
class PreviewTest {
    static final String STONE = "minecraft:stone_bricks";
    PluginHarness h;
    HarnessPlayer alice;
    HarnessPlayer bob;

    @BeforeEach
    void start() throws Exception {
        h = PluginHarness.start(Map.of("allow-local-automation", true));
        alice = h.player("alice", true);
        bob = h.player("bob", true);
        h.rpcOk("admin", "chat_poll", "{\"clientId\":\"bridge-1\"}");
    }

    @AfterEach
    void stop() {
        h.close();
    }

    String id(HarnessPlayer p) {
        return p.getUniqueId().toString();
    }

    JsonObject preview(String client, HarnessPlayer p, String plan, String xyz, boolean show, long expires)
            throws Exception {
        int n = xyz.split(",").length / 3;
        String desired = String.join(",", java.util.Collections.nCopies(n, "0"));
        return h.rpc("admin", "chat_preview", "{\"clientId\":\"" + client + "\",\"playerId\":\"" + id(p)
                + "\",\"planId\":\"" + plan + "\",\"palette\":[\"" + STONE + "\"],\"xyz\":[" + xyz + "],\"desired\":["
                + desired + "],\"show\":" + show + ",\"expiresAtMillis\":" + expires + "}");
    }

    long later() {
        return System.currentTimeMillis() + 600_000;
    }

    Material seen(HarnessPlayer p, int x, int y, int z) {
        return p.clientBlock(x, y, z).getMaterial();
    }

    Material real(int x, int y, int z) {
        return h.world.getBlockAt(x, y, z).getType();
    }

    static String lastLine(HarnessPlayer p) {
        String last = "";
        for (Component c = p.nextComponentMessage(); c != null; c = p.nextComponentMessage()) {
            last = PlainTextComponentSerializer.plainText().serialize(c);
        }
        return last;
    }

    @Test
    void aPlanIsShownToTheAskingPlayerOnlyAndNothingIsWritten() throws Exception {
        long seq0 = h.core().events().lastSeq();
        JsonObject r = preview("bridge-1", alice, "plan_a", "2,65,2, 3,65,2, 3,66,2", true, later());
        assertTrue(r.get("ok").getAsBoolean(), r.toString());
        JsonObject res = r.getAsJsonObject("result");
        assertTrue(res.get("shown").getAsBoolean());
        assertEquals(3, res.get("blocks").getAsInt());
        assertEquals(Material.STONE_BRICKS, seen(alice, 2, 65, 2));
        assertEquals(Material.STONE_BRICKS, seen(alice, 3, 66, 2));
        assertEquals(3, alice.fakeCount());
        assertEquals(Material.AIR, seen(bob, 2, 65, 2), "another player sees the real world");
        assertEquals(0, bob.blockPackets());
        assertEquals(Material.AIR, real(2, 65, 2), "nothing is written");
        assertEquals(seq0, h.core().events().lastSeq(), "no block event: the world did not change");

        alice.performCommand("ai preview");
        assertTrue(lastLine(alice).contains("hidden"));
        assertEquals(Material.AIR, seen(alice, 2, 65, 2));
        assertEquals(0, alice.fakeCount());
        alice.performCommand("ai preview");
        assertTrue(lastLine(alice).contains("Showing plan plan_a (3 blocks"));
        assertEquals(Material.STONE_BRICKS, seen(alice, 3, 65, 2));

        JsonObject cleared = h.rpcOk("admin", "chat_preview", "{\"clientId\":\"bridge-1\",\"playerId\":\"" + id(alice)
                + "\",\"planId\":\"plan_a\",\"clear\":true}");
        assertTrue(cleared.get("online").getAsBoolean());
        assertEquals(0, alice.fakeCount(), "the view is the real world again");
        alice.performCommand("ai preview");
        assertTrue(lastLine(alice).contains("No prepared plan"));
        assertEquals(Material.AIR, real(2, 65, 2));
    }

    @Test
    void heldUntilAskedAndANewerPlanReplacesTheOld() throws Exception {
        preview("bridge-1", alice, "plan_a", "2,65,2", false, later());
        assertEquals(0, alice.fakeCount(), "show=false: held, not shown");
        alice.performCommand("ai preview");
        assertEquals(Material.STONE_BRICKS, seen(alice, 2, 65, 2));
        preview("bridge-1", alice, "plan_b", "5,65,5", true, later());
        assertEquals(Material.AIR, seen(alice, 2, 65, 2), "the old plan's blocks are restored");
        assertEquals(Material.STONE_BRICKS, seen(alice, 5, 65, 5));
        // clearing another plan id leaves the current one
        h.rpcOk("admin", "chat_preview", "{\"clientId\":\"bridge-1\",\"playerId\":\"" + id(alice)
                + "\",\"planId\":\"plan_a\",\"clear\":true}");
        assertEquals(Material.STONE_BRICKS, seen(alice, 5, 65, 5));
    }

    @Test
    void aPlayerEditUnderAShownPreviewIsARealEditAndAConflictForThePlan() throws Exception {
        preview("bridge-1", alice, "plan_a", "2,65,2, 3,65,2", true, later());
        assertEquals(Material.STONE_BRICKS, seen(alice, 2, 65, 2));
        h.world.getBlockAt(2, 65, 2).setType(Material.OAK_PLANKS); // bob builds there, for real
        assertEquals(Material.OAK_PLANKS, seen(alice, 2, 65, 2), "the real change reaches alice's client");
        assertEquals(Material.STONE_BRICKS, seen(alice, 3, 65, 2));
        JsonObject res = h.rpcOk("service", "batch_apply", h.batch("b1",
                List.of(new int[] {2, 65, 2}, new int[] {3, 65, 2}), "minecraft:air", STONE));
        assertEquals("conflict", res.get("status").getAsString(), res.toString());
        assertEquals(Material.OAK_PLANKS, real(2, 65, 2), "the edit stays");
        assertEquals(Material.AIR, real(3, 65, 2), "all-or-nothing: nothing of the batch is written");
    }

    @Test
    void aChunkTheClientReceivesAgainShowsThePreviewAgain() throws Exception {
        preview("bridge-1", alice, "plan_a", "2,65,2, 1000,65,1000", true, later());
        assertEquals(Material.STONE_BRICKS, seen(alice, 2, 65, 2));
        alice.chunkResent(0, 0);
        assertEquals(Material.STONE_BRICKS, seen(alice, 2, 65, 2), "PlayerChunkLoadEvent: sent again");
        alice.teleport(new org.bukkit.Location(h.world, 1000.5, 66, 1000.5));
        assertEquals(Material.AIR, seen(alice, 1000, 65, 1000), "a chunk the client did not hold dropped the change");
        alice.chunkResent(1000 >> 4, 1000 >> 4);
        assertEquals(Material.STONE_BRICKS, seen(alice, 1000, 65, 1000), "shown once the chunk reached the client");
    }

    @Test
    void anExpiredPlanIsClearedAndThePlayerTold() throws Exception {
        preview("bridge-1", alice, "plan_a", "2,65,2", true, System.currentTimeMillis() + 1_500);
        assertEquals(Material.STONE_BRICKS, seen(alice, 2, 65, 2));
        long until = System.currentTimeMillis() + 15_000;
        while (alice.fakeCount() > 0 && System.currentTimeMillis() < until) {
            h.tick();
        }
        assertEquals(0, alice.fakeCount());
        assertTrue(lastLine(alice).contains("plan_a expired"));
    }

    @Test
    void onlyTheLeaseHolderMayShowAndANewBridgeClearsEveryPreview() throws Exception {
        JsonObject r = preview("someone-else", alice, "plan_a", "2,65,2", true, later());
        assertEquals("permission_denied", r.getAsJsonObject("error").get("code").getAsString());
        assertEquals(0, alice.fakeCount());
        preview("bridge-1", alice, "plan_a", "2,65,2", true, later());
        h.rpcOk("admin", "chat_poll", "{\"clientId\":\"bridge-2\"}");
        for (int i = 0; i < 3; i++) {
            h.tick();
        }
        assertEquals(0, alice.fakeCount(), "the old bridge's plan is no longer offered");
        assertTrue(lastLine(alice).contains("preview was cleared"));
    }

    @Test
    void badInputIsRefusedWithWhatToFix() throws Exception {
        JsonObject r = h.rpc("admin", "chat_preview", "{\"clientId\":\"bridge-1\",\"playerId\":\"" + id(alice)
                + "\",\"planId\":\"p\",\"palette\":[\"" + STONE + "\"],\"xyz\":[1,65,1],\"desired\":[3],\"show\":true}");
        assertEquals("invalid_request", r.getAsJsonObject("error").get("code").getAsString());
        assertTrue(r.toString().contains("outside the palette"), r.toString());
        r = h.rpc("admin", "chat_preview", "{\"clientId\":\"bridge-1\",\"playerId\":\"" + id(alice)
                + "\",\"planId\":\"p\",\"palette\":[\"minecraft:no_such_block\"],\"xyz\":[1,65,1],\"desired\":[0],"
                + "\"show\":true}");
        assertEquals("invalid_request", r.getAsJsonObject("error").get("code").getAsString(), r.toString());
        assertEquals(0, alice.fakeCount());
        assertFalse(h.core().previews().toggle(id(alice)).isPresent(), "nothing kept");
        r = h.rpc("admin", "chat_preview", "{\"clientId\":\"bridge-1\",\"playerId\":\"" + id(alice)
                + "\",\"planId\":\"p\",\"palette\":[\"" + STONE + "\"],\"xyz\":[1,65],\"desired\":[0]}");
        assertEquals("invalid_request", r.getAsJsonObject("error").get("code").getAsString());
        assertTrue(h.rpcOk("service", "world_info", "{}").getAsJsonArray("capabilities").toString()
                .contains("chat_preview"));
    }
}
