package dev.mcb.world.core.port;

/**
 * Static facts about the world. {@code loadedArea} is {minCx, minCz, maxCx, maxCz} of the existing
 * chunks, or null when unknown.
 */
public record WorldDescriptor(String worldUuid, String worldName, int epoch, int dataVersion,
                              String minecraftVersion, int minY, int maxY,
                              String registryVersion, int registryDataVersion, int registryBlockCount,
                              String registrySha256, int[] loadedArea) {
}
