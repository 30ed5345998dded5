package dev.mcb.world.core;

import com.google.gson.JsonObject;
import dev.mcb.proto.world.v1.PlayerPosition;
import dev.mcb.proto.world.v1.TargetBlock;
import dev.mcb.world.core.port.ChatLine;
import dev.mcb.world.core.port.ChatSink;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * In-game chat for the AI bridge: a FIFO of {@code /ai} prompts and {@code /ai stop} cancels, leased per
 * bridge {@code client_id}. The same rules as the embedded host's {@code mcb_world_host/chat.py}; the
 * conformance suite (tests/contract/test_world_chat.py) checks both.
 *
 * <ul>
 *   <li>{@link #submit}: a line that is exactly a command ({@link ChatCommands}) is a {@code command}
 *       message, except {@code stop}/{@code cancel} from someone who may stop everything: that is a
 *       {@code cancel} message and pauses writes at once ({@code onCancel}). Anything else is a
 *       {@code prompt} ("stop the tower at y=80" is a prompt).</li>
 *   <li>{@link #poll}: leases up to {@code max} pending messages (FIFO) to the caller until a {@code done}
 *       reply (no expiry). A poll by a different client id than the last one takes over: writes stop
 *       ({@code onTakeover}), every message leased to the old client fails with a notice to its player;
 *       nothing is replayed.</li>
 *   <li>{@link #reply}: only from the lease holder and only to the initiator ({@code permission_denied});
 *       an id that is not leased is {@code not_found}. Lines are capped at {@value #MAX_LINE} characters
 *       (longer ones end in "…"), at most {@value #MAX_LINES_PER_REPLY} per reply, and at most
 *       {@value #RATE_LINES} per player per second: excess is refused with {@code busy}
 *       ({@code details.retryAfterMillis}), nothing shown, the lease kept.</li>
 *   <li>Every line shown goes to the {@link ChatSink} as a {@link ChatLine} (interim reply lines are
 *       {@code PROGRESS}, the lines of a {@code done} reply {@code INFO}, the error line {@code ERROR}, the
 *       host's own notices {@code NOTICE}) and, as plain text, into a bounded per-player outbox (read by the
 *       test-only {@code automation_chat_outbox}).</li>
 * </ul>
 */
public final class ChatQueue {
    public static final int MAX_PENDING = 1000;
    public static final int MAX_TEXT = 4096;
    public static final int MAX_POLL = 100;
    public static final int DEFAULT_POLL = 16;
    public static final int MAX_LINE = 256;
    public static final int MAX_LINES_PER_REPLY = 4;
    public static final int RATE_LINES = 4;
    public static final long RATE_WINDOW_MS = 1000;
    public static final int OUTBOX_LINES = 200;
    public static final int OUTBOX_PLAYERS = 1000;
    private static final Pattern LINE_BREAK = Pattern.compile("\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]");
    private static final Pattern UNPRINTABLE = Pattern.compile("[\\x00-\\x1f\\x7f\u00a7]");
    private static final SecureRandom RANDOM = new SecureRandom();

    public enum Kind {
        PROMPT("prompt"), CANCEL("cancel"), COMMAND("command");

        public final String wire;

        Kind(String wire) {
            this.wire = wire;
        }
    }

    /** A queued chat line; {@code position}/{@code targetBlock} are null when unknown. */
    public record Message(String messageId, String playerId, String projectId, String text, Kind kind, long atMillis,
                          PlayerPosition position, TargetBlock targetBlock) {
        /** The command this message is (for {@code command} and {@code cancel} messages). */
        public Optional<ChatCommands.Command> command() {
            return kind == Kind.PROMPT ? Optional.empty() : ChatCommands.parse(text);
        }
    }

    public record Polled(List<Message> messages, boolean tookOver) {
    }

    private record Lease(Message msg, String clientId) {
    }

    private final ChatSink sink;
    private final Consumer<Message> onCancel;
    private final Consumer<String> onTakeover;
    private final LongSupplier clock;
    private final ArrayDeque<Message> pending = new ArrayDeque<>();
    private final Map<String, Lease> leased = new LinkedHashMap<>();
    private final Map<String, ArrayDeque<String>> outbox = new LinkedHashMap<>();
    private final Map<String, ArrayDeque<Long>> shown = new LinkedHashMap<>();
    private volatile String projectId = "default";
    private String activeClient;

    public ChatQueue(ChatSink sink, Consumer<Message> onCancel, Consumer<String> onTakeover, LongSupplier clock) {
        this.sink = sink;
        this.onCancel = onCancel;
        this.onTakeover = onTakeover;
        this.clock = clock;
    }

    /** The project new messages belong to (from the host's configuration; "default" until set). */
    public void projectId(String id) {
        projectId = id == null || id.isBlank() ? "default" : id.strip();
    }

    public String projectId() {
        return projectId;
    }

    public Message submit(String playerId, String text) {
        return submit(playerId, text, null, null);
    }

    public Message submit(String playerId, String text, PlayerPosition position, TargetBlock targetBlock) {
        return submit(playerId, text, position, targetBlock, true);
    }

    /**
     * Queue a line. {@code mayStopAll}: whether a {@code stop} from this player pauses every write at once
     * (Paper: the {@code mcb.ai.stop} permission; tests: always). Without it, {@code stop} is a
     * {@code command} message asking the bridge to stop only this player's own requests.
     */
    public Message submit(String playerId, String text, PlayerPosition position, TargetBlock targetBlock,
                          boolean mayStopAll) {
        if (playerId == null || playerId.isEmpty() || text == null || text.isBlank()) {
            throw McbException.invalid("a chat message needs a player and text");
        }
        if (text.length() > MAX_TEXT) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "a chat line holds at most " + MAX_TEXT + " characters");
        }
        String t = text.strip();
        Kind kind = ChatCommands.parse(t).map(c -> c.name().equals("stop") && mayStopAll ? Kind.CANCEL : Kind.COMMAND)
                .orElse(Kind.PROMPT);
        byte[] r = new byte[8];
        RANDOM.nextBytes(r);
        Message m = new Message("msg-" + HexFormat.of().formatHex(r), playerId, projectId, t, kind, clock.getAsLong(),
                position, targetBlock);
        synchronized (this) {
            pending.addLast(m);
            while (pending.size() > MAX_PENDING) {
                pending.removeFirst();
            }
        }
        if (kind == Kind.CANCEL) {
            onCancel.accept(m); // pause at once, even when no bridge is polling
        }
        return m;
    }

    /** Lease up to {@code max} (0 = {@value #DEFAULT_POLL}) messages to {@code clientId} (see class doc). */
    public synchronized Polled poll(String clientId, int max) {
        if (clientId == null || clientId.isEmpty() || clientId.length() > 200) {
            throw McbException.invalid("chat_poll needs a clientId (1..200 characters) naming the bridge process");
        }
        int n = Math.max(1, Math.min(max <= 0 ? DEFAULT_POLL : max, MAX_POLL));
        boolean tookOver = activeClient != null && !activeClient.equals(clientId);
        if (tookOver) {
            onTakeover.accept(clientId);
            List<Lease> failed = new ArrayList<>(leased.values());
            leased.clear();
            for (Lease l : failed) {
                tell(l.msg.playerId(), new ChatLine(takeoverNotice(l.msg.text()), ChatLine.Kind.NOTICE));
            }
        }
        activeClient = clientId;
        List<Message> out = new ArrayList<>();
        while (out.size() < n && !pending.isEmpty()) {
            Message m = pending.removeFirst();
            leased.put(m.messageId(), new Lease(m, clientId));
            out.add(m);
        }
        return new Polled(out, tookOver);
    }

    static String takeoverNotice(String text) {
        return "[ai] Your request \"" + abbreviate(text) + "\" was stopped: the AI bridge restarted. "
                + "Writes are paused; check the world, then send it again (/ai resume allows writes).";
    }

    /** Show a reply to the message's initiator; ends the lease when {@code done}. True when a line was shown. */
    public synchronized boolean reply(String clientId, String messageId, String playerId, String text, boolean done,
                                      String error) {
        if (messageId == null || messageId.isEmpty() || clientId == null || clientId.isEmpty()) {
            throw McbException.invalid("chat_reply needs id and clientId");
        }
        text = text == null ? "" : text;
        error = error == null ? "" : error;
        if (text.length() > MAX_TEXT || error.length() > MAX_TEXT) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "a reply holds at most " + MAX_TEXT + " characters");
        }
        Lease l = leased.get(messageId);
        if (l == null) {
            throw new McbException(ErrorCode.NOT_FOUND, "message '" + abbreviate(messageId) + "' is not leased "
                    + "(unknown, not polled yet, finished, or failed when another bridge took over)");
        }
        if (!l.clientId().equals(clientId)) {
            throw new McbException(ErrorCode.PERMISSION_DENIED, "message " + messageId
                    + " is leased to another client; only the lease holder may reply");
        }
        if (!l.msg().playerId().equals(playerId)) {
            throw new McbException(ErrorCode.PERMISSION_DENIED, "message " + messageId
                    + " came from another player; replies go only to its initiator");
        }
        List<ChatLine> lines = new ArrayList<>();
        for (String raw : LINE_BREAK.split(text, -1)) {
            String c = cleanLine(raw);
            if (!c.isBlank()) {
                lines.add(new ChatLine(c, done ? ChatLine.Kind.INFO : ChatLine.Kind.PROGRESS));
            }
        }
        if (!error.isBlank()) {
            lines.add(ChatLine.error(cleanLine("[ai] error: " + String.join(" ", error.strip().split("\\s+")))));
        }
        if (lines.size() > MAX_LINES_PER_REPLY) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "a reply shows at most " + MAX_LINES_PER_REPLY
                    + " lines, got " + lines.size());
        }
        if (!lines.isEmpty()) {
            long now = clock.getAsLong();
            ArrayDeque<Long> window = shown.computeIfAbsent(playerId, k -> new ArrayDeque<>());
            while (!window.isEmpty() && window.peekFirst() <= now - RATE_WINDOW_MS) {
                window.removeFirst();
            }
            if (window.size() + lines.size() > RATE_LINES) {
                Long[] w = window.toArray(new Long[0]);
                long firstFree = w[window.size() + lines.size() - RATE_LINES - 1];
                long wait = Math.max(1, firstFree + RATE_WINDOW_MS - now);
                JsonObject det = new JsonObject();
                det.addProperty("retryAfterMillis", wait);
                throw new McbException(ErrorCode.BUSY, "at most " + RATE_LINES + " lines per second per player; retry in "
                        + wait + " ms (nothing was shown)", det);
            }
            for (ChatLine line : lines) {
                window.addLast(now);
                tell(playerId, line);
            }
            if (shown.size() > OUTBOX_PLAYERS) {
                Iterator<String> it = shown.keySet().iterator();
                it.next();
                it.remove();
            }
        }
        if (done) {
            leased.remove(messageId);
        }
        return !lines.isEmpty();
    }

    /** Control characters and § (formatting codes) removed; longer than {@value #MAX_LINE} code points → "…". */
    static String cleanLine(String line) {
        String s = UNPRINTABLE.matcher(line).replaceAll("");
        if (s.codePointCount(0, s.length()) <= MAX_LINE) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, MAX_LINE - 1)) + "…";
    }

    private void tell(String playerId, ChatLine line) {
        ArrayDeque<String> box = outbox.get(playerId);
        if (box == null) {
            if (outbox.size() >= OUTBOX_PLAYERS) {
                Iterator<String> it = outbox.keySet().iterator();
                it.next();
                it.remove();
            }
            box = new ArrayDeque<>();
            outbox.put(playerId, box);
        }
        box.addLast(line.text());
        while (box.size() > OUTBOX_LINES) {
            box.removeFirst();
        }
        sink.tell(playerId, line);
    }

    /** What was shown to one player (replies, error lines, notices), oldest first. */
    public synchronized List<String> lines(String playerId) {
        ArrayDeque<String> box = outbox.get(playerId);
        return box == null ? List.of() : List.copyOf(box);
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
