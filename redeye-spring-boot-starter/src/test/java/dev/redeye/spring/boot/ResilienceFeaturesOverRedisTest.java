package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.spring.boot.fleetapp.PricingApplication;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What a Resilience4j user expects of the starter, over real HTTP with two instances of one Boot application
 * ({@link PricingApplication}) sharing a breaker through the real Redis: instance A is this
 * {@code @SpringBootTest} on a random port, instance B a second application context on another.
 *
 * <ul>
 * <li>{@code fallbackMethod}: A's failures are answered by the IOException fallback and open the shared
 * breaker; B's next call is answered by the rejection fallback without reaching B's healthy upstream.</li>
 * <li>A {@code Mono} method: its failures on A open it, B's subscription is rejected into its fallback.</li>
 * <li>{@code /actuator/redeyeevents}: A lists the opening as its own, B as the fleet's; filtered by operation.</li>
 * <li>Per-breaker health in a health group: {@code /actuator/health/payments} answers 503 CIRCUIT_OPEN on both
 * while {@code /actuator/health} stays 200 UP, and 200 UP again after a reset.</li>
 * </ul>
 */
@SpringBootTest(classes = PricingApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ResilienceFeaturesOverRedisTest {
    private static final String PREFIX = TestServices.newPrefix();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The properties both instances run with, besides the store. */
    private static final String[] PROPERTIES = {
        "spring.main.banner-mode=off",
        "management.endpoints.web.exposure.include=health,redeyeevents",
        "management.endpoint.health.show-details=always",
        "redeye.breakers.payments.failure-threshold=2",
        "redeye.breakers.payments.register-health-indicator=true",
        "management.endpoint.health.group.payments.include=redeyeBreakers/payments",
        "management.endpoint.health.group.payments.show-details=always",
        "management.endpoint.health.group.payments.status.order=circuit_open,down,circuit_half_open,up",
        "management.endpoint.health.group.payments.status.http-mapping.circuit_open=503",
    };

    @RegisterExtension
    static final SecondInstance B = new SecondInstance(PricingApplication.class, PREFIX, PROPERTIES);

    @LocalServerPort
    int portA;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("redeye.store", () -> TestServices.redisStoreUri(PREFIX));
        for (String p : PROPERTIES) {
            int eq = p.indexOf('=');
            registry.add(p.substring(0, eq), () -> p.substring(eq + 1));
        }
    }

    private String a() {
        return "http://127.0.0.1:" + portA;
    }

    @Test
    void fallbacksMonoEventsAndHealthGroupsAcrossTwoInstances() throws Exception {
        for (String instance : new String[] {a(), B.url()}) {
            assertThat(get(instance + "/price/apple").body()).isEqualTo("price apple");
            assertThat(get(instance + "/quote/apple").body()).isEqualTo("price apple");
            assertThat(get(instance + "/actuator/health/payments").statusCode()).isEqualTo(200);
        }

        // A's upstream fails: the IOException fallback answers, and two failures open the shared breaker
        post(a() + "/test/upstream?down=true");
        for (int i = 0; i < 2; i++) {
            assertThat(get(a() + "/price/apple").body()).isEqualTo("unavailable apple");
        }
        // B, whose upstream is healthy, is answered by the rejection fallback without calling it
        int bCalls = Integer.parseInt(get(B.url() + "/test/upstream/calls").body());
        assertThat(get(B.url() + "/price/apple").body()).isEqualTo("cached apple");
        assertThat(Integer.parseInt(get(B.url() + "/test/upstream/calls").body())).isEqualTo(bCalls);

        // the Mono method: no fallback takes A's IOException (a 500), the opening rejects B's subscription
        for (int i = 0; i < 2; i++) {
            assertThat(get(a() + "/quote/apple").statusCode()).isEqualTo(500);
        }
        assertThat(get(B.url() + "/quote/apple").body()).isEqualTo("quote rejected");
        assertThat(Integer.parseInt(get(B.url() + "/test/upstream/calls").body())).isEqualTo(bCalls);

        // events: the opening is A's own and the fleet's for B, filtered by operation
        JsonNode ownA = json(get(a() + "/actuator/redeyeevents/pricing")).path("events");
        assertThat(ownA).hasSize(1);
        assertThat(ownA.get(0).path("origin").asText()).isEqualTo("LOCAL");
        assertThat(ownA.get(0).path("kind").asText()).isEqualTo("opened");
        assertThat(ownA.get(0).path("breaker").asText()).isEqualTo("payments");
        assertThat(ownA.get(0).path("to").asText()).isEqualTo("OPEN");
        assertThat(java.time.Instant.parse(ownA.get(0).path("seenAt").asText())).isNotNull(); // ISO-8601
        JsonNode fleetB = until(B.url() + "/actuator/redeyeevents/pricing", e -> e.path("events").size() == 1)
                .path("events");
        assertThat(fleetB.get(0).path("origin").asText()).isEqualTo("FLEET");
        assertThat(fleetB.get(0).path("breaker").asText()).isEqualTo("payments");
        assertThat(fleetB.get(0).path("version").asLong()).isEqualTo(ownA.get(0).path("version").asLong());
        JsonNode allB = until(B.url() + "/actuator/redeyeevents", e -> e.path("events").size() == 2).path("events");
        assertThat(List.of(allB.get(0).path("operation").asText(), allB.get(1).path("operation").asText()))
                .containsExactly("pricing", "quotes");

        // health: the group answers 503 CIRCUIT_OPEN on both instances, the application stays UP
        for (String instance : new String[] {a(), B.url()}) {
            HttpResponse<String> group = get(instance + "/actuator/health/payments");
            assertThat(group.statusCode()).as(instance).isEqualTo(503);
            assertThat(json(group).path("status").asText()).isEqualTo("CIRCUIT_OPEN");
            HttpResponse<String> app = get(instance + "/actuator/health");
            assertThat(app.statusCode()).isEqualTo(200);
            JsonNode body = json(app);
            assertThat(body.path("status").asText()).isEqualTo("UP");
            assertThat(body.path("components").path("redeyeBreakers").path("components").path("payments")
                    .path("details").path("operations").path("pricing").asText()).isEqualTo("OPEN");
        }

        // an operator resets both operations through B: A's group is healthy again
        post(a() + "/test/upstream?down=false");
        RedeyeCircuitBreakers breakersB = B.bean(RedeyeCircuitBreakers.class);
        breakersB.get("payments").reset("pricing");
        breakersB.get("payments").reset("quotes");
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        int status;
        do {
            status = get(a() + "/actuator/health/payments").statusCode(); // A learns it from the feed
            if (status != 200) {
                Thread.sleep(50);
            }
        } while (status != 200 && System.nanoTime() < deadline);
        assertThat(status).isEqualTo(200);
        assertThat(get(a() + "/price/apple").body()).isEqualTo("price apple");
        JsonNode resetSeenByA = until(a() + "/actuator/redeyeevents/pricing", e -> e.path("events").size() == 2);
        assertThat(resetSeenByA.path("events").get(1).path("origin").asText()).isEqualTo("FLEET");
        assertThat(resetSeenByA.path("events").get(1).path("kind").asText()).isEqualTo("forced_closed");
    }

    /** Polls {@code url} until its JSON satisfies {@code done} (a feed is read by the store's own thread). */
    private static JsonNode until(String url, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        JsonNode last;
        do {
            last = json(get(url));
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return last;
    }

    private static JsonNode json(HttpResponse<String> r) throws IOException {
        return JSON.readTree(r.body());
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return TestServices.httpGet(url);
    }

    private static void post(String url) throws IOException, InterruptedException {
        TestServices.httpPost(url, null);
    }
}
