package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redeye.spring.boot.app.InventoryApplication;
import java.io.IOException;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code redeye.metrics.naming=resilience4j} on a Boot application over the real Redis, scraped over real HTTP
 * as Prometheus scrapes it: the call meters carry Resilience4j's names ({@code resilience4j_circuitbreaker_*},
 * with its {@code name} and {@code kind} labels) that its Grafana dashboard queries, and not redeye's.
 */
@AutoConfigureObservability(tracing = false) // a Boot test exports no metrics unless asked
@SpringBootTest(classes = InventoryApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=prometheus", "redeye.metrics.naming=resilience4j",
            "spring.main.banner-mode=off"})
class Resilience4jNamingOverHttpTest {
    private static final String PREFIX = TestServices.newPrefix();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("redeye.store", () -> TestServices.redisStoreUri(PREFIX));
    }

    @AfterAll
    static void deleteKeys() {
        TestServices.deleteRedisKeys(PREFIX);
    }

    @Test
    void thePrometheusScrapeHasResilience4jsCallAndStateMetrics() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/stock/apple").statusCode()).isEqualTo(200); // the operation "warehouse"
        }
        HttpResponse<String> scrape = get("/actuator/prometheus");
        assertThat(scrape.statusCode()).isEqualTo(200);
        String body = scrape.body();
        assertThat(body).contains("resilience4j_circuitbreaker_calls_seconds_count{")
                .contains("resilience4j_circuitbreaker_calls_seconds_sum{")
                .contains("resilience4j_circuitbreaker_state{");
        assertThat(body.lines().filter(l -> l.startsWith("resilience4j_circuitbreaker_calls_seconds_count{")
                && l.contains("name=\"warehouse\"") && l.contains("kind=\"successful\""))
                .map(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))))
                .containsExactly(3.0);
        assertThat(body).doesNotContain("redeye_circuitbreaker_calls_seconds");
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return TestServices.httpGet("http://127.0.0.1:" + port + path);
    }
}
