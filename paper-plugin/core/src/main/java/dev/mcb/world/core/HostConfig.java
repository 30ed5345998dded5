package dev.mcb.world.core;

import java.time.Duration;

/**
 * Settings of one world host. {@code bindHost} must be a loopback address (the world protocol is
 * loopback only; put a TLS proxy in front for anything else — not supported here).
 */
public record HostConfig(String service, String version, String bindHost, int port, boolean allowLocalAutomation,
                         int maxBodyBytes, Duration callTimeout, int httpThreads) {
    public static final int MAX_BODY = 8 * 1024 * 1024;

    public static HostConfig defaults(String service, String version, int port, boolean automation) {
        return new HostConfig(service, version, "127.0.0.1", port, automation, MAX_BODY, Duration.ofSeconds(30), 4);
    }
}
