package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcb.proto.world.v1.PlayerPosition;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ChatQueueTest {
    final List<String> told = new ArrayList<>();
    final AtomicInteger takeovers = new AtomicInteger();
    final AtomicInteger cancels = new AtomicInteger();
    final AtomicLong now = new AtomicLong(1_000);
    final ChatQueue q = new ChatQueue((p, t) -> told.add(p + ": " + t), m -> cancels.incrementAndGet(),
            c -> takeovers.incrementAndGet(), now::get);

    static McbException fails(org.junit.jupiter.api.function.Executable e) {
        return assertThrows(McbException.class, e);
    }

    @Test
    void fifoLeasesUntilDoneAndOnlyTheHolderAnswersTheInitiator() {
        q.projectId("castle");
        PlayerPosition pos = PlayerPosition.newBuilder().setX(1.5).setY(64).setZ(2).setWorld("world").build();
        ChatQueue.Message a = q.submit("alice", "build a tower", pos, null);
        ChatQueue.Message b = q.submit("bob", "add windows");
        assertEquals("castle", a.projectId());
        assertEquals(pos, a.position());
        assertEquals(ChatQueue.Kind.PROMPT, a.kind());
        ChatQueue.Polled got = q.poll("bridge-1", 1);
        assertEquals(List.of(a), got.messages());
        assertFalse(got.tookOver());
        assertEquals(ErrorCode.PERMISSION_DENIED, fails(() -> q.reply("bridge-x", a.messageId(), "alice", "hi", true, "")).code);
        assertEquals(ErrorCode.PERMISSION_DENIED, fails(() -> q.reply("bridge-1", a.messageId(), "bob", "hi", true, "")).code);
        assertEquals(ErrorCode.NOT_FOUND, fails(() -> q.reply("bridge-1", b.messageId(), "bob", "hi", true, "")).code);
        assertEquals(ErrorCode.NOT_FOUND, fails(() -> q.reply("bridge-1", "msg-x", "alice", "hi", true, "")).code);
        // no expiry: an hour later the lease still holds
        now.addAndGet(3_600_000);
        assertEquals(List.of(b), q.poll("bridge-1", 10).messages());
        assertTrue(q.reply("bridge-1", a.messageId(), "alice", "working on it", false, ""));
        assertTrue(q.reply("bridge-1", a.messageId(), "alice", "", true, "conflict\n at  1,2,3"));
        assertEquals(List.of("alice: working on it", "alice: [ai] error: conflict at 1,2,3"), told);
        assertEquals(List.of("working on it", "[ai] error: conflict at 1,2,3"), q.lines("alice"));
        assertEquals(ErrorCode.NOT_FOUND, fails(() -> q.reply("bridge-1", a.messageId(), "alice", "x", true, "")).code);
        assertFalse(q.reply("bridge-1", b.messageId(), "bob", "", true, ""));
        assertEquals(0, q.leasedCount());
        assertEquals(0, takeovers.get());
    }

    @Test
    void cancelWordsPauseAtOnce() {
        assertEquals(ChatQueue.Kind.CANCEL, q.submit("alice", " /AI Stop ").kind());
        assertEquals(ChatQueue.Kind.CANCEL, q.submit("alice", "cancel").kind());
        assertEquals(ChatQueue.Kind.PROMPT, q.submit("alice", "stop the tower at y=80").kind());
        assertEquals(2, cancels.get());
        assertEquals("/AI Stop", q.poll("b", 1).messages().get(0).text());
    }

    @Test
    void aNewClientStopsWritesAndFailsLeasedRequestsWithANotice() {
        q.submit("alice", "build a tower");
        q.poll("bridge-1", 1); // alice's message leased to bridge-1
        ChatQueue.Message bob = q.submit("bob", "add windows");
        ChatQueue.Polled p = q.poll("bridge-2", 10); // a new bridge process
        assertTrue(p.tookOver());
        assertEquals(List.of(bob), p.messages());
        assertEquals(1, takeovers.get(), "active writes stopped");
        assertEquals(1, told.size());
        assertTrue(told.get(0).startsWith("alice: [ai] ") && told.get(0).contains("bridge restarted"), told.get(0));
        assertEquals("bridge-2", q.activeClient());
        assertEquals(1, q.leasedCount(), "bob's message went to the new bridge");
        assertFalse(q.poll("bridge-2", 10).tookOver());
    }

    @Test
    void linesAreCappedCleanedAndRateLimited() {
        ChatQueue.Message m = q.submit("carol", "go");
        q.poll("b", 1);
        q.reply("b", m.messageId(), "carol", "x".repeat(300) + "\r\n\u00a7cred\u0007 text\n\n", false, "");
        List<String> lines = q.lines("carol");
        assertEquals(256, lines.get(0).length());
        assertTrue(lines.get(0).endsWith("…"));
        assertEquals("cred text", lines.get(1));
        assertEquals(ErrorCode.BUDGET_EXCEEDED, fails(() -> q.reply("b", m.messageId(), "carol", "1\n2\n3\n4\n5", false, "")).code);
        q.reply("b", m.messageId(), "carol", "3\n4", false, "");
        now.addAndGet(400);
        McbException busy = fails(() -> q.reply("b", m.messageId(), "carol", "5", true, ""));
        assertEquals(ErrorCode.BUSY, busy.code);
        assertEquals(600, busy.details.get("retryAfterMillis").getAsLong());
        assertEquals(4, q.lines("carol").size(), "nothing shown");
        assertEquals(1, q.leasedCount(), "lease kept");
        now.addAndGet(600);
        assertTrue(q.reply("b", m.messageId(), "carol", "5", true, ""));
        assertEquals(0, q.leasedCount());
    }

    @Test
    void limits() {
        assertThrows(McbException.class, () -> q.submit("a", " "));
        assertEquals(ErrorCode.BUDGET_EXCEEDED, fails(() -> q.submit("a", "x".repeat(5000))).code);
        assertThrows(McbException.class, () -> q.poll("", 1));
        assertThrows(McbException.class, () -> q.poll("x".repeat(201), 1));
        for (int i = 0; i < 150; i++) {
            q.submit("a", "m" + i);
        }
        assertEquals(16, q.poll("b", 0).messages().size());
        assertEquals(100, q.poll("b", 1000).messages().size());
    }
}
