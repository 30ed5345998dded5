package dev.mcb.world.core;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * HTTP for the world protocol on the JDK's built-in server: {@code GET /health} and {@code POST /v1/rpc}.
 *
 * <p>Request checks, in order (each failure is a structured error, nothing executed; the same order as
 * the embedded host): body size (413), bearer token (401), JSON object with a string {@code method}
 * (400), method known (404), scope (403), automation on (403), implemented (400), params parse with
 * unknown fields named (400). Binds to a loopback address only and refuses non-loopback peers.
 */
public final class RpcServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger("mcb.world.rpc");
    private static final long DRAIN_LIMIT = 64L * 1024 * 1024;
    private static final java.util.Set<String> AUTOMATION = java.util.Set.of("automation_set_blocks", "automation_chat",
            "automation_chat_outbox");
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().alwaysPrintFieldsWithNoPresence()
            .omittingInsignificantWhitespace();
    private static final JsonFormat.Parser PARSER = JsonFormat.parser();

    private final WorldHostCore core;
    private final Tokens tokens;
    private final MethodTable methods;
    private final HttpServer server;
    private final ExecutorService pool;
    // the shared /health fields (docs/world-protocol.md): uptime since start, the last server-side error
    private final long startedNanos = System.nanoTime();
    private final String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    private volatile JsonObject lastError;

    public RpcServer(WorldHostCore core, Tokens tokens, MethodTable methods) throws IOException {
        this.core = core;
        this.tokens = tokens;
        this.methods = methods;
        HostConfig cfg = core.config();
        // slow-loris guard of the JDK server (seconds to read a request); set only if nobody chose one
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
            System.setProperty("sun.net.httpserver.maxReqTime", "60");
        }
        InetAddress addr = loopbackOnly(cfg.bindHost());
        this.server = HttpServer.create(new InetSocketAddress(addr, cfg.port()), 64);
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "mcb-world-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.pool = Executors.newFixedThreadPool(Math.max(1, cfg.httpThreads()), tf);
        server.setExecutor(pool);
        server.createContext("/health", this::health);
        server.createContext("/v1/rpc", this::rpc);
    }

    /** Resolve {@code host}; anything that is not a loopback address is refused. */
    public static InetAddress loopbackOnly(String host) throws IOException {
        InetAddress addr = InetAddress.getByName(host == null || host.isBlank() ? "127.0.0.1" : host);
        if (!addr.isLoopbackAddress()) {
            throw new IOException("the world protocol binds to loopback only; refusing " + host
                    + " (use 127.0.0.1; remote access is out of scope)");
        }
        return addr;
    }

    public void start() {
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public InetSocketAddress address() {
        return server.getAddress();
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }

    private boolean peerOk(HttpExchange ex) throws IOException {
        InetSocketAddress peer = ex.getRemoteAddress();
        if (peer == null || peer.getAddress() == null || !peer.getAddress().isLoopbackAddress()) {
            ex.sendResponseHeaders(403, -1);
            ex.close();
            return false;
        }
        return true;
    }

    private void health(HttpExchange ex) throws IOException {
        try (ex) {
            if (!peerOk(ex)) {
                return;
            }
            if (!"GET".equals(ex.getRequestMethod())) {
                send(ex, 405, "{\"detail\":\"Method Not Allowed\"}");
                return;
            }
            JsonObject body = JsonParser.parseString(PRINTER.print(core.health())).getAsJsonObject();
            body.addProperty("uptime_s", Math.round((System.nanoTime() - startedNanos) / 1e8) / 10.0);
            body.addProperty("started_at", startedAt);
            JsonObject last = lastError;
            body.add("last_error", last == null ? com.google.gson.JsonNull.INSTANCE : last.deepCopy());
            send(ex, 200, body.toString());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "health failed", e);
        }
    }

    private void rpc(HttpExchange ex) throws IOException {
        try (ex) {
            if (!peerOk(ex)) {
                return;
            }
            if (!"POST".equals(ex.getRequestMethod())) {
                send(ex, 405, "{\"detail\":\"Method Not Allowed\"}");
                return;
            }
            JsonElement requestId = null;
            try {
                byte[] raw = readBody(ex, core.config().maxBodyBytes());
                String principal = tokens.principalFor(Tokens.bearer(ex.getRequestHeaders().getFirst("Authorization")));
                if (principal == null) {
                    throw new McbException(ErrorCode.UNAUTHENTICATED,
                            "missing or unknown bearer token (Authorization: Bearer <token from the secrets folder>)");
                }
                JsonElement parsed;
                try {
                    JsonReader reader = new JsonReader(new StringReader(new String(raw, StandardCharsets.UTF_8)));
                    reader.setStrictness(Strictness.STRICT);
                    parsed = JsonParser.parseReader(reader);
                } catch (JsonParseException | IllegalStateException e) {
                    throw McbException.invalid("request body is not valid JSON: " + e.getMessage());
                }
                if (!parsed.isJsonObject()) {
                    throw McbException.invalid("request body must be a JSON object {method, params, requestId}");
                }
                JsonObject body = parsed.getAsJsonObject();
                JsonElement rid = body.get("requestId");
                if (rid != null && rid.isJsonPrimitive() && (rid.getAsJsonPrimitive().isString()
                        || rid.getAsJsonPrimitive().isNumber())) {
                    requestId = rid;
                } else {
                    requestId = new JsonPrimitive(UUID.randomUUID().toString().replace("-", ""));
                }
                JsonElement m = body.get("method");
                if (m == null || !m.isJsonPrimitive() || !m.getAsJsonPrimitive().isString() || m.getAsString().isEmpty()) {
                    throw McbException.invalid("missing \"method\" (a string naming a world-protocol method)");
                }
                String method = m.getAsString();
                MethodTable.Spec spec = methods.get(method);
                if (spec == null) {
                    String shown = method.length() > 80 ? method.substring(0, 80) : method;
                    JsonObject det = new JsonObject();
                    det.addProperty("method", shown);
                    throw new McbException(ErrorCode.NOT_FOUND, "unknown method '" + shown + "'; known: "
                            + String.join(", ", methods.all().keySet()), det);
                }
                if (!spec.scopes().contains(principal)) {
                    throw new McbException(ErrorCode.PERMISSION_DENIED, "the " + principal + " token may not call "
                            + method + " (allowed: " + String.join(", ", spec.scopes()) + ")");
                }
                if (AUTOMATION.contains(method) && !core.config().allowLocalAutomation()) {
                    throw new McbException(ErrorCode.PERMISSION_DENIED, method + " needs local automation, which is off; "
                            + "enable allow-local-automation (MCB_ALLOW_LOCAL_AUTOMATION=1 for the test host)");
                }
                if (!spec.implemented() || spec.params() == null || !core.handles(method)) {
                    throw McbException.invalid(method + " is not implemented yet by the Java world host");
                }
                JsonElement params = body.get("params");
                if (params != null && !params.isJsonNull() && !params.isJsonObject()) {
                    throw McbException.invalid(method + ": params must be a JSON object");
                }
                Message.Builder b = WorldHostCore.paramsBuilder(spec.params());
                if (b == null) {
                    throw McbException.invalid(method + " is not implemented yet by the Java world host");
                }
                if (params != null && params.isJsonObject()) {
                    try {
                        PARSER.merge(params.toString(), b);
                    } catch (InvalidProtocolBufferException e) {
                        throw McbException.invalid(parseError(e, method));
                    }
                }
                Message result = core.call(method, b.build());
                JsonObject out = new JsonObject();
                out.addProperty("ok", true);
                out.add("result", JsonParser.parseString(PRINTER.print(result)));
                out.add("requestId", requestId);
                send(ex, 200, out.toString());
            } catch (McbException e) {
                record(e);
                sendError(ex, e, requestId);
            } catch (RuntimeException e) {
                LOG.log(Level.SEVERE, "internal error in /v1/rpc", e);
                McbException internal = new McbException(ErrorCode.INTERNAL, "internal error ("
                        + e.getClass().getSimpleName() + "); see the world host log");
                record(internal);
                sendError(ex, internal, requestId);
            }
        } catch (IOException e) {
            LOG.log(Level.FINE, "client went away", e);
        }
    }

    /** Remember a server-side failure for /health: code, the host's own message (no exception text), when. */
    private void record(McbException e) {
        if (e.code != ErrorCode.INTERNAL && e.code != ErrorCode.UNAVAILABLE && e.code != ErrorCode.CAMERA_UNAVAILABLE) {
            return;
        }
        String msg = String.valueOf(e.getMessage()).replaceAll("\\s+", " ");
        JsonObject err = new JsonObject();
        err.addProperty("code", e.code.wire);
        err.addProperty("message", msg.length() > 200 ? msg.substring(0, 199) + "\u2026" : msg);
        err.addProperty("at", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        lastError = err;
    }

    static String parseError(InvalidProtocolBufferException e, String method) {
        String text = String.valueOf(e.getMessage());
        String marker = "Cannot find field: ";
        int i = text.indexOf(marker);
        if (i >= 0) {
            String rest = text.substring(i + marker.length());
            int sp = rest.indexOf(' ');
            return method + ": unknown params field '" + (sp > 0 ? rest.substring(0, sp) : rest) + "'";
        }
        return method + ": invalid params: " + text;
    }

    private static byte[] readBody(HttpExchange ex, int max) throws IOException {
        String declared = ex.getRequestHeaders().getFirst("Content-Length");
        InputStream in = ex.getRequestBody();
        if (declared != null && declared.chars().allMatch(Character::isDigit) && !declared.isEmpty()
                && Long.parseLong(declared) > max) {
            drain(in);
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "request body of " + declared + " bytes exceeds " + max + " bytes");
        }
        byte[] buf = in.readNBytes(max + 1);
        if (buf.length > max) {
            drain(in);
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "request body exceeds " + max + " bytes");
        }
        return buf;
    }

    /** Read and drop what the client still sends (bounded), so it can read our 413 answer. */
    private static void drain(InputStream in) throws IOException {
        byte[] sink = new byte[64 * 1024];
        long total = 0;
        int r;
        while (total < DRAIN_LIMIT && (r = in.read(sink)) > 0) {
            total += r;
        }
    }

    private static void sendError(HttpExchange ex, McbException e, JsonElement requestId) throws IOException {
        JsonObject out = new JsonObject();
        out.addProperty("ok", false);
        out.add("error", e.toJson());
        out.add("requestId", requestId == null ? com.google.gson.JsonNull.INSTANCE : requestId);
        send(ex, e.code.httpStatus, out.toString());
    }

    private static void send(HttpExchange ex, int status, String json) throws IOException {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(b);
        }
    }
}
