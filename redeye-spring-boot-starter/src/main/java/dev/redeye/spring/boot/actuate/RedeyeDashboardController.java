package dev.redeye.spring.boot.actuate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.api.StoreException;
import dev.redeye.dashboard.DashboardAssets;
import dev.redeye.dashboard.FleetView;
import dev.redeye.dashboard.HystrixFormat;
import dev.redeye.dashboard.Tile;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The page of the {@code redeyedashboard} endpoint and what it loads, under the endpoint's path (so the rules that
 * protect the endpoint protect them): {@code /} the page, {@code assets/*} its script and style from the
 * {@code redeye-dashboard} jar, {@code events} its Server-Sent Events ({@link FleetView.Viewer}: a snapshot on
 * every connect, then the changes), {@code hystrix.stream} for Hystrix Dashboard, and {@code POST api/action}
 * (force-open, force-half-open, reset) when {@code redeye.dashboard.actions=true}; refused (403) otherwise.
 * Registered by the auto-configuration, which gives the path.
 *
 * <p>Each stream is written by a daemon thread of its own from a bounded queue (a browser that falls behind is
 * dropped and replays the states on its reconnect); at most {@value #MAX_STREAMS} streams at once.
 */
@RestController
@RequestMapping("${management.endpoints.web.base-path:/actuator}/" + RedeyeDashboardEndpoint.ID)
public class RedeyeDashboardController {
    private static final Logger LOG = LoggerFactory.getLogger(RedeyeDashboardController.class);
    static final int MAX_STREAMS = 64;
    private static final int QUEUE_CAPACITY = 20_000;
    private static final long PING_MILLIS = 10_000;

    private final FleetView view;
    private final boolean actions;
    private final ObjectMapper json = new ObjectMapper();
    private final AtomicInteger streams = new AtomicInteger();

    /**
     * @param view    the fleet shown
     * @param actions whether operators' actions are allowed (the application authenticates them)
     */
    public RedeyeDashboardController(FleetView view, boolean actions) {
        this.view = Objects.requireNonNull(view, "view");
        this.actions = actions;
    }

    /** The page, at the endpoint's path with a trailing slash (its URLs are relative). */
    @GetMapping("/")
    public ResponseEntity<byte[]> page() {
        return asset("index.html");
    }

    /** The page's script and style. */
    @GetMapping("/assets/{name:.+}")
    public ResponseEntity<byte[]> assets(@PathVariable("name") String name) {
        return asset(name);
    }

    private ResponseEntity<byte[]> asset(String name) {
        return DashboardAssets.get(name, !actions, false)
                .map(a -> ResponseEntity.ok().header(HttpHeaders.CONTENT_TYPE, a.contentType())
                        .header(HttpHeaders.CACHE_CONTROL, "no-cache")
                        .header("Content-Security-Policy", DashboardAssets.CONTENT_SECURITY_POLICY).body(a.body()))
                .orElseGet(() -> ResponseEntity.notFound().build());
    }

    /** The page's event stream. */
    @GetMapping(path = "/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public SseEmitter events() {
        SseEmitter emitter = new SseEmitter(0L);
        if (streams.incrementAndGet() > MAX_STREAMS) {
            streams.decrementAndGet();
            emitter.completeWithError(new IllegalStateException("too many event streams"));
            return emitter;
        }
        BlockingQueue<SseEmitter.SseEventBuilder> queue = new LinkedBlockingQueue<>(QUEUE_CAPACITY);
        AtomicBoolean over = new AtomicBoolean();
        FleetView.Viewer viewer = (event, data) -> {
            if (!queue.offer(SseEmitter.event().name(event).data(data, MediaType.APPLICATION_JSON))) {
                over.set(true);
            }
        };
        emitter.onCompletion(() -> over.set(true));
        emitter.onTimeout(() -> over.set(true));
        emitter.onError(e -> over.set(true));
        Thread t = new Thread(() -> {
            AutoCloseable membership = null;
            try {
                emitter.send(SseEmitter.event().reconnectTime(1000).comment("redeye"));
                membership = view.join(viewer);
                while (!over.get()) {
                    SseEmitter.SseEventBuilder e = queue.poll(PING_MILLIS, TimeUnit.MILLISECONDS);
                    emitter.send(e != null ? e : SseEmitter.event().comment("ping"));
                }
                emitter.complete();
            } catch (IOException | RuntimeException e) {
                LOG.debug("a dashboard stream ended", e);
                emitter.completeWithError(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                close(membership);
                streams.decrementAndGet();
            }
        }, "redeye-dashboard-stream");
        t.setDaemon(true);
        t.start();
        return emitter;
    }

    /** The Hystrix stream: every {@code delay} ms (at least 100) one object per operation. */
    @GetMapping(path = "/hystrix.stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public SseEmitter hystrix(@RequestParam(name = "delay", defaultValue = "500") long delay) {
        SseEmitter emitter = new SseEmitter(0L);
        if (streams.incrementAndGet() > MAX_STREAMS) {
            streams.decrementAndGet();
            emitter.completeWithError(new IllegalStateException("too many event streams"));
            return emitter;
        }
        long every = Math.max(100, delay);
        AtomicBoolean over = new AtomicBoolean();
        emitter.onCompletion(() -> over.set(true));
        emitter.onTimeout(() -> over.set(true));
        emitter.onError(e -> over.set(true));
        Thread t = new Thread(() -> {
            try {
                while (!over.get()) {
                    long now = System.currentTimeMillis();
                    for (Tile tile : view.tiles()) {
                        emitter.send(SseEmitter.event().data(view.json(HystrixFormat.command(tile, view.policy(), now)),
                                MediaType.APPLICATION_JSON));
                    }
                    emitter.send(SseEmitter.event().comment("ping"));
                    Thread.sleep(every);
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("a Hystrix stream ended", e);
                emitter.completeWithError(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                streams.decrementAndGet();
            }
        }, "redeye-dashboard-hystrix");
        t.setDaemon(true);
        t.start();
        return emitter;
    }

    /** An operator's action, when allowed: {@code {"action": ..., "operation": ...}}. */
    @PostMapping(path = "/api/action", consumes = MediaType.APPLICATION_JSON_VALUE,
            produces = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<Map<String, Object>> action(@RequestBody String body) {
        if (!actions) {
            return ResponseEntity.status(HttpStatus.FORBIDDEN).body(Map.of("error", "actions are off "
                    + "(redeye.dashboard.actions=false)"));
        }
        FleetView.Action act;
        String op;
        try {
            JsonNode b = json.readTree(body);
            if (b == null || !b.path("operation").isTextual() || !b.path("action").isTextual()) {
                throw new IllegalArgumentException("expected {\"action\": ..., \"operation\": ...}");
            }
            act = FleetView.Action.of(b.get("action").asText());
            op = b.get("operation").asText();
        } catch (IOException | IllegalArgumentException e) {
            return ResponseEntity.badRequest().body(Map.of("error", String.valueOf(e.getMessage())));
        }
        try {
            view.act(act, op);
        } catch (StoreException e) {
            return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", "the store failed: "
                    + e.getMessage()));
        } catch (IllegalArgumentException e) {
            return ResponseEntity.badRequest().body(Map.of("error", String.valueOf(e.getMessage())));
        }
        LOG.info("dashboard action {} {}", act.wireName(), op);
        return ResponseEntity.ok(Map.of("ok", true, "action", act.wireName(), "operation", op));
    }

    private static void close(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.debug("closing", e);
            }
        }
    }
}
