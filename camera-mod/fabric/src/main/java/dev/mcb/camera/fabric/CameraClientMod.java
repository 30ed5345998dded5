package dev.mcb.camera.fabric;

import dev.mcb.camera.core.AllowedAreas;
import dev.mcb.camera.core.Backoff;
import dev.mcb.camera.core.CaptureService;
import dev.mcb.camera.core.LinkClient;
import java.net.URI;
import net.fabricmc.api.ClientModInitializer;
import net.fabricmc.fabric.api.client.event.lifecycle.v1.ClientChunkEvents;
import net.fabricmc.fabric.api.client.rendering.v1.world.WorldRenderEvents;
import net.fabricmc.loader.api.FabricLoader;
import net.minecraft.client.Minecraft;

/**
 * NOT COMPILED HERE (camera-mod/README.md): the Fabric entry point. It reads
 * {@code config/mcb-camera.json}, wires the game's events to {@link FabricPlatform} and starts
 * the core's {@link LinkClient}; every rule (link, pose validation, readiness, encoding,
 * reconnect) is in camera-mod/core.
 */
public final class CameraClientMod implements ClientModInitializer {
    @Override
    public void onInitializeClient() {
        CameraConfig cfg = CameraConfig.load(FabricLoader.getInstance().getConfigDir().resolve("mcb-camera.json"));
        if (cfg == null) {
            return; // no config: the mod stays idle (README: how to configure it)
        }
        FabricPlatform platform = new FabricPlatform(Minecraft.getInstance());
        ClientChunkEvents.CHUNK_LOAD.register((level, chunk) -> platform.chunkLoaded(chunk.getPos().x, chunk.getPos().z));
        ClientChunkEvents.CHUNK_UNLOAD.register((level, chunk) -> platform.chunkUnloaded(chunk.getPos().x, chunk.getPos().z));
        WorldRenderEvents.END_MAIN.register(context -> platform.frameDrawn());
        AllowedAreas areas = cfg.areas().isEmpty() ? AllowedAreas.NOWHERE : AllowedAreas.of(cfg.areas());
        CaptureService captures = new CaptureService(platform, areas, System::currentTimeMillis);
        LinkClient link = new LinkClient(URI.create(cfg.url()), cfg.key(), platform, captures,
                new Backoff(1_000, 30_000, System.nanoTime()), state -> { });
        link.start();
    }
}
