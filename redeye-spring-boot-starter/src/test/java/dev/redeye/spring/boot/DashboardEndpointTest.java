package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.dashboard.FleetView;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.app.InventoryApplication;
import dev.redeye.spring.boot.autoconfigure.RedeyeActuatorAutoConfiguration;
import dev.redeye.spring.boot.autoconfigure.RedeyeAutoConfiguration;
import dev.redeye.spring.boot.autoconfigure.RedeyeDashboardAutoConfiguration;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The opt-in {@code redeyedashboard} Actuator endpoint in a Boot application over a named in-memory store that
 * another client writes: the fleet as JSON, the page and its script from the dashboard's jar (without the token
 * field: the application authenticates), the page's event stream (a snapshot first), the Hystrix stream, and an
 * action allowed by {@code redeye.dashboard.actions=true}. Without exposure there is no view at all (no
 * subscription, no read), and actions are off by default.
 */
@SpringBootTest(classes = InventoryApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=health,redeyedashboard",
            "redeye.store=memory://dashboard-endpoint-test", "redeye.dashboard.actions=true",
            "redeye.dashboard.refresh=200ms", "spring.main.banner-mode=off"})
class DashboardEndpointTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Store OTHER = Stores.open("memory://dashboard-endpoint-test");

    @LocalServerPort
    int port;

    @AfterAll
    static void close() {
        OTHER.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The lines of an event stream up to and including the first that contains {@code until}. */
    private String readStream(String path, String until) throws Exception {
        HttpResponse<InputStream> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        StringBuilder sb = new StringBuilder();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                sb.append(line).append('\n');
                if (line.contains(until)) {
                    break;
                }
            }
        }
        return sb.toString();
    }

    @Test
    void theEndpointServesTheFleetThePageItsStreamsAndActions() throws Exception {
        OTHER.put("ledger", BreakerState.INITIAL.toBuilder().failures(2).build(), Duration.ofHours(1));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        JsonNode snapshot;
        do {
            HttpResponse<String> r = get("/actuator/redeyedashboard");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            snapshot = JSON.readTree(r.body());
            Thread.sleep(50);
        } while (!snapshot.get("tiles").toString().contains("ledger") && System.nanoTime() < deadline);
        assertThat(snapshot.get("tiles").toString()).contains("\"operation\":\"ledger\"", "\"failures\":2");
        assertThat(snapshot.get("store").get("up").asBoolean()).isTrue();

        HttpResponse<String> page = get("/actuator/redeyedashboard/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("data-token-actions=\"false\"", "data-read-only=\"false\"",
                "src=\"assets/dashboard.js\"");
        assertThat(page.headers().firstValue("Content-Security-Policy").orElse("")).startsWith("default-src 'self'");
        assertThat(get("/actuator/redeyedashboard/assets/dashboard.js").body()).contains("EventSource('events')");
        assertThat(get("/actuator/redeyedashboard/assets/other.js").statusCode()).isEqualTo(404);

        String events = readStream("/actuator/redeyedashboard/events", "ledger");
        assertThat(events).contains("event:snapshot");
        String hystrix = readStream("/actuator/redeyedashboard/hystrix.stream?delay=100", "ledger");
        assertThat(hystrix).contains("\"type\":\"HystrixCommand\"", "\"name\":\"ledger\"",
                "\"isCircuitBreakerOpen\":false");

        HttpResponse<String> action = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/actuator/redeyedashboard/api/action")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"action\": \"force-open\", \"operation\": \"ledger\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(action.statusCode()).as(action.body()).isEqualTo(200);
        assertThat(OTHER.get("ledger").orElseThrow().forced()).isTrue();
    }

    @Test
    void withoutExposureThereIsNoViewAndActionsAreOffByDefault() {
        WebApplicationContextRunner runner = new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                RedeyeAutoConfiguration.class, RedeyeActuatorAutoConfiguration.class,
                RedeyeDashboardAutoConfiguration.class, EndpointAutoConfiguration.class,
                WebEndpointAutoConfiguration.class))
                .withPropertyValues("redeye.store=memory://dashboard-endpoint-optin");
        runner.run(c -> assertThat(c).doesNotHaveBean(FleetView.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=redeyedashboard").run(c -> {
            assertThat(c).hasSingleBean(FleetView.class);
            assertThat(c.getBean(RedeyeProperties.class).getDashboard().isActions()).isFalse();
        });
    }
}
