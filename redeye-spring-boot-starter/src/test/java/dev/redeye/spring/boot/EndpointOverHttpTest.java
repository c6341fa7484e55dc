package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.app.InventoryApplication;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@code redeye} endpoint over real HTTP, on a Boot application over the real Redis. Reading it never creates
 * anything: a {@code GET} of an operation the breaker does not hold and the store has no state for is a 404,
 * registers no operation, adds no meter (counted as lines of the Prometheus scrape) and writes no key into Redis;
 * an operation that another instance stored is answered from the store, still without being registered here.
 * Its errors say why: a 400 or 404 body names the reason, and an unknown action names the known ones.
 */
@AutoConfigureObservability(tracing = false) // a Boot test exports no metrics unless asked
@SpringBootTest(classes = InventoryApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=health,redeye,prometheus",
            "spring.main.banner-mode=off"})
class EndpointOverHttpTest {
    private static final String PREFIX = TestServices.newPrefix();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> MADE_UP = List.of("a", "made-up", "guess-3", "admin", "x y");

    @LocalServerPort
    int port;

    @Autowired
    CircuitBreaker breaker;

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("redeye.store", () -> TestServices.redisStoreUri(PREFIX));
    }

    @AfterAll
    static void deleteKeys() {
        TestServices.deleteRedisKeys(PREFIX);
    }

    @Test
    void aGetOfAnUnknownOperationIsA404AndCreatesNoOperationNoMeterNoKey() throws Exception {
        assertThat(get("/stock/apple").statusCode()).isEqualTo(200); // the operation "warehouse" is held
        long meterLines = redeyeLines();
        assertThat(meterLines).isPositive();
        List<String> keysBefore = TestServices.redisKeys(PREFIX);

        for (String name : MADE_UP) {
            HttpResponse<String> r = get("/actuator/redeye/default/" + URLEncoder.encode(name, StandardCharsets.UTF_8)
                    .replace("+", "%20"));
            assertThat(r.statusCode()).as(name + ": " + r.body()).isEqualTo(404);
        }

        assertThat(redeyeLines()).as("Prometheus lines of redeye meters after reading made-up names")
                .isEqualTo(meterLines);
        assertThat(breaker.allMetrics()).containsOnlyKeys("warehouse");
        assertThat(TestServices.redisKeys(PREFIX)).containsExactlyInAnyOrderElementsOf(keysBefore);
        assertThat(get("/actuator/redeye/default/warehouse").statusCode()).isEqualTo(200);
    }

    /**
     * The other instance's forceOpen reaches this application's breaker on the store's feed, asynchronously, and
     * the first event of its kind registers that kind's feed counter: the meters are counted once it arrived.
     */
    @Test
    void anOperationAnotherInstanceStoredIsAnsweredFromTheStoreWithoutBeingRegistered() throws Exception {
        double forcedOpenEvents = feedEvents("forced_open");
        try (Store other = Stores.open(TestServices.redisStoreUri(PREFIX));
                CircuitBreaker elsewhere = CircuitBreaker.builder().store(other).build()) {
            elsewhere.forceOpen("billing");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (feedEvents("forced_open") <= forcedOpenEvents) {
            assertThat(System.nanoTime()).as("the forced_open event reached this application's feed within 30 s")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
        long meterLines = redeyeLines();

        HttpResponse<String> r = get("/actuator/redeye/default/billing");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.path("status").asText()).isEqualTo("FORCED_OPEN");
        assertThat(body.path("forced").asBoolean()).isTrue();

        assertThat(breaker.allMetrics()).doesNotContainKey("billing");
        assertThat(redeyeLines()).isEqualTo(meterLines);
    }

    @Test
    void errorsSayWhyAndAnUnknownActionNamesTheKnownOnes() throws Exception {
        HttpResponse<String> explode = post("/actuator/redeye/default/warehouse", "{\"action\":\"explode\"}");
        assertThat(explode.statusCode()).isEqualTo(400);
        JsonNode e = JSON.readTree(explode.body());
        assertThat(e.path("error").asText()).as(explode.body()).isEqualTo("unknown action");
        assertThat(e.path("message").asText()).contains("'explode'")
                .contains("force-open, force-half-open, reset, force-mode");
        assertThat(e.path("actions").toString())
                .isEqualTo("[\"force-open\",\"force-half-open\",\"reset\",\"force-mode\"]");

        for (String body : new String[] {"{}", "{\"action\":\"\"}"}) {
            HttpResponse<String> missing = post("/actuator/redeye/default/warehouse", body);
            assertThat(missing.statusCode()).as(body).isEqualTo(400);
            assertThat(JSON.readTree(missing.body()).path("message").asText()).as(missing.body())
                    .contains("missing action").contains("force-open, force-half-open, reset, force-mode");
        }

        HttpResponse<String> noMode = post("/actuator/redeye/default/warehouse", "{\"action\":\"force-mode\"}");
        assertThat(noMode.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(noMode.body()).path("error").asText()).as(noMode.body()).isEqualTo("missing mode");
        HttpResponse<String> mode = post("/actuator/redeye/default/warehouse",
                "{\"action\":\"force-mode\",\"mode\":\"metrics_only\"}");
        assertThat(mode.statusCode()).as(mode.body()).isEqualTo(200);
        assertThat(JSON.readTree(mode.body()).path("mode").asText()).as(mode.body()).isEqualTo("metrics_only");
        HttpResponse<String> reset = post("/actuator/redeye/default/warehouse", "{\"action\":\"reset\"}");
        assertThat(JSON.readTree(reset.body()).path("mode").asText()).as(reset.body()).isEqualTo("default");

        HttpResponse<String> nope = post("/actuator/redeye/nope/warehouse", "{\"action\":\"reset\"}");
        assertThat(nope.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(nope.body()).path("message").asText()).as(nope.body())
                .contains("no breaker named 'nope'").contains("[default]");

        HttpResponse<String> unknownBreaker = get("/actuator/redeye/nope/warehouse");
        assertThat(unknownBreaker.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknownBreaker.body()).path("message").asText()).as(unknownBreaker.body())
                .contains("no breaker named 'nope'");
        HttpResponse<String> unknownOp = get("/actuator/redeye/default/made-up");
        assertThat(unknownOp.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknownOp.body()).path("message").asText()).as(unknownOp.body())
                .contains("unknown operation 'made-up'");
        assertThat(breaker.holds("made-up")).isFalse();
    }

    /** The lines of the Prometheus scrape that belong to redeye's meters. */
    private long redeyeLines() throws IOException, InterruptedException {
        HttpResponse<String> scrape = get("/actuator/prometheus");
        assertThat(scrape.statusCode()).isEqualTo(200);
        return scrape.body().lines().filter(l -> l.contains("redeye_")).count();
    }

    /** How many feed events of {@code kind} the Prometheus scrape counts (0 before the first registers it). */
    private double feedEvents(String kind) throws IOException, InterruptedException {
        HttpResponse<String> scrape = get("/actuator/prometheus");
        assertThat(scrape.statusCode()).isEqualTo(200);
        return scrape.body().lines()
                .filter(l -> l.startsWith("redeye_feed_events_total{") && l.contains("kind=\"" + kind + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    private HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
        return TestServices.httpPost("http://127.0.0.1:" + port + path, json);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return TestServices.httpGet("http://127.0.0.1:" + port + path);
    }
}
