package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.spring.boot.app.InventoryApplication;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Two instances of one Boot application ({@link InventoryApplication}: no redeye Java configuration, only
 * properties) share a breaker through the real Redis: instance A is this {@code @SpringBootTest} on a random
 * port, with the {@code redeye} endpoint exposed; instance B is a second application context on another random
 * port, with Actuator's default exposure. Everything is asked over real HTTP.
 */
@SpringBootTest(classes = InventoryApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=health,redeye",
            "management.endpoint.health.show-details=always", "redeye.defaults.failure-threshold=3",
            "redeye.defaults.open-cache-refresh=200ms", "spring.main.banner-mode=off"})
class TwoInstancesOverRedisTest {
    private static final String PREFIX = TestServices.newPrefix();
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final SecondInstance B = new SecondInstance(InventoryApplication.class, PREFIX,
            "management.endpoint.health.show-details=always", "redeye.defaults.failure-threshold=3",
            "redeye.defaults.open-cache-refresh=200ms", "spring.main.banner-mode=off");

    @LocalServerPort
    int portA;

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("redeye.store", () -> TestServices.redisStoreUri(PREFIX));
    }

    private String a() {
        return "http://127.0.0.1:" + portA;
    }

    @Test
    void failuresThroughOneInstanceOpenTheBreakerInTheOtherAndTheEndpointsAnswerOverHttp() throws Exception {
        assertThat(get(a() + "/stock/apple").statusCode()).isEqualTo(200);
        assertThat(get(B.url() + "/stock/apple").statusCode()).isEqualTo(200);

        // instance A's dependency fails: failure-threshold (3) failures through A open the shared breaker
        post(a() + "/test/warehouse?down=true", "");
        for (int i = 0; i < 3; i++) {
            assertThat(get(a() + "/stock/apple").statusCode()).isEqualTo(502);
        }
        assertThat(get(a() + "/stock/apple").statusCode()).isEqualTo(503);

        // instance B, whose own dependency is healthy, now rejects without calling it
        int bCalls = Integer.parseInt(get(B.url() + "/test/warehouse/calls").body());
        HttpResponse<String> rejected = get(B.url() + "/stock/apple");
        assertThat(rejected.statusCode()).isEqualTo(503);
        assertThat(rejected.body()).isEqualTo("breaker open");
        assertThat(Integer.parseInt(get(B.url() + "/test/warehouse/calls").body())).isEqualTo(bCalls);

        // health: UP on both (the store answers), the open breaker listed, never DOWN because of it
        for (String instance : new String[] {a(), B.url()}) {
            HttpResponse<String> health = get(instance + "/actuator/health");
            assertThat(health.statusCode()).isEqualTo(200);
            JsonNode redeye = JSON.readTree(health.body()).path("components").path("redeye");
            assertThat(redeye.path("status").asText()).isEqualTo("UP");
            assertThat(redeye.path("details").path("open").path("default").path("warehouse").asText())
                    .isEqualTo("OPEN");
            assertThat(redeye.path("details").path("store").asText()).startsWith("redis://")
                    .endsWith("(redeye.store)");
        }

        // the redeye endpoint: exposed on A, not on B (Actuator's default exposure)
        HttpResponse<String> listing = get(a() + "/actuator/redeye");
        assertThat(listing.statusCode()).isEqualTo(200);
        JsonNode warehouse = JSON.readTree(listing.body()).path("breakers").path("default").path("operations")
                .path("warehouse");
        assertThat(warehouse.path("status").asText()).isEqualTo("OPEN");
        assertThat(warehouse.path("failures").asLong()).isEqualTo(3);
        assertThat(get(B.url() + "/actuator/redeye").statusCode()).isEqualTo(404);
        assertThat(post(B.url() + "/actuator/redeye/default/warehouse", "{\"action\":\"reset\"}").statusCode())
                .isEqualTo(404);
        assertThat(get(a() + "/actuator/redeye/nope/warehouse").statusCode()).isEqualTo(404);
        assertThat(post(a() + "/actuator/redeye/default/warehouse", "{\"action\":\"explode\"}").statusCode())
                .isEqualTo(400);

        // an operator forces it open through A: B still rejects; resets it through A: B lets calls through
        HttpResponse<String> forced = post(a() + "/actuator/redeye/default/warehouse", "{\"action\":\"force-open\"}");
        assertThat(forced.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(forced.body()).path("status").asText()).isEqualTo("FORCED_OPEN");
        HttpResponse<String> read = get(a() + "/actuator/redeye/default/warehouse");
        assertThat(JSON.readTree(read.body()).path("forced").asBoolean()).isTrue();
        post(a() + "/test/warehouse?down=false", "");
        HttpResponse<String> reset = post(a() + "/actuator/redeye/default/warehouse", "{\"action\":\"reset\"}");
        assertThat(JSON.readTree(reset.body()).path("status").asText()).isEqualTo("CLOSED");
        assertThat(untilStatus(B.url() + "/stock/apple", 200, Duration.ofSeconds(10))).isEqualTo(200);
        assertThat(get(a() + "/stock/apple").statusCode()).isEqualTo(200);
    }

    /** Polls until {@code url} answers {@code status} (B may serve its open view up to open-cache-refresh). */
    private static int untilStatus(String url, int status, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        int last;
        do {
            last = get(url).statusCode();
            if (last == status) {
                return last;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return last;
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return TestServices.httpGet(url);
    }

    private static HttpResponse<String> post(String url, String json) throws IOException, InterruptedException {
        return TestServices.httpPost(url, json);
    }
}
