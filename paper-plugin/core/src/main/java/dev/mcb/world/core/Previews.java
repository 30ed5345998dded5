package dev.mcb.world.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * In-game plan previews (issue 32 item 2; docs/chat.md, *Previews*): the plan a player asked for, shown to
 * that player alone as client-side blocks. Nothing here writes to the world: the {@link Port} sends block
 * changes to one client (Paper: {@code Player#sendBlockChange}) and restores that client's view from the
 * real blocks. The bridge hands the plan over ({@code chat_preview}); {@code /ai preview} hides and shows it;
 * it is cleared (the view restored) when the bridge says the plan was applied or rejected, when it expires,
 * and when a new bridge takes over the chat. Every method runs on the server thread.
 *
 * <p>The client forgets a fake block when the server sends that position again (a real change there: a
 * player's edit stays a real edit, and a conflict for the plan as usual) or the chunk again (it left the
 * view); {@link #resend} shows the preview again in a chunk the player receives anew.
 */
public final class Previews {
    /** At most this many entries per player (the client gets one packet per block). */
    public static final int MAX_BLOCKS = 32_768;

    /** One block of a preview: a position and the block state the plan writes there. */
    public record Block(int x, int y, int z, String state) {
    }

    /** The player's client, as the adapter reaches it (never the world). */
    public interface Port {
        /** A port for hosts without players: nothing can be shown. */
        Port NONE = new Port() {
            @Override
            public boolean online(String playerId) {
                return false;
            }

            @Override
            public void show(String playerId, List<Block> blocks) {
            }

            @Override
            public void restore(String playerId, List<Block> blocks) {
            }

            @Override
            public void tell(String playerId, String text) {
            }
        };

        /** Whether the player is online in the host's world (the only world a preview is shown in). */
        boolean online(String playerId);

        /** Send these block states to the player's client only; throws IllegalArgumentException for a bad state. */
        void show(String playerId, List<Block> blocks);

        /** Send the real blocks at these positions to the player's client. */
        void restore(String playerId, List<Block> blocks);

        /** A notice line to the player. */
        void tell(String playerId, String text);
    }

    /** A player's preview: the plan, its blocks, its expiry, and whether the client shows it now. */
    public record Preview(String planId, List<Block> blocks, long expiresAtMillis, boolean shown) {
    }

    private final Port port;
    private final LongSupplier clock;
    private final Map<String, Preview> byPlayer = new HashMap<>();

    public Previews(Port port, LongSupplier clock) {
        this.port = port;
        this.clock = clock;
    }

    public boolean supported() {
        return port != Port.NONE;
    }

    public boolean online(String playerId) {
        return port.online(playerId);
    }

    public synchronized Preview get(String playerId) {
        return byPlayer.get(playerId);
    }

    /**
     * The player's preview becomes {@code blocks} of {@code planId} (an earlier one is cleared first); shown at
     * once when {@code show} and the player is online. Blocks are validated by the port when shown.
     */
    public synchronized Preview set(String playerId, String planId, List<Block> blocks, long expiresAtMillis,
                                    boolean show) {
        if (blocks.size() > MAX_BLOCKS) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "a preview shows at most " + MAX_BLOCKS
                    + " blocks; this plan has " + blocks.size() + " (see it with camera_capture and its plan_id)",
                    Json.obj("limit", "preview_blocks", "max", MAX_BLOCKS));
        }
        clear(playerId, "");
        boolean shown = show && port.online(playerId);
        if (shown) {
            try {
                port.show(playerId, blocks);
            } catch (IllegalArgumentException e) {
                port.restore(playerId, blocks); // whatever got through before the bad state
                throw McbException.invalid("a preview block state is not valid here: " + e.getMessage());
            }
        }
        Preview p = new Preview(planId, List.copyOf(blocks), expiresAtMillis, shown);
        byPlayer.put(playerId, p);
        return p;
    }

    /** Hide or show the player's preview ({@code /ai preview}); empty when there is none. */
    public synchronized java.util.Optional<Preview> toggle(String playerId) {
        Preview p = byPlayer.get(playerId);
        if (p == null) {
            return java.util.Optional.empty();
        }
        if (p.shown()) {
            port.restore(playerId, p.blocks());
        } else {
            port.show(playerId, p.blocks());
        }
        Preview next = new Preview(p.planId(), p.blocks(), p.expiresAtMillis(), !p.shown());
        byPlayer.put(playerId, next);
        return java.util.Optional.of(next);
    }

    /** Clear the player's preview (of {@code planId}, or any when empty): the client sees the real blocks. */
    public synchronized boolean clear(String playerId, String planId) {
        Preview p = byPlayer.get(playerId);
        if (p == null || (!planId.isEmpty() && !planId.equals(p.planId()))) {
            return false;
        }
        byPlayer.remove(playerId);
        if (p.shown() && port.online(playerId)) {
            port.restore(playerId, p.blocks());
        }
        return true;
    }

    /** Every preview cleared (a new bridge: the old one's plans are no longer offered). */
    public synchronized void clearAll(String why) {
        for (String player : new ArrayList<>(byPlayer.keySet())) {
            if (clear(player, "")) {
                port.tell(player, "the plan preview was cleared: " + why);
            }
        }
    }

    /** Expired previews cleared (called every tick). */
    public synchronized void expire() {
        if (byPlayer.isEmpty()) {
            return;
        }
        long now = clock.getAsLong();
        for (Map.Entry<String, Preview> e : new ArrayList<>(byPlayer.entrySet())) {
            if (e.getValue().expiresAtMillis() > 0 && e.getValue().expiresAtMillis() <= now) {
                clear(e.getKey(), "");
                port.tell(e.getKey(), "the plan " + e.getValue().planId() + " expired; its preview is gone. "
                        + "Ask again to prepare it anew.");
            }
        }
    }

    /** The player received chunk (cx, cz) anew (it forgot the fake blocks there): show them again. */
    public synchronized void resend(String playerId, int cx, int cz) {
        Preview p = byPlayer.get(playerId);
        if (p == null || !p.shown()) {
            return;
        }
        List<Block> in = new ArrayList<>();
        for (Block b : p.blocks()) {
            if (b.x() >> 4 == cx && b.z() >> 4 == cz) {
                in.add(b);
            }
        }
        if (!in.isEmpty()) {
            port.show(playerId, in);
        }
    }

    /** The player left: nothing to restore on a client that is gone; the preview is kept hidden. */
    public synchronized void left(String playerId) {
        Preview p = byPlayer.get(playerId);
        if (p != null && p.shown()) {
            byPlayer.put(playerId, new Preview(p.planId(), p.blocks(), p.expiresAtMillis(), false));
        }
    }

    private static final class Json {
        static com.google.gson.JsonObject obj(String k1, String v1, String k2, int v2) {
            com.google.gson.JsonObject o = new com.google.gson.JsonObject();
            o.addProperty(k1, v1);
            o.addProperty(k2, v2);
            return o;
        }
    }
}
