package dev.mcb.world.core.port;

/** Messages to players (Paper: Player#sendMessage on the server thread). */
public interface ChatSink {
    void tell(String playerId, String text);
}
