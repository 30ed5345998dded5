package dev.mcb.world.core;

import java.util.List;

/**
 * What caused an environment change: the closed vocabulary of the world protocol's {@code BlockEvent.cause}
 * (docs/world-protocol.md, "Causes"; the same words as mcb_common/causes.py). The Paper adapter maps each
 * Bukkit event to one (BlockListener); events of other sources have none ({@code ""}).
 */
public final class Cause {
    public static final String EXPLOSION = "explosion";
    public static final String FIRE = "fire";
    public static final String FADE = "fade";
    public static final String DECAY = "decay";
    public static final String FLOW = "flow";
    public static final String GROWTH = "growth";
    public static final String FORM = "form";
    public static final String PISTON = "piston";
    public static final String OTHER = "other";
    public static final List<String> ALL = List.of(EXPLOSION, FIRE, FADE, DECAY, FLOW, GROWTH, FORM, PISTON, OTHER);

    private Cause() {
    }

    /** The cause an event of {@code source} carries: environment events always have one ("" reads as other). */
    static String of(Source source, String cause) {
        if (source != Source.ENVIRONMENT) {
            return "";
        }
        return cause == null || cause.isEmpty() ? OTHER : cause;
    }

    /** {@code cause} if it is in the vocabulary ("" = other), else invalid_request naming the words. */
    static String check(String cause) {
        if (cause.isEmpty()) {
            return OTHER;
        }
        if (!ALL.contains(cause)) {
            throw McbException.invalid("cause '" + (cause.length() > 40 ? cause.substring(0, 40) : cause)
                    + "' is unknown; use one of " + String.join(", ", ALL));
        }
        return cause;
    }

    /** A Java Edition player name (1..16 of A-Z a-z 0-9 _), or empty; else invalid_request. */
    static String checkPlayerName(String name) {
        if (!name.isEmpty() && !name.matches("[A-Za-z0-9_]{1,16}")) {
            throw McbException.invalid("player_name '" + (name.length() > 40 ? name.substring(0, 40) : name)
                    + "' is not a player name (1 to 16 letters, digits or _)");
        }
        return name;
    }
}
