package dev.mcb.camera.core;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The client side of the camera link {@value #PROTOCOL} (docs/camera-link.md): connects to the
 * camera worker with {@code Authorization: Bearer <link key>}, says {@code hello}, waits for
 * {@code welcome}, then answers each {@code capture} with {@code captured} + one binary frame
 * or {@code failed}. Reconnects with {@link Backoff} whenever the link closes or cannot open.
 * Captures run one at a time on their own thread; sends are serialised (the JDK WebSocket
 * allows one outstanding send).
 */
public final class LinkClient implements AutoCloseable {
    public static final String PROTOCOL = "mcb.camera-link.v1";
    public static final String MOD_VERSION = "0.1.0";
    private static final Logger LOG = Logger.getLogger("mcb.camera.link");
    private static final Gson GSON = new Gson();

    public enum State { CONNECTING, CONNECTED, STOPPED }

    private final URI uri;
    private final String key;
    private final CameraPlatform platform;
    private final CaptureService captures;
    private final Backoff backoff;
    private final Consumer<State> onState;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "mcb-camera-link"));
    private final ExecutorService captureThread = Executors.newSingleThreadExecutor(r -> daemon(r, "mcb-camera-capture"));
    private volatile WebSocket ws;
    private volatile boolean welcomed;
    private volatile boolean stopped;
    private CompletableFuture<?> sendChain = CompletableFuture.completedFuture(null);
    private int connects;

    public LinkClient(URI uri, String key, CameraPlatform platform, CaptureService captures, Backoff backoff,
                      Consumer<State> onState) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("the camera link needs its key (the worker's <secrets>/camera-link.token)");
        }
        this.uri = uri;
        this.key = key.strip();
        this.platform = platform;
        this.captures = captures;
        this.backoff = backoff;
        this.onState = onState;
    }

    public void start() {
        scheduler.execute(this::connect);
    }

    public synchronized int connects() {
        return connects;
    }

    public boolean connected() {
        return welcomed;
    }

    @Override
    public void close() {
        stopped = true;
        WebSocket w = ws;
        if (w != null) {
            w.sendClose(WebSocket.NORMAL_CLOSURE, "camera client stopping");
        }
        scheduler.shutdownNow();
        captureThread.shutdownNow();
        onState.accept(State.STOPPED);
    }

    private void connect() {
        if (stopped) {
            return;
        }
        onState.accept(State.CONNECTING);
        http.newWebSocketBuilder()
                .header("Authorization", "Bearer " + key)
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(uri, new Listener())
                .whenComplete((w, err) -> {
                    if (err != null) {
                        Throwable c = err.getCause() != null ? err.getCause() : err;
                        if (c instanceof WebSocketHandshakeException h && h.getResponse().statusCode() == 401) {
                            LOG.warning("camera link: the worker refused the link key (401); check camera-link.token");
                        } else {
                            LOG.info("camera link: cannot connect to " + uri + " (" + c.getClass().getSimpleName() + ")");
                        }
                        retry();
                        return;
                    }
                    ws = w;
                    synchronized (this) {
                        connects++;
                    }
                    Map<String, Object> hello = new LinkedHashMap<>();
                    hello.put("type", "hello");
                    hello.put("protocol", PROTOCOL);
                    hello.put("client", platform.clientName());
                    hello.put("modVersion", MOD_VERSION);
                    hello.put("minecraftVersion", platform.minecraftVersion());
                    sendText(hello);
                });
    }

    private void retry() {
        welcomed = false;
        ws = null;
        if (stopped) {
            return;
        }
        long d = backoff.nextDelayMs();
        LOG.fine("camera link: reconnecting in " + d + " ms");
        try {
            scheduler.schedule(this::connect, d, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException ignored) {
            // stopping
        }
    }

    private synchronized CompletableFuture<?> send(java.util.function.Function<WebSocket, CompletableFuture<WebSocket>> op) {
        WebSocket w = ws;
        if (w == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("the link is closed"));
        }
        sendChain = sendChain.handle((v, e) -> null).thenCompose(v -> op.apply(w));
        return sendChain;
    }

    private CompletableFuture<?> sendText(Map<String, Object> msg) {
        String s = GSON.toJson(msg);
        return send(w -> w.sendText(s, true));
    }

    private void onMessage(String text) {
        JsonObject m;
        try {
            m = JsonParser.parseString(text).getAsJsonObject();
        } catch (RuntimeException e) {
            LOG.warning("camera link: ignoring a message that is not a JSON object");
            return;
        }
        String type = m.has("type") ? m.get("type").getAsString() : "";
        if (type.equals("welcome")) {
            welcomed = true;
            backoff.reset();
            onState.accept(State.CONNECTED);
        } else if (type.equals("capture")) {
            captureThread.execute(() -> runCapture(m));
        }
    }

    private void runCapture(JsonObject m) {
        String id = m.has("id") && m.get("id").isJsonPrimitive() ? m.get("id").getAsString() : "";
        try {
            CaptureJob job = CaptureJob.parse(m);
            CaptureService.Result r = captures.capture(job, stage -> sendText(Map.of("type", "progress", "id", id, "stage", stage)));
            Map<String, Object> head = new LinkedHashMap<>();
            head.put("type", "captured");
            head.put("id", id);
            head.put("mimeType", r.mimeType());
            head.put("bytes", r.data().length);
            head.put("sha256", r.sha256());
            head.put("metadata", r.metadata());
            sendText(head);
            send(w -> w.sendBinary(ByteBuffer.wrap(r.data()), true));
        } catch (CaptureFailure f) {
            Map<String, Object> failed = new LinkedHashMap<>();
            failed.put("type", "failed");
            failed.put("id", id);
            failed.put("code", f.code());
            failed.put("message", f.getMessage());
            failed.put("details", f.details());
            sendText(failed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "camera link: the capture failed", e);
            sendText(Map.of("type", "failed", "id", id, "code", "camera_unavailable",
                    "message", "the camera client failed while capturing (" + e.getClass().getSimpleName() + ")",
                    "details", Map.of()));
        }
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                String s = text.toString();
                text.setLength(0);
                onMessage(s);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            webSocket.request(1); // the worker sends no binary frames
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            LOG.info("camera link closed by the worker: " + statusCode + " " + reason);
            retry();
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            LOG.info("camera link error: " + error.getClass().getSimpleName());
            retry();
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
