package dev.mcb.camera.core.headless;

import dev.mcb.camera.core.AllowedAreas;
import dev.mcb.camera.core.Backoff;
import dev.mcb.camera.core.CaptureService;
import dev.mcb.camera.core.LinkClient;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The headless camera client as a process (CI, benchmarks, a smoke test of a worker's link):
 *
 * <pre>
 * java -jar camera-mod/core/target/mcb-camera-headless.jar --url ws://127.0.0.1:8766/ --key-file KEYFILE
 *      [--world-url http://127.0.0.1:8765 --world-token-file FILE] (--area x0,y0,z0,x1,y1,z1 ... | --anywhere)
 *      [--lag-revisions N] [--load-delay-ms MS] [--frame-ms MS] [--ground-y Y]
 * </pre>
 *
 * Prints {@code CONNECTED} each time the worker welcomes it. Keys are read from files, never
 * printed.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws Exception {
        String url = null, key = null, worldUrl = null, worldToken = null;
        List<AllowedAreas.Area> areas = new ArrayList<>();
        boolean anywhere = false;
        long lag = 0, loadDelay = 30, frameMs = 16;
        double groundY = 64;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--url" -> url = args[++i];
                case "--key-file" -> key = read(args[++i]);
                case "--world-url" -> worldUrl = args[++i];
                case "--world-token-file" -> worldToken = read(args[++i]);
                case "--area" -> areas.add(AllowedAreas.Area.parse(args[++i]));
                case "--anywhere" -> anywhere = true;
                case "--lag-revisions" -> lag = Long.parseLong(args[++i]);
                case "--load-delay-ms" -> loadDelay = Long.parseLong(args[++i]);
                case "--frame-ms" -> frameMs = Long.parseLong(args[++i]);
                case "--ground-y" -> groundY = Double.parseDouble(args[++i]);
                default -> usage("unknown argument " + a);
            }
        }
        if (url == null || key == null) {
            usage("--url and --key-file are required");
        }
        if (!anywhere && areas.isEmpty()) {
            usage("say where the camera may stand: --area x0,y0,z0,x1,y1,z1 (repeatable) or --anywhere");
        }
        AllowedAreas allowed = anywhere ? AllowedAreas.ANYWHERE : AllowedAreas.of(areas);
        HeadlessPlatform platform = new HeadlessPlatform(groundY, worldUrl, worldToken, lag, loadDelay, frameMs,
                System::currentTimeMillis);
        CaptureService captures = new CaptureService(platform, allowed, System::currentTimeMillis);
        CountDownLatch done = new CountDownLatch(1);
        try (LinkClient client = new LinkClient(URI.create(url), key, platform, captures,
                new Backoff(200, 5_000, System.nanoTime()), state -> {
                    System.out.println(state.name());
                    System.out.flush();
                })) {
            Runtime.getRuntime().addShutdownHook(new Thread(done::countDown));
            client.start();
            done.await();
        }
    }

    private static String read(String file) throws IOException {
        return Files.readString(Path.of(file)).strip();
    }

    private static void usage(String why) {
        System.err.println("mcb-camera-headless: " + why);
        System.exit(2);
    }
}
