package dev.redeye.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code /hystrix.stream} parsed as Hystrix Dashboard parses it: {@code data:} lines of JSON objects of type
 * {@code HystrixCommand}, each with every field the dashboard reads, of the JSON type it expects (the list below,
 * the fields of Hystrix's own metrics stream for a command). Values follow the store's state: an open breaker
 * reports the circuit open, a forced one reports force-open too, a window's calls and failures are the counts and
 * the error percentage.
 */
class HystrixStreamTest {
    /** The fields Hystrix Dashboard reads of a HystrixCommand object, and their JSON types. */
    static final Map<String, String> FIELDS = new LinkedHashMap<>();

    static {
        for (String f : List.of("type", "name", "group", "propertyValue_executionIsolationStrategy", "threadPool")) {
            FIELDS.put(f, "string");
        }
        for (String f : List.of("isCircuitBreakerOpen", "propertyValue_circuitBreakerForceOpen",
                "propertyValue_circuitBreakerForceClosed", "propertyValue_circuitBreakerEnabled",
                "propertyValue_executionIsolationThreadInterruptOnTimeout", "propertyValue_requestCacheEnabled",
                "propertyValue_requestLogEnabled")) {
            FIELDS.put(f, "boolean");
        }
        for (String f : List.of("currentTime", "errorPercentage", "errorCount", "requestCount",
                "rollingCountBadRequests", "rollingCountCollapsedRequests", "rollingCountEmit",
                "rollingCountExceptionsThrown", "rollingCountFailure", "rollingCountFallbackEmit",
                "rollingCountFallbackFailure", "rollingCountFallbackMissing", "rollingCountFallbackRejection",
                "rollingCountFallbackSuccess", "rollingCountResponsesFromCache", "rollingCountSemaphoreRejected",
                "rollingCountShortCircuited", "rollingCountSuccess", "rollingCountThreadPoolRejected",
                "rollingCountTimeout", "currentConcurrentExecutionCount", "rollingMaxConcurrentExecutionCount",
                "latencyExecute_mean", "latencyTotal_mean", "propertyValue_circuitBreakerRequestVolumeThreshold",
                "propertyValue_circuitBreakerSleepWindowInMilliseconds",
                "propertyValue_circuitBreakerErrorThresholdPercentage",
                "propertyValue_executionIsolationThreadTimeoutInMilliseconds",
                "propertyValue_executionTimeoutInMilliseconds",
                "propertyValue_executionIsolationSemaphoreMaxConcurrentRequests",
                "propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests",
                "propertyValue_metricsRollingStatisticalWindowInMilliseconds", "reportingHosts")) {
            FIELDS.put(f, "number");
        }
        FIELDS.put("latencyExecute", "object");
        FIELDS.put("latencyTotal", "object");
        FIELDS.put("propertyValue_executionIsolationThreadPoolKeyOverride", "null");
    }

    @Test
    void everyCommandCarriesEveryFieldHystrixDashboardReads() throws Exception {
        Policy policy = Policy.builder().failureThreshold(3).resetTimeout(Duration.ofSeconds(30)).jitter(0.0).build();
        Policy windowed = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(4)
                .failureRateThreshold(50).jitter(0.0).build();
        try (InMemoryStore backend = new InMemoryStore();
                FleetView view = new FleetView(backend.newClient(), policy, List.of(), Duration.ofHours(1),
                        Clock.systemUTC());
                DashboardServer s = DashboardServer.start(view, "127.0.0.1", 0, "t", true)) {
            Store w = backend.newClient();
            long now = System.currentTimeMillis();
            w.put("closed", BreakerState.INITIAL.toBuilder().failures(1).build(), Duration.ofHours(1));
            for (int i = 0; i < 3; i++) {
                backend.apply("opened", AtomicOperation.failure(), policy, now + i);
            }
            backend.apply("forced", AtomicOperation.force(BreakerStatus.OPEN), policy, now);
            for (int i = 0; i < 3; i++) {
                backend.apply("window", AtomicOperation.outcome(i == 0, false), windowed, now + i);
            }
            view.start();
            Map<String, JsonNode> byName = read(s, 4);
            for (JsonNode c : byName.values()) {
                for (Map.Entry<String, String> f : FIELDS.entrySet()) {
                    JsonNode v = c.get(f.getKey());
                    assertTrue(v != null, c.get("name") + " lacks " + f.getKey());
                    assertEquals(f.getValue(), type(v), c.get("name") + "." + f.getKey());
                }
                assertEquals("HystrixCommand", c.get("type").asText());
                for (String p : List.of("0", "25", "50", "75", "90", "95", "99", "99.5", "100")) {
                    assertTrue(c.get("latencyExecute").get(p).isNumber(), "latencyExecute." + p);
                    assertTrue(c.get("latencyTotal").get(p).isNumber(), "latencyTotal." + p);
                }
            }
            assertFalse(byName.get("closed").get("isCircuitBreakerOpen").asBoolean());
            assertEquals(1, byName.get("closed").get("rollingCountFailure").asInt());
            assertTrue(byName.get("opened").get("isCircuitBreakerOpen").asBoolean());
            assertEquals(3, byName.get("opened").get("errorCount").asInt());
            assertEquals(30_000, byName.get("opened").get("propertyValue_circuitBreakerSleepWindowInMilliseconds")
                    .asLong());
            assertTrue(byName.get("forced").get("propertyValue_circuitBreakerForceOpen").asBoolean());
            assertFalse(byName.get("opened").get("propertyValue_circuitBreakerForceOpen").asBoolean());
            JsonNode window = byName.get("window");
            assertEquals(3, window.get("requestCount").asInt());
            assertEquals(2, window.get("rollingCountFailure").asInt());
            assertEquals(1, window.get("rollingCountSuccess").asInt());
            assertEquals(67, window.get("errorPercentage").asInt());
        }
    }

    private static String type(JsonNode v) {
        return v.isNull() ? "null" : v.isTextual() ? "string" : v.isBoolean() ? "boolean" : v.isNumber() ? "number"
                : v.isObject() ? "object" : v.getNodeType().name();
    }

    /** The first {@code n} distinct commands of the stream, by name. */
    private static Map<String, JsonNode> read(DashboardServer s, int n) throws Exception {
        HttpResponse<java.io.InputStream> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(s.url() + "hystrix.stream?delay=100")).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertEquals("text/event-stream;charset=utf-8", r.headers().firstValue("Content-Type").orElse("")
                .replace(" ", "").toLowerCase(java.util.Locale.ROOT));
        ObjectMapper json = new ObjectMapper();
        Map<String, JsonNode> out = new HashMap<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null && out.size() < n; line = in.readLine()) {
                if (line.startsWith("data: ")) {
                    JsonNode c = json.readTree(line.substring(6));
                    out.put(c.get("name").asText(), c);
                }
            }
        }
        assertEquals(n, out.size(), out.keySet().toString());
        return out;
    }
}
