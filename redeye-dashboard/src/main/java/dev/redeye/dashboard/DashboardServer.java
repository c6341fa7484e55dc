package dev.redeye.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.api.StoreException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's HTTP server (Jetty): the page and its assets from this jar, its live events over
 * Server-Sent Events, the Hystrix stream, and the operator's actions. Everything a browser sees comes from one
 * {@link FleetView}: a browser costs the store nothing.
 *
 * <table>
 * <caption>Resources</caption>
 * <tr><th>path</th><th>what</th></tr>
 * <tr><td>{@code GET /}</td><td>the page ({@code assets/index.html}; script and style from {@code /assets/},
 * nothing from elsewhere: {@code Content-Security-Policy: default-src 'self'})</td></tr>
 * <tr><td>{@code GET /events}</td><td>SSE: {@code snapshot} first (every tile, the last hour's transitions, the
 * store's status; also after a reconnect), then {@code tiles}, {@code transition}, {@code removed} and
 * {@code store} as they happen ({@link FleetView.Viewer})</td></tr>
 * <tr><td>{@code GET /api/state}</td><td>the same snapshot as one JSON document</td></tr>
 * <tr><td>{@code GET /hystrix.stream}</td><td>SSE: every {@code delay} ms (default 500, at least 100) one
 * {@code HystrixCommand} object per operation ({@link HystrixFormat})</td></tr>
 * <tr><td>{@code POST /api/action}</td><td>{@code {"action": "force-open" | "force-half-open" | "reset",
 * "operation": NAME}} with the header {@code X-Redeye-Token}: 401 without it, 403 with a wrong one or when
 * read-only, 503 when the store fails</td></tr>
 * </table>
 *
 * <p>At most {@value #MAX_STREAMS} event streams at once (503 beyond). Each stream has a bounded queue: a
 * browser that falls {@value #QUEUE_CAPACITY} events behind is disconnected, and its reconnect replays the
 * current states. {@link #close()} stops the server (not the view).
 */
public final class DashboardServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DashboardServer.class);
    /** The header that carries the operator's token. */
    public static final String TOKEN_HEADER = "X-Redeye-Token";
    /** The most event streams (page and Hystrix) served at once. */
    static final int MAX_STREAMS = 64;
    /** The most events queued for one stream before it is dropped. */
    static final int QUEUE_CAPACITY = 20_000;
    private static final long PING_MILLIS = 10_000;

    private final FleetView view;
    private final byte[] token;
    private final boolean readOnly;
    private final Server server;
    private final ServerConnector connector;
    private final AtomicInteger streams = new AtomicInteger();
    private final ObjectMapper json = new ObjectMapper();
    private volatile boolean closed;

    private DashboardServer(FleetView view, String bind, int port, String token, boolean readOnly) {
        this.view = view;
        this.readOnly = readOnly;
        this.token = readOnly ? null : token.getBytes(StandardCharsets.UTF_8);
        QueuedThreadPool threads = new QueuedThreadPool(MAX_STREAMS + 16, 4);
        threads.setName("redeye-dashboard-http");
        threads.setDaemon(true);
        this.server = new Server(threads);
        this.connector = new ServerConnector(server);
        connector.setHost(bind);
        connector.setPort(port);
        server.addConnector(connector);
        server.setHandler(new Routes());
    }

    /**
     * Starts a server for {@code view} on {@code bind:port} (port 0: a free one).
     *
     * @param token    the token actions need; ignored when {@code readOnly}
     * @param readOnly whether actions are refused whatever the token
     * @throws IllegalArgumentException if the token is blank while actions are allowed
     * @throws UncheckedIOException     if the server cannot listen there
     */
    public static DashboardServer start(FleetView view, String bind, int port, String token, boolean readOnly) {
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(bind, "bind");
        if (!readOnly && (token == null || token.isBlank())) {
            throw new IllegalArgumentException("a dashboard that allows actions needs a token");
        }
        DashboardServer s = new DashboardServer(view, bind, port, token, readOnly);
        try {
            s.server.start();
        } catch (Exception e) {
            s.close();
            throw new UncheckedIOException(new IOException("cannot serve the dashboard on " + bind + ":" + port
                    + ": " + e.getMessage(), e));
        }
        return s;
    }

    /** A new random token: 128 bits, hex. */
    public static String newToken() {
        byte[] b = new byte[16];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The port the server listens on. */
    public int port() {
        return connector.getLocalPort();
    }

    /** The address the server listens on, as {@code http://host:port/}. */
    public String url() {
        String host = connector.getHost() == null ? "127.0.0.1" : connector.getHost();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + "/";
    }

    /** The event streams open now (page and Hystrix). */
    public int openStreams() {
        return streams.get();
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.stop();
        } catch (Exception e) {
            LOG.debug("stopping the dashboard server", e);
        }
    }

    /** The routes: one handler, dispatching on the path. */
    private final class Routes extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            String path = Request.getPathInContext(request);
            String method = request.getMethod();
            response.getHeaders().put("X-Content-Type-Options", "nosniff");
            if (path.equals("/api/action")) {
                if (!HttpMethod.POST.is(method)) {
                    return error(request, response, callback, HttpStatus.METHOD_NOT_ALLOWED_405, "use POST");
                }
                return action(request, response, callback);
            }
            if (!HttpMethod.GET.is(method) && !HttpMethod.HEAD.is(method)) {
                return error(request, response, callback, HttpStatus.METHOD_NOT_ALLOWED_405, "use GET");
            }
            switch (path) {
                case "/", "/index.html" -> asset("index.html", response, callback);
                case "/assets/dashboard.js" -> asset("dashboard.js", response, callback);
                case "/assets/dashboard.css" -> asset("dashboard.css", response, callback);
                case "/api/state" -> sendJson(response, callback, HttpStatus.OK_200, state());
                case "/events" -> events(request, response, callback);
                case "/hystrix.stream" -> hystrix(request, response, callback);
                default -> {
                    return error(request, response, callback, HttpStatus.NOT_FOUND_404, "no such resource");
                }
            }
            return true;
        }
    }

    private Map<String, Object> state() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tiles", view.tiles());
        m.put("timeline", view.timeline());
        m.put("store", view.storeStatus());
        m.put("readOnly", readOnly);
        return m;
    }

    private void asset(String name, Response response, Callback callback) {
        DashboardAssets.Asset a = DashboardAssets.get(name, readOnly, true).orElseThrow();
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, a.contentType());
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        response.getHeaders().put("Content-Security-Policy", DashboardAssets.CONTENT_SECURITY_POLICY);
        response.write(true, ByteBuffer.wrap(a.body()), callback);
    }

    private boolean action(Request request, Response response, Callback callback) throws IOException {
        if (readOnly) {
            return error(request, response, callback, HttpStatus.FORBIDDEN_403,
                    "this dashboard is read-only (--read-only): no action is allowed");
        }
        String given = request.getHeaders().get(TOKEN_HEADER);
        if (given == null || given.isBlank()) {
            return error(request, response, callback, HttpStatus.UNAUTHORIZED_401,
                    "missing " + TOKEN_HEADER + ": give the token the dashboard printed at start");
        }
        if (!MessageDigest.isEqual(token, given.trim().getBytes(StandardCharsets.UTF_8))) {
            LOG.warn("refused an action with a wrong token from {}", Request.getRemoteAddr(request));
            return error(request, response, callback, HttpStatus.FORBIDDEN_403, "wrong token");
        }
        FleetView.Action act;
        String op;
        try {
            JsonNode body = json.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
            if (body == null || !body.path("operation").isTextual() || !body.path("action").isTextual()) {
                throw new IllegalArgumentException("expected {\"action\": ..., \"operation\": ...}");
            }
            act = FleetView.Action.of(body.get("action").asText());
            op = body.get("operation").asText();
        } catch (IOException | IllegalArgumentException e) {
            return error(request, response, callback, HttpStatus.BAD_REQUEST_400, e.getMessage());
        }
        try {
            view.act(act, op);
        } catch (StoreException e) {
            return error(request, response, callback, HttpStatus.SERVICE_UNAVAILABLE_503,
                    "the store failed: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            return error(request, response, callback, HttpStatus.BAD_REQUEST_400, e.getMessage());
        }
        LOG.info("{} {} from {}", act.wireName(), op, Request.getRemoteAddr(request));
        sendJson(response, callback, HttpStatus.OK_200, Map.of("ok", true, "action", act.wireName(),
                "operation", op));
        return true;
    }

    private boolean error(Request request, Response response, Callback callback, int status, String message) {
        sendJson(response, callback, status, Map.of("error", message == null ? "" : message));
        return true;
    }

    private void sendJson(Response response, Callback callback, int status, Object body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json; charset=utf-8");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        response.write(true, ByteBuffer.wrap(view.json(body).getBytes(StandardCharsets.UTF_8)), callback);
    }

    /** Starts an event stream, or answers 503 when {@link #MAX_STREAMS} are open; false if refused. */
    private boolean openStream(Request request, Response response, Callback callback) {
        if (streams.incrementAndGet() > MAX_STREAMS) {
            streams.decrementAndGet();
            error(request, response, callback, HttpStatus.SERVICE_UNAVAILABLE_503, "too many event streams");
            return false;
        }
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        response.getHeaders().put("X-Accel-Buffering", "no");
        return true;
    }

    /** The page's stream: blocks this request's thread until the browser goes or the server stops. */
    private void events(Request request, Response response, Callback callback) {
        if (!openStream(request, response, callback)) {
            return;
        }
        BlockingQueue<String> queue = new LinkedBlockingQueue<>(QUEUE_CAPACITY);
        AtomicInteger dropped = new AtomicInteger();
        FleetView.Viewer viewer = (event, data) -> {
            if (!queue.offer("event: " + event + "\ndata: " + data + "\n\n")) {
                dropped.incrementAndGet();
            }
        };
        AutoCloseable membership = null;
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
            out.write("retry: 1000\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            membership = view.join(viewer);
            while (!closed && dropped.get() == 0) {
                String frame = queue.poll(PING_MILLIS, TimeUnit.MILLISECONDS);
                if (frame == null) {
                    out.write(": ping\n\n".getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    continue;
                }
                StringBuilder batch = new StringBuilder(frame);
                for (String more = queue.poll(); more != null && batch.length() < 1 << 20; more = queue.poll()) {
                    batch.append(more);
                }
                out.write(batch.toString().getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            callback.succeeded();
        } catch (IOException | RuntimeException e) {
            LOG.debug("an event stream ended", e);
            callback.failed(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            callback.failed(e);
        } finally {
            quietly(membership);
            streams.decrementAndGet();
        }
    }

    /** The Hystrix stream: every {@code delay} ms one object per operation, from the view's memory. */
    private void hystrix(Request request, Response response, Callback callback) {
        long delay = 500;
        Fields q = Request.extractQueryParameters(request);
        String d = q.getValue("delay");
        if (d != null) {
            try {
                delay = Math.max(100, Long.parseLong(d.trim()));
            } catch (NumberFormatException e) {
                error(request, response, callback, HttpStatus.BAD_REQUEST_400, "delay must be a number of ms");
                return;
            }
        }
        if (!openStream(request, response, callback)) {
            return;
        }
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
            while (!closed) {
                long now = System.currentTimeMillis();
                StringBuilder sb = new StringBuilder();
                for (Tile t : view.tiles()) {
                    sb.append("data: ").append(view.json(HystrixFormat.command(t, view.policy(), now))).append("\n\n");
                }
                sb.append(": ping\n\n");
                out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
                out.flush();
                Thread.sleep(delay);
            }
            callback.succeeded();
        } catch (IOException | RuntimeException e) {
            LOG.debug("a Hystrix stream ended", e);
            callback.failed(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            callback.failed(e);
        } finally {
            streams.decrementAndGet();
        }
    }

    private static void quietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("closing", e);
        }
    }

    /** For messages: where it listens. */
    @Override
    public String toString() {
        return "DashboardServer[" + new InetSocketAddress(connector.getHost(), port()) + "]";
    }
}
