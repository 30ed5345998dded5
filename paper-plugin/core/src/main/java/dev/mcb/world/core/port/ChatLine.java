package dev.mcb.world.core.port;

/**
 * One line for a player, with what it is, so an adapter can style it (Paper: an Adventure component with a
 * colour per kind) while the test host and the outbox keep the plain {@code text}.
 */
public record ChatLine(String text, Kind kind) {
    public enum Kind {
        /** an answer: the final lines of a reply, results of local commands */
        INFO,
        /** an interim reply line (stages such as "applying... 50%") */
        PROGRESS,
        /** an error line ({@code chat_reply.error}, a refused command) */
        ERROR,
        /** something the host says by itself (e.g. a request failed when the bridge restarted) */
        NOTICE
    }

    public ChatLine {
        if (text == null || kind == null) {
            throw new IllegalArgumentException("a chat line needs text and a kind");
        }
    }

    public static ChatLine info(String text) {
        return new ChatLine(text, Kind.INFO);
    }

    public static ChatLine error(String text) {
        return new ChatLine(text, Kind.ERROR);
    }
}
