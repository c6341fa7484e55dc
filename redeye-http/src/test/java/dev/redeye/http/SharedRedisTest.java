package dev.redeye.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.Store;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * Two instances (each its own HttpBreakers and its own Redis client) with the same rules over the build's real
 * Redis ({@code REDEYE_REDIS_URL}, a random key prefix): a service tripped by one is open for the other, whose
 * requests never reach the server; a reset through the other closes it for both.
 */
class SharedRedisTest {

    static Store redis(String prefix) {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            Assertions.fail("No Redis: set REDEYE_REDIS_URL (source scripts/services.sh, or export "
                    + "REDEYE_REDIS_URL=redis://127.0.0.1:6379 with a redis-server running)");
        }
        return Stores.open(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix);
    }

    @Test
    void aServiceTrippedByOneInstanceIsOpenForTheOther() throws Exception {
        Map<String, Object> config = Map.of(
                "defaults", Map.of("resetTimeout", "10m"),
                "rules", List.of(
                        Map.of("type", "service", "match", "/inventory", "failure-threshold", 3,
                                "skip-list", List.of("/inventory/health")),
                        Map.of("type", "endpoint", "match", "/inventory/items", "failureThreshold", "10")));
        String prefix = "redeye-http-test:" + UUID.randomUUID() + ":";
        List<String> changesSeenByA = new CopyOnWriteArrayList<>();
        try (ScriptedServer server = new ScriptedServer();
                Store storeA = redis(prefix);
                Store storeB = redis(prefix);
                HttpBreakers a = HttpBreakers.builder(HttpRuleSet.fromMap(config)).store(storeA)
                        .onStateChange(c -> changesSeenByA.add(c.toString())).build();
                HttpBreakers b = HttpBreakers.builder(HttpRuleSet.fromMap(config)).store(storeB).build()) {
            HttpClient clientA = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), a);
            HttpClient clientB = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), b);
            server.status("/inventory", 503);
            for (int i = 0; i < 3; i++) {
                assertEquals(503, clientA.send(HttpRequest.newBuilder(server.uri("/inventory/stock/" + i)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode());
            }
            assertEquals(List.of("service:/inventory CLOSED -> OPEN (opened)"), changesSeenByA);
            assertEquals(BreakerStatus.OPEN, b.stateOf(Level.SERVICE, "/inventory"), "instance B reads A's opening");
            int seen = server.received().size();
            HttpCircuitOpenException e = assertThrows(HttpCircuitOpenException.class, () -> clientB.send(
                    HttpRequest.newBuilder(server.uri("/inventory/items/9")).build(),
                    HttpResponse.BodyHandlers.discarding()));
            assertEquals(Level.SERVICE, e.level());
            assertEquals("/inventory", e.key());
            assertEquals(seen, server.received().size(), "B's rejected request never reached the server");
            server.status("/inventory/health", 200);
            assertEquals(200, clientB.send(HttpRequest.newBuilder(server.uri("/inventory/health")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode(), "the skipped health check still passes");
            b.reset(Level.SERVICE, "/inventory");
            assertEquals(BreakerStatus.CLOSED, a.stateOf(Level.SERVICE, "/inventory"), "B's reset closes it for A");
            server.status("/inventory", 200);
            assertEquals(200, clientA.send(HttpRequest.newBuilder(server.uri("/inventory/items/1")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode());
            for (BreakerSnapshot s : a.snapshots()) {
                storeA.delete(s.operation()); // leave nothing behind on the shared server
            }
        }
    }

    /**
     * B follows the store's feed by default: once A resets a service B saw open, B's next request goes through,
     * although B's open view would otherwise serve rejections until its open-cache refresh (an hour here).
     * Likewise a {@code resetAll()} of breakers already closed and clean fires no callback.
     */
    @Test
    void aResetByAnotherInstanceIsSeenAtOnceThroughTheFeed() throws Exception {
        Map<String, Object> config = Map.of("defaults", Map.of("resetTimeout", "10m"),
                "rules", List.of(Map.of("type", "service", "match", "/inventory", "failure-threshold", 2)));
        String prefix = "redeye-http-test:" + UUID.randomUUID() + ":";
        List<String> changesSeenByB = new CopyOnWriteArrayList<>();
        try (ScriptedServer server = new ScriptedServer();
                Store storeA = redis(prefix);
                Store storeB = redis(prefix);
                HttpBreakers a = HttpBreakers.builder(HttpRuleSet.fromMap(config)).store(storeA).build();
                HttpBreakers b = HttpBreakers.builder(HttpRuleSet.fromMap(config)).store(storeB)
                        .customize(cb -> cb.openCacheRefresh(Duration.ofHours(1)))
                        .onStateChange(c -> changesSeenByB.add(c.toString())).build()) {
            HttpClient clientA = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), a);
            HttpClient clientB = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), b);
            b.resetAll();
            assertEquals(List.of(), changesSeenByB, "a reset of a closed, clean breaker is no transition");

            server.status("/inventory", 503);
            for (int i = 0; i < 2; i++) {
                clientA.send(HttpRequest.newBuilder(server.uri("/inventory/" + i)).build(),
                        HttpResponse.BodyHandlers.discarding());
            }
            assertThrows(HttpCircuitOpenException.class, () -> clientB.send(
                    HttpRequest.newBuilder(server.uri("/inventory/b")).build(), HttpResponse.BodyHandlers.discarding()));
            server.status("/inventory", 200);
            a.reset(Level.SERVICE, "/inventory");

            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            Integer status = null;
            while (status == null && System.nanoTime() < deadline) {
                try {
                    status = clientB.send(HttpRequest.newBuilder(server.uri("/inventory/b")).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode();
                } catch (HttpCircuitOpenException stillOpen) {
                    Thread.sleep(20);
                }
            }
            assertEquals(200, status, "B never saw A's reset");
            b.resetAll();
            assertEquals(List.of(), changesSeenByB, "B made no transition: the opening and the reset were A's");
            storeA.delete(a.operation(Level.SERVICE, "/inventory"));
        }
    }
}
