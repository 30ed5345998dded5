package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ChatQueueTest {
    final List<String> told = new ArrayList<>();
    final AtomicInteger takeovers = new AtomicInteger();
    final AtomicLong now = new AtomicLong(1_000);
    final ChatQueue q = new ChatQueue((p, t) -> told.add(p + ": " + t), takeovers::incrementAndGet, now::get);

    @Test
    void leasesExpireAndOnlyTheHolderReplies() {
        ChatQueue.Message m = q.submit("alice", "build a tower");
        assertEquals(ChatQueue.Kind.PROMPT, m.kind());
        assertEquals(ChatQueue.Kind.CANCEL, q.submit("alice", "cancel").kind());
        List<ChatQueue.Message> got = q.poll("bridge-1", 1, 10_000);
        assertEquals(List.of(m), got);
        assertEquals(1, q.leasedCount());
        assertEquals(ErrorCode.NOT_FOUND, assertThrows(McbException.class,
                () -> q.reply("bridge-x", m.messageId(), "hi", true)).code);
        q.reply("bridge-1", m.messageId(), "working on it", false);
        assertEquals(List.of("alice: working on it"), told);
        // the lease runs out: the message is pending again, in order
        now.addAndGet(10_001);
        assertEquals(ErrorCode.NOT_FOUND, assertThrows(McbException.class,
                () -> q.reply("bridge-1", m.messageId(), "late", true)).code);
        List<ChatQueue.Message> again = q.poll("bridge-1", 10, 10_000);
        assertEquals(m.messageId(), again.get(0).messageId());
        assertEquals(2, again.size());
        q.reply("bridge-1", m.messageId(), "done", true);
        assertEquals(1, q.leasedCount());
        assertEquals(0, takeovers.get());
    }

    @Test
    void aNewClientStopsWritesAndFailsLeasedRequestsWithANotice() {
        q.submit("alice", "build a tower");
        q.submit("bob", "add windows");
        q.poll("bridge-1", 1, 60_000); // alice's message leased to bridge-1
        q.poll("bridge-2", 10, 60_000); // a new bridge process
        assertEquals(1, takeovers.get(), "active writes stopped");
        assertEquals(1, told.size());
        assertTrue(told.get(0).startsWith("alice: ") && told.get(0).contains("send it again"), told.get(0));
        assertEquals("bridge-2", q.activeClient());
        assertEquals(1, q.leasedCount(), "bob's message went to the new bridge");
        assertEquals(0, q.pendingCount());
    }

    @Test
    void limits() {
        assertThrows(McbException.class, () -> q.submit("a", " "));
        assertEquals(ErrorCode.BUDGET_EXCEEDED, assertThrows(McbException.class,
                () -> q.submit("a", "x".repeat(5000))).code);
        assertThrows(McbException.class, () -> q.poll("", 1, 1000));
    }
}
