package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.world.core.ChatCommands.Command;
import dev.mcb.world.core.port.ChatLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ChatCommandsTest {
    static Optional<Command> p(String text) {
        return ChatCommands.parse(text);
    }

    static Command cmd(String name, String... args) {
        return new Command(name, List.of(args));
    }

    @Test
    void exactCommandsParse() {
        assertEquals(Optional.of(cmd("stop")), p("stop"));
        assertEquals(Optional.of(cmd("stop")), p("  /AI   Cancel "));
        assertEquals(Optional.of(cmd("resume")), p("Resume"));
        assertEquals(Optional.of(cmd("status")), p("/ai status"));
        assertEquals(Optional.of(cmd("project create", "Castle_2")), p("project CREATE Castle_2"));
        assertEquals(Optional.of(cmd("project use", "castle")), p("project use castle"));
        assertEquals(Optional.of(cmd("area set", "24")), p("area set 24"));
        assertEquals(Optional.of(cmd("area set", "~-5", "60", "~", "10", "~12", "-3")), p("area set ~-5 60 ~ 10  ~12 -3"));
        assertEquals(Optional.of(cmd("undo")), p("undo"));
        assertEquals(Optional.of(cmd("undo", "op_0123abcd")), p("undo op_0123abcd"));
        assertEquals(Optional.of(cmd("protect", "pt_ab12")), p("protect pt_ab12"));
        assertEquals(Optional.of(cmd("protect", "pt_ab12", "off")), p("protect pt_ab12 OFF"));
        assertEquals(Optional.of(cmd("camera save", "front-door")), p("camera save front-door"));
        assertEquals(Optional.of(cmd("preview")), p("/ai Preview"));
        assertEquals(Optional.of(cmd("apply")), p("apply"));
        assertEquals(Optional.of(cmd("reject")), p(" REJECT "));
        assertEquals(Optional.of(cmd("who")), p("/ai who"));
        assertEquals(Optional.of(cmd("who", "~-2", "64", "~", "3", "~1", "-7")), p("who ~-2 64 ~ 3 ~1 -7"));
        assertEquals(Optional.empty(), p("who broke my wall"));
        assertEquals(Optional.empty(), p("who 1 2 3"));
    }

    @Test
    void anythingElseIsAPrompt() {
        for (String prompt : List.of("stop the tower at y=80", "please stop", "stop!", "status of the wall",
                "resume building", "project create my house", "project create", "project delete x",
                "area set", "area set 1 2 3", "area set 1 2 3 4 5 6 7", "area set here", "undo the last wall",
                "undo op_1 op_2", "undo 12", "protect tower", "protect pt_1 please", "camera save",
                "camera save the front", "camera delete x", "apply it", "preview the tower", "reject op_1", "/ai", "build a tower", "project use -x",
                "project use " + "a".repeat(41))) {
            assertEquals(Optional.empty(), p(prompt), prompt);
        }
        assertEquals(Optional.of(cmd("project use", "a".repeat(40))), p("project use " + "a".repeat(40)));
    }

    @Test
    void queueTypesFollowTheRuleAndStopOfOnesOwnDoesNotPause() {
        AtomicInteger cancels = new AtomicInteger();
        List<String> told = new ArrayList<>();
        ChatQueue q = new ChatQueue((pl, t) -> told.add(t), m -> cancels.incrementAndGet(), c -> { }, () -> 1L);
        assertEquals(ChatQueue.Kind.CANCEL, q.submit("a", "stop").kind());
        assertEquals(1, cancels.get());
        ChatQueue.Message own = q.submit("b", "/ai stop", null, null, false);
        assertEquals(ChatQueue.Kind.COMMAND, own.kind());
        assertEquals(Optional.of(cmd("stop")), own.command());
        assertEquals(1, cancels.get(), "a stop of one's own requests does not pause the host");
        assertEquals(ChatQueue.Kind.COMMAND, q.submit("a", "undo").kind());
        ChatQueue.Message prompt = q.submit("a", "undo the last wall");
        assertEquals(ChatQueue.Kind.PROMPT, prompt.kind());
        assertEquals(Optional.empty(), prompt.command());
        List<String> wire = q.poll("bridge", 10).messages().stream().map(m -> m.kind().wire).toList();
        assertEquals(List.of("cancel", "command", "command", "prompt"), wire);
    }

    @Test
    void replyLinesCarryTheirKind() {
        List<ChatLine> lines = new ArrayList<>();
        ChatQueue q = new ChatQueue(new dev.mcb.world.core.port.ChatSink() {
            @Override
            public void tell(String playerId, String text) {
                throw new AssertionError("the structured tell is used");
            }

            @Override
            public void tell(String playerId, ChatLine line) {
                lines.add(line);
            }
        }, m -> { }, c -> { }, () -> 1L);
        ChatQueue.Message m = q.submit("a", "build");
        q.poll("b1", 1);
        q.reply("b1", m.messageId(), "a", "applying... 50%", false, "");
        q.reply("b1", m.messageId(), "a", "done: 3 blocks", true, "one conflict");
        assertEquals(List.of(new ChatLine("applying... 50%", ChatLine.Kind.PROGRESS),
                new ChatLine("done: 3 blocks", ChatLine.Kind.INFO),
                new ChatLine("[ai] error: one conflict", ChatLine.Kind.ERROR)), lines);
        q.submit("a", "again");
        q.poll("b1", 1);
        q.poll("b2", 1); // takeover: the leased request fails with a notice
        assertEquals(ChatLine.Kind.NOTICE, lines.get(3).kind());
        assertTrue(lines.get(3).text().contains("bridge restarted"));
        assertEquals(List.of("applying... 50%", "done: 3 blocks", "[ai] error: one conflict", lines.get(3).text()),
                q.lines("a"));
    }
}
