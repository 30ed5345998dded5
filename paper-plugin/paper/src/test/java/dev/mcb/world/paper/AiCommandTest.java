package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mcb.world.core.ChatQueue;
import dev.mcb.world.core.WorldHostCore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.format.NamedTextColor;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.block.Block;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/** {@code /ai} in the real plugin under MockBukkit: prompt vs command, permissions, stop, components. */
class AiCommandTest {
    PluginHarness h;
    WorldHostCore core;

    @BeforeEach
    void start() {
        h = PluginHarness.start(Map.of("allow-local-automation", true));
        core = h.plugin().core();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    /**
     * A non-op player who may only use /ai (mcb.ai.use), plus the given permissions. MockBukkit leaves
     * {@code getTargetBlockExact} unimplemented; here the player looks at nothing (the adapter then sends
     * no target block, as on a real server when the player looks at the sky).
     */
    PlayerMock player(String name, String... perms) {
        PlayerMock p = new PlayerMock(h.server, name, UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8))) {
            @Override
            public Block getTargetBlockExact(int maxDistance) {
                return null;
            }
        };
        h.server.addPlayer(p);
        p.setOp(false);
        p.addAttachment(h.plugin(), "mcb.ai.use", true);
        for (String perm : perms) {
            p.addAttachment(h.plugin(), perm, true);
        }
        return p;
    }

    static List<Component> received(PlayerMock p) {
        List<Component> out = new ArrayList<>();
        for (Component c = p.nextComponentMessage(); c != null; c = p.nextComponentMessage()) {
            out.add(c);
        }
        return out;
    }

    static String plain(Component c) {
        return PlainTextComponentSerializer.plainText().serialize(c);
    }

    /** The colour of the text after the "[ai] " prefix. */
    static NamedTextColor bodyColour(Component c) {
        assertEquals(NamedTextColor.DARK_AQUA, c.color(), "the [ai] prefix");
        return (NamedTextColor) c.children().get(0).color();
    }

    List<ChatQueue.Message> polled() throws Exception {
        return core.chat().poll("mockbukkit-bridge", 100).messages();
    }

    @Test
    void aLineIsACommandOnlyWhenItIsExactlyOne() throws Exception {
        PlayerMock alice = player("alice", "mcb.ai.manage");
        assertTrue(alice.performCommand("ai stop the tower at y=80"));
        assertTrue(alice.performCommand("ai undo the last wall"));
        assertTrue(alice.performCommand("ai undo"));
        assertTrue(alice.performCommand("ai project create castle"));
        List<ChatQueue.Message> got = polled();
        assertEquals(List.of("prompt", "prompt", "command", "command"), got.stream().map(m -> m.kind().wire).toList());
        assertEquals("stop the tower at y=80", got.get(0).text());
        assertEquals(alice.getUniqueId().toString(), got.get(0).playerId());
        assertNotNull(got.get(0).position(), "Paper sends the player's position with the line");
        assertFalse(core.executor().paused(), "a prompt with 'stop' in it stops nothing");
        List<Component> lines = received(alice);
        assertEquals(4, lines.size(), lines.toString());
        assertTrue(plain(lines.get(0)).startsWith("[ai] Queued for the AI: stop the tower"), plain(lines.get(0)));
        assertEquals("[ai] Sent to the AI bridge: undo", plain(lines.get(2)));
    }

    @Test
    void permissionsAreCheckedBeforeAnythingIsQueued() throws Exception {
        PlayerMock bob = player("bob");
        assertTrue(bob.performCommand("ai undo"));
        assertTrue(bob.performCommand("ai camera save front"));
        assertTrue(bob.performCommand("ai resume"));
        assertEquals(List.of(), polled());
        List<Component> lines = received(bob);
        assertEquals(3, lines.size());
        assertEquals("[ai] You lack the permission mcb.ai.manage for /ai undo.", plain(lines.get(0)));
        assertEquals(NamedTextColor.RED, bodyColour(lines.get(0)));
        assertEquals("[ai] You lack the permission mcb.ai.camera for /ai camera save.", plain(lines.get(1)));
        // tab completion offers only what bob may run
        assertEquals(List.of("stop", "status"), h.server.getCommandMap().tabComplete(bob, "ai s"));
        // a plan of his own is his to preview (the bridge checks it is his)
        assertEquals(List.of("preview"), h.server.getCommandMap().tabComplete(bob, "ai p"));
        PlayerMock carol = player("carol", "mcb.ai.manage");
        assertEquals(List.of("create", "use"), h.server.getCommandMap().tabComplete(carol, "ai project "));
        assertEquals(List.of("off"), h.server.getCommandMap().tabComplete(carol, "ai protect pt_1 o"));
    }

    @Test
    void anyoneStopsTheirOwnRequestsAndOnlyMcbAiStopPausesEverything() throws Exception {
        PlayerMock bob = player("bob");
        assertTrue(bob.performCommand("ai stop"));
        assertFalse(core.executor().paused(), "a player's own stop does not pause the server's writes");
        ChatQueue.Message own = polled().get(0);
        assertEquals("command", own.kind().wire);
        assertEquals("stop", own.command().orElseThrow().name());
        assertEquals(NamedTextColor.GRAY, bodyColour(received(bob).get(0)));

        PlayerMock admin = player("admin", "mcb.ai.stop");
        assertTrue(admin.performCommand("ai cancel"));
        assertTrue(core.executor().paused(), "mcb.ai.stop pauses every write at once");
        assertEquals("cancel", polled().get(0).kind().wire);
        assertTrue(plain(received(admin).get(0)).startsWith("[ai] Stopped: no new batch will start"));
    }

    @Test
    void bridgeRepliesReachTheInitiatorAsColouredComponents() throws Exception {
        PlayerMock alice = player("alice");
        assertTrue(alice.performCommand("ai build a tower"));
        received(alice);
        JsonArray msgs = h.rpcOk("admin", "chat_poll", "{\"clientId\":\"b1\"}").getAsJsonArray("messages");
        JsonObject m = msgs.get(0).getAsJsonObject();
        assertEquals(alice.getUniqueId().toString(), m.get("playerId").getAsString());
        String id = m.get("id").getAsString();
        h.rpcOk("admin", "chat_reply", "{\"id\":\"" + id + "\",\"playerId\":\"" + alice.getUniqueId()
                + "\",\"text\":\"applying... 50%\",\"clientId\":\"b1\"}");
        h.rpcOk("admin", "chat_reply", "{\"id\":\"" + id + "\",\"playerId\":\"" + alice.getUniqueId()
                + "\",\"text\":\"done: 42 \\u00a7cblocks\",\"done\":true,\"error\":\"one conflict\",\"clientId\":\"b1\"}");
        h.tick(); // replies from the RPC thread reach the player on the server thread
        List<Component> lines = received(alice);
        assertEquals(List.of("[ai] applying... 50%", "[ai] done: 42 cblocks", "[ai] error: one conflict"),
                lines.stream().map(AiCommandTest::plain).toList());
        assertEquals(List.of(NamedTextColor.GRAY, NamedTextColor.WHITE, NamedTextColor.RED),
                lines.stream().map(AiCommandTest::bodyColour).toList());
        assertNull(alice.nextMessage(), "nothing else, and no legacy string");
    }

    @Test
    void statusAnswersHereAndAsksTheBridgeWhenOneIsConnected() throws Exception {
        PlayerMock alice = player("alice");
        assertTrue(alice.performCommand("ai status"));
        assertTrue(plain(received(alice).get(0)).startsWith("[ai] running; queued batches 0"));
        assertEquals(List.of(), polled(), "no bridge had polled: nothing forwarded");
        // polled() made "mockbukkit-bridge" the active client
        assertTrue(alice.performCommand("ai status"));
        assertTrue(plain(received(alice).get(0)).endsWith("bridge connected"));
        assertEquals("command", polled().get(0).kind().wire);
    }
}
