package dev.mcb.world.core;

import dev.mcb.world.core.port.ChatSink;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * In-game chat for the bridge: {@code /ai <text>} prompts and {@code /ai stop} cancels, leased to one
 * bridge {@code client_id} at a time.
 *
 * <p>{@link #poll} leases pending messages to the calling client for {@code leaseMillis}; an expired
 * lease makes the message pending again. A poll by a <em>new</em> client id takes over: the executor's
 * active writes stop (the {@code onTakeover} hook), every message leased to the old client fails and its
 * player is told so, and the new client starts with the pending queue. {@link #reply} is accepted only
 * from the client holding the lease.
 */
public final class ChatQueue {
    public static final int MAX_PENDING = 1000;
    public static final int MAX_TEXT = 4096;

    public enum Kind { PROMPT, CANCEL }

    public record Message(String messageId, String playerId, String text, Kind kind, long atMillis) {
    }

    private static final class Lease {
        final Message msg;
        final String clientId;
        final long expiresAt;

        Lease(Message msg, String clientId, long expiresAt) {
            this.msg = msg;
            this.clientId = clientId;
            this.expiresAt = expiresAt;
        }
    }

    private final ChatSink sink;
    private final Runnable onTakeover;
    private final LongSupplier clock;
    private final ArrayDeque<Message> pending = new ArrayDeque<>();
    private final Map<String, Lease> leased = new LinkedHashMap<>();
    private String activeClient;

    public ChatQueue(ChatSink sink, Runnable onTakeover, LongSupplier clock) {
        this.sink = sink;
        this.onTakeover = onTakeover;
        this.clock = clock;
    }

    public synchronized Message submit(String playerId, String text) {
        if (playerId == null || playerId.isEmpty() || text == null || text.isBlank()) {
            throw McbException.invalid("a chat message needs a player and text");
        }
        if (text.length() > MAX_TEXT) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "a chat line holds at most " + MAX_TEXT + " characters");
        }
        String t = text.strip();
        Kind kind = t.equalsIgnoreCase("cancel") || t.equalsIgnoreCase("/ai cancel") || t.equalsIgnoreCase("stop")
                || t.equalsIgnoreCase("/ai stop") ? Kind.CANCEL : Kind.PROMPT;
        Message m = new Message("msg-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16), playerId, t, kind,
                System.currentTimeMillis());
        pending.addLast(m);
        while (pending.size() > MAX_PENDING) {
            pending.removeFirst();
        }
        return m;
    }

    /** Lease up to {@code max} messages to {@code clientId}. A new client id takes over (see class doc). */
    public synchronized List<Message> poll(String clientId, int max, long leaseMillis) {
        if (clientId == null || clientId.isBlank() || clientId.length() > 200) {
            throw McbException.invalid("chat_poll needs a clientId (1..200 characters) naming the bridge process");
        }
        long now = clock.getAsLong();
        if (activeClient != null && !activeClient.equals(clientId)) {
            takeover(clientId);
        }
        activeClient = clientId;
        expire(now);
        List<Message> out = new ArrayList<>();
        while (out.size() < Math.max(1, Math.min(max, 100)) && !pending.isEmpty()) {
            Message m = pending.removeFirst();
            leased.put(m.messageId(), new Lease(m, clientId, now + leaseMillis));
            out.add(m);
        }
        return out;
    }

    private void takeover(String newClient) {
        onTakeover.run();
        for (Iterator<Lease> it = leased.values().iterator(); it.hasNext(); ) {
            Lease l = it.next();
            it.remove();
            sink.tell(l.msg.playerId(), "[ai] Your request \"" + abbreviate(l.msg.text())
                    + "\" was dropped: the AI bridge restarted (new client " + abbreviate(newClient)
                    + "). Active writes were stopped; please send it again.");
        }
    }

    private void expire(long now) {
        List<Message> back = new ArrayList<>();
        for (Iterator<Lease> it = leased.values().iterator(); it.hasNext(); ) {
            Lease l = it.next();
            if (l.expiresAt <= now) {
                it.remove();
                back.add(l.msg);
            }
        }
        for (int i = back.size() - 1; i >= 0; i--) {
            pending.addFirst(back.get(i));
        }
    }

    /** Answer a leased message: tells the player, ends the lease when {@code done}. */
    public synchronized void reply(String clientId, String messageId, String text, boolean done) {
        Lease l = leased.get(messageId);
        if (l == null || !l.clientId.equals(clientId)) {
            throw new McbException(ErrorCode.NOT_FOUND, "message " + abbreviate(messageId)
                    + " is not leased to client " + abbreviate(clientId) + " (expired, answered or taken over)");
        }
        if (l.expiresAt <= clock.getAsLong()) {
            leased.remove(messageId);
            pending.addFirst(l.msg);
            throw new McbException(ErrorCode.NOT_FOUND, "the lease on message " + messageId + " expired; poll again");
        }
        if (text != null && !text.isEmpty()) {
            sink.tell(l.msg.playerId(), text.length() > MAX_TEXT ? text.substring(0, MAX_TEXT) : text);
        }
        if (done) {
            leased.remove(messageId);
        }
    }

    public synchronized int pendingCount() {
        return pending.size();
    }

    public synchronized int leasedCount() {
        return leased.size();
    }

    public synchronized String activeClient() {
        return activeClient;
    }

    private static String abbreviate(String s) {
        return s == null ? "" : s.length() > 60 ? s.substring(0, 57) + "..." : s;
    }
}
