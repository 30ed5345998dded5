package dev.mcb.world.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Observed block events in memory, behind a cursor naming this host instance (seed 000).
 *
 * <p>Cursor text {@code <hostInstance>:<seq>}. A cursor from another instance (the plugin or server
 * restarted: events in between were never observed) or older than the oldest retained event answers
 * {@code resyncRequired} with a reason and a fresh cursor.
 *
 * <p>ABA tracking: for every position the sequence number of the last foreign (non-ours) change is
 * kept, even when that change put the block back the way it was (A→B→A), so undo rights can be
 * decided without trusting the current state alone ({@link #foreignTouchAfter}).
 */
public final class EventLog {
    public static final int MAX_PAGE = 1000; // events per events_since page (limit 0 asks for this)
    public static final int DEFAULT_RETAIN = 200_000;

    /** playerName: the player's name when observed (source player); cause: {@link Cause} (source environment). */
    public record Event(long seq, int x, int y, int z, String before, String after, Source source,
                        String playerId, long atMillis, String operationId, String playerName, String cause) {
        /** An event of a log written before names and causes (HostState's EVENTS records). */
        public Event(long seq, int x, int y, int z, String before, String after, Source source, String playerId,
                     long atMillis, String operationId) {
            this(seq, x, y, z, before, after, source, playerId, atMillis, operationId, "", Cause.of(source, ""));
        }
    }

    public record Page(List<Event> events, String nextCursor, boolean resyncRequired, boolean complete,
                       String reason) {
    }

    private final String instance;
    private final int retain;
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private final Map<Long, Long> lastForeign = new HashMap<>();
    private final int abaRetain;
    private long seq;

    public EventLog(String instance) {
        this(instance, DEFAULT_RETAIN);
    }

    public EventLog(String instance, int retain) {
        this.instance = instance;
        this.retain = retain;
        this.abaRetain = Math.max(retain, 1) * 4;
    }

    /**
     * A log that continues a previous process's (same identity: {@link HostState} kept it across a clean
     * restart): {@code tail} in order, the next event gets a number above {@code seqBase}.
     */
    public EventLog(String instance, int retain, long seqBase, List<Event> tail) {
        this(instance, retain);
        for (Event e : tail) {
            events.addLast(e);
            if (e.source() != Source.OURS) {
                lastForeign.put(key(e.x(), e.y(), e.z()), e.seq());
            }
            seq = Math.max(seq, e.seq());
        }
        while (events.size() > retain) {
            events.removeFirst();
        }
        seq = Math.max(seq, seqBase);
        // what happened before the restored tail is unknown to the ABA check
        abaFloor = events.isEmpty() ? seq : events.peekFirst().seq() - 1;
    }

    private volatile java.util.function.Consumer<Event> sink;
    private volatile java.util.function.Supplier<String> restartNote = () -> "";

    /** Every new event is also handed to {@code sink} (the durable tail), in order. */
    public void sink(java.util.function.Consumer<Event> s) {
        this.sink = s;
    }

    /** Added to the reason a cursor of an earlier process gets (what a crash may have rolled back). */
    public void restartNote(java.util.function.Supplier<String> note) {
        this.restartNote = note == null ? () -> "" : note;
    }

    static long key(int x, int y, int z) {
        return ((long) (x & 0x3FFFFFF) << 38) | ((long) (z & 0x3FFFFFF) << 12) | (y & 0xFFF);
    }

    public Event record(int x, int y, int z, String before, String after, Source source, String playerId,
                        String operationId) {
        return record(x, y, z, before, after, source, playerId, operationId, "", "");
    }

    /** An event with the player's name (source player) and its cause (source environment; "" = other). */
    public synchronized Event record(int x, int y, int z, String before, String after, Source source,
                                     String playerId, String operationId, String playerName, String cause) {
        seq++;
        Event ev = new Event(seq, x, y, z, before, after, source, playerId == null ? "" : playerId,
                System.currentTimeMillis(), operationId == null ? "" : operationId,
                source == Source.PLAYER && playerName != null ? playerName : "", Cause.of(source, cause));
        events.addLast(ev);
        java.util.function.Consumer<Event> s = sink;
        if (s != null) {
            s.accept(ev);
        }
        while (events.size() > retain) {
            events.removeFirst();
        }
        if (source != Source.OURS) {
            if (lastForeign.size() >= abaRetain) {
                // bounded memory: forget old positions; callers then see the trim via oldestSeq()
                lastForeign.clear();
                abaFloor = seq;
            }
            lastForeign.put(key(x, y, z), seq);
        }
        return ev;
    }

    private long abaFloor;

    /**
     * True when a non-ours change touched the position after {@code afterSeq} (even one that changed it
     * back), or when the log can no longer tell (memory trimmed since then): undo must not restore it.
     */
    public synchronized boolean foreignTouchAfter(int x, int y, int z, long afterSeq) {
        if (afterSeq < abaFloor) {
            return true;
        }
        Long s = lastForeign.get(key(x, y, z));
        return s != null && s > afterSeq;
    }

    public synchronized long lastSeq() {
        return seq;
    }

    public synchronized String cursorNow() {
        return instance + ":" + seq;
    }

    public String instance() {
        return instance;
    }

    /** region: {x0,y0,z0,x1,y1,z1} inclusive, or null. */
    public Page since(String cursor, int limit, int[] region) {
        int lim = limit <= 0 ? MAX_PAGE : Math.min(limit, MAX_PAGE);
        if (cursor == null || cursor.isEmpty()) {
            return new Page(List.of(), cursorNow(), false, true, "");
        }
        int colon = cursor.lastIndexOf(':');
        String inst = colon > 0 ? cursor.substring(0, colon) : "";
        String seqText = colon > 0 ? cursor.substring(colon + 1) : "";
        if (inst.isEmpty() || seqText.isEmpty() || !seqText.chars().allMatch(Character::isDigit) || seqText.length() > 18) {
            throw McbException.invalid("cursor " + quote(cursor) + " is not a cursor of this host; pass \"\" to start from now");
        }
        if (!inst.equals(instance)) {
            return new Page(List.of(), cursorNow(), true, true,
                    "the world host restarted since this cursor was issued; block events in between were not "
                            + "observed. Re-read the region and continue from the new cursor."
                            + (restartNote.get().isEmpty() ? "" : " " + restartNote.get()));
        }
        long from = Long.parseLong(seqText);
        synchronized (this) {
            if (from > seq) {
                throw McbException.invalid("cursor " + quote(cursor) + " is ahead of this host (latest event " + seq + ")");
            }
            long oldest = events.isEmpty() ? seq + 1 : events.peekFirst().seq();
            if (!events.isEmpty() && from < oldest - 1) {
                return new Page(List.of(), instance + ":" + seq, true, true,
                        "events before #" + oldest + " were trimmed from memory; re-read the region and continue "
                                + "from the new cursor.");
            }
            List<Event> out = new ArrayList<>();
            long last = from;
            boolean complete = true;
            for (Event ev : events) {
                if (ev.seq() <= from) {
                    continue;
                }
                if (region != null && !(region[0] <= ev.x() && ev.x() <= region[3] && region[1] <= ev.y()
                        && ev.y() <= region[4] && region[2] <= ev.z() && ev.z() <= region[5])) {
                    last = ev.seq();
                    continue;
                }
                if (out.size() >= lim) {
                    complete = false;
                    break;
                }
                out.add(ev);
                last = ev.seq();
            }
            return new Page(out, instance + ":" + last, false, complete, "");
        }
    }

    private static String quote(String s) {
        return "'" + (s.length() > 80 ? s.substring(0, 80) : s) + "'";
    }
}
