package dev.redeye.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.CountingStore;
import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.Store;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server's HTTP surface without a browser: the operator's token (401 without, 403 wrong, 200 right, and
 * nothing changed by a refused call), read-only (403 whatever the token), bad requests, the assets (from the
 * jar, nothing referenced from elsewhere, a Content-Security-Policy that forbids it), and that the view over a
 * store creates nothing: opening, refreshing and serving make no write.
 */
class DashboardServerTest {
    /**
     * A client of its own per request: a client shared across the tests keeps a connection to a server that a test
     * closed, and a later test's server given the same port by the system would get the request on that dead
     * connection (a clean-clone run saw "header parser received no bytes" on a test's first request).
     */
    private static HttpClient http() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }
    private static final ObjectMapper JSON = new ObjectMapper();

    static HttpResponse<String> get(DashboardServer s, String path) throws Exception {
        return http().send(HttpRequest.newBuilder(URI.create(s.url() + path.substring(1))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> action(DashboardServer s, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(s.url() + "api/action"))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header(DashboardServer.TOKEN_HEADER, token);
        }
        return http().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void actionsNeedTheTokenAndARefusedOneChangesNothing() throws Exception {
        try (InMemoryStore backend = new InMemoryStore();
                FleetView view = new FleetView(backend.newClient(), Policy.defaults(), List.of(), Duration.ofHours(1),
                        Clock.systemUTC());
                DashboardServer s = DashboardServer.start(view, "127.0.0.1", 0, "right", false)) {
            view.start();
            String body = "{\"action\": \"force-open\", \"operation\": \"pay\"}";
            assertEquals(401, action(s, null, body).statusCode());
            HttpResponse<String> wrong = action(s, "wrong", body);
            assertEquals(403, wrong.statusCode());
            assertTrue(wrong.body().contains("wrong token"), wrong.body());
            assertEquals(Optional.empty(), backend.get("pay"), "a refused action writes nothing");
            assertEquals(400, action(s, "right", "{\"action\": \"explode\", \"operation\": \"pay\"}").statusCode());
            assertEquals(400, action(s, "right", "not json").statusCode());
            assertEquals(405, get(s, "/api/action").statusCode());
            HttpResponse<String> ok = action(s, "right", body);
            assertEquals(200, ok.statusCode(), ok.body());
            assertTrue(backend.get("pay").orElseThrow().forced());
            assertEquals(200, action(s, "right", "{\"action\": \"reset\", \"operation\": \"pay\"}").statusCode());
            assertFalse(backend.get("pay").orElseThrow().forced());
            JsonNode state = JSON.readTree(get(s, "/api/state").body());
            assertEquals("pay", state.get("tiles").get(0).get("operation").asText());
            assertEquals("CLOSED", state.get("tiles").get(0).get("status").asText());
            assertFalse(state.get("readOnly").asBoolean());
        }
    }

    @Test
    void aReadOnlyDashboardRefusesEveryActionAndHidesThem() throws Exception {
        try (InMemoryStore backend = new InMemoryStore();
                FleetView view = new FleetView(backend.newClient(), Policy.defaults(), List.of(), Duration.ofHours(1),
                        Clock.systemUTC());
                DashboardServer s = DashboardServer.start(view, "127.0.0.1", 0, null, true)) {
            view.start();
            HttpResponse<String> r = action(s, "anything", "{\"action\": \"force-open\", \"operation\": \"pay\"}");
            assertEquals(403, r.statusCode());
            assertTrue(r.body().contains("read-only"), r.body());
            assertEquals(Optional.empty(), backend.get("pay"));
            assertTrue(get(s, "/").body().contains("data-read-only=\"true\""));
        }
        assertThrows(IllegalArgumentException.class, () -> DashboardServer.start(
                new FleetView(new InMemoryStore(), Policy.defaults(), List.of(), Duration.ofHours(1), Clock.systemUTC()),
                "127.0.0.1", 0, " ", false), "actions without a token");
    }

    @Test
    void theAssetsComeFromTheJarAndReferenceNothingElsewhere() throws Exception {
        try (InMemoryStore backend = new InMemoryStore();
                FleetView view = new FleetView(backend.newClient(), Policy.defaults(), List.of(), Duration.ofHours(1),
                        Clock.systemUTC());
                DashboardServer s = DashboardServer.start(view, "127.0.0.1", 0, "t", false)) {
            Pattern elsewhere = Pattern.compile("(https?:)?//[a-z0-9.-]+\\.[a-z]{2,}", Pattern.CASE_INSENSITIVE);
            for (String path : List.of("/", "/assets/dashboard.js", "/assets/dashboard.css")) {
                HttpResponse<String> r = get(s, path);
                assertEquals(200, r.statusCode(), path);
                assertFalse(elsewhere.matcher(r.body()).find(), path + " references another host");
                assertEquals("default-src 'self'; img-src 'self' data:",
                        r.headers().firstValue("Content-Security-Policy").orElse(""), path);
            }
            assertFalse(get(s, "/").body().contains("@import"), "no external style sheets or fonts");
            int traversal = get(s, "/assets/../pom.xml").statusCode();
            assertTrue(traversal == 400 || traversal == 404, "path traversal answered " + traversal);
            assertEquals(404, get(s, "/nothing").statusCode());
        }
    }

    @Test
    void theViewCreatesNoStateFromARead() throws Exception {
        try (InMemoryStore backend = new InMemoryStore()) {
            Store writer = backend.newClient();
            writer.put("a", BreakerState.INITIAL, Duration.ofHours(1));
            CountingStore counting = new CountingStore(backend.newClient());
            try (FleetView view = new FleetView(counting, Policy.defaults(), List.of(), Duration.ofMillis(50),
                    Clock.systemUTC());
                    DashboardServer s = DashboardServer.start(view, "127.0.0.1", 0, "t", false)) {
                view.start();
                Thread.sleep(300);
                get(s, "/api/state");
                try (InputStream events = http().send(HttpRequest.newBuilder(URI.create(s.url() + "events")).build(),
                        HttpResponse.BodyHandlers.ofInputStream()).body()) {
                    String first = new String(events.readNBytes(200), StandardCharsets.UTF_8);
                    assertTrue(first.contains("event: snapshot"), first);
                }
            }
            assertEquals(0, counting.snapshot().writes(), counting.snapshot().toString());
            assertTrue(counting.snapshot().reads() >= 2, "it did refresh: " + counting.snapshot());
            assertEquals(List.of("a"), backend.page(null, 10).entries().stream().map(e -> e.operation()).toList());
        }
    }

    @Test
    void aStoreThatCannotListNeedsNamedOperations() {
        Store plain = new Store() {
            @Override public Optional<BreakerState> get(String key) { return Optional.empty(); }
            @Override public void put(String key, BreakerState state, Duration ttl) { }
            @Override public void delete(String key) { }
            @Override public void close() { }
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new FleetView(plain,
                Policy.defaults(), List.of(), Duration.ofSeconds(1), Clock.systemUTC()));
        assertTrue(e.getMessage().contains("name the operations"), e.getMessage());
        new FleetView(plain, Policy.defaults(), List.of("x"), Duration.ofSeconds(1), Clock.systemUTC()).close();
    }
}
