package dev.mcb.world.core.port;

/** Messages to players (Paper: Player#sendMessage on the server thread). */
public interface ChatSink {
    /** Plain text (the test host prints or drops it). */
    void tell(String playerId, String text);

    /** A structured line; adapters that style lines override this (Paper: components). */
    default void tell(String playerId, ChatLine line) {
        tell(playerId, line.text());
    }
}
