package dev.redeye.resilience4j.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.resilience4j.RedeyeBackedCircuitBreaker;
import dev.redeye.resilience4j.RedeyeCircuitBreakerRegistry;
import dev.redeye.resilience4j.spring.app.BackendClient;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of one Boot application written for Resilience4j only ({@code BackendApplication}: Resilience4j's
 * {@code @CircuitBreaker}, its YAML configuration, Actuator), started in this JVM on random ports with
 * {@code redeye.store} set to the build's Redis under one fresh prefix: failures through instance 1 open the
 * breaker in instance 2, and Resilience4j's endpoints and meters answer over real HTTP with its own names. The
 * two instances live for the class; the first test opens the shared breaker from a fresh state, the second (which
 * opens it too when run alone) reads what that left.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetWideRegistryOverRedisTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<ConfigurableApplicationContext> STARTED = new ArrayList<>();
    private static final String PREFIX = BackendInstances.newPrefix();
    private static ConfigurableApplicationContext one;
    private static ConfigurableApplicationContext two;

    @BeforeAll
    static void startTwoInstances() {
        String store = "redeye.store=" + BackendInstances.redisStore(PREFIX);
        one = started(BackendInstances.startWeb(List.of(), store));
        two = started(BackendInstances.startWeb(List.of(), store));
    }

    private static ConfigurableApplicationContext started(ConfigurableApplicationContext context) {
        STARTED.add(context);
        return context;
    }

    @AfterAll
    static void closeBoth() {
        STARTED.forEach(ConfigurableApplicationContext::close);
        BackendInstances.deleteRedisKeys(PREFIX);
    }

    private static CircuitBreaker backend(ConfigurableApplicationContext context) {
        return context.getBean(CircuitBreakerRegistry.class).find("backend").orElseThrow();
    }

    /** The store's feed delivers on its own thread: wait for it, up to 10 s. */
    private static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    private static JsonNode getJson(String url) throws Exception {
        HttpResponse<String> response = BackendInstances.get(url);
        assertThat(response.statusCode()).as(url + " answered " + response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private static List<String> events(ConfigurableApplicationContext context, String field) throws Exception {
        List<String> out = new ArrayList<>();
        JsonNode events = getJson(BackendInstances.url(context) + "/actuator/circuitbreakerevents/backend")
                .path("circuitBreakerEvents");
        events.forEach(e -> out.add(e.path(field).asText()));
        return out;
    }

    /** The value of the measurement {@code statistic} (COUNT, VALUE, ...) of an answer of the metrics endpoint. */
    private static double measurement(JsonNode metric, String statistic) {
        for (JsonNode m : metric.path("measurements")) {
            if (m.path("statistic").asText().equals(statistic)) {
                return m.path("value").asDouble();
            }
        }
        throw new AssertionError("no " + statistic + " in " + metric);
    }

    @Test
    @Order(1)
    void failuresThroughOneInstanceOpenTheBreakerInTheOther() throws Exception {
        for (ConfigurableApplicationContext instance : List.of(one, two)) {
            assertThat(instance.getBean(CircuitBreakerRegistry.class)).isInstanceOf(RedeyeCircuitBreakerRegistry.class);
            assertThat(backend(instance)).as("declared in the properties: built at start")
                    .isInstanceOf(RedeyeBackedCircuitBreaker.class);
            assertThat(backend(instance).getCircuitBreakerConfig().getMinimumNumberOfCalls())
                    .as("the YAML configuration").isEqualTo(4);
        }
        BackendClient client1 = one.getBean(BackendClient.class);
        BackendClient client2 = two.getBean(BackendClient.class);

        client1.dependencyDown(true);
        for (int i = 0; i < 4; i++) {
            assertThat(client1.call()).as("instance 1's fallback answers").isEqualTo("fallback IllegalStateException");
        }
        assertThat(backend(one).getState()).isEqualTo(State.OPEN);
        assertThat(client1.call()).isEqualTo("fallback CallNotPermittedException");

        eventually(() -> backend(two).getState() == State.OPEN, "instance 2 learns of the open breaker");
        assertThat(client2.call()).isEqualTo("fallback CallNotPermittedException");
        assertThat(client2.callMono().block()).as("the Mono method falls back too")
                .isEqualTo("fallback CallNotPermittedException");
        assertThat(client2.dependencyCalls()).as("instance 2's dependency was never called").isZero();
        assertThat(client1.callMono().block()).isEqualTo("fallback CallNotPermittedException");
        assertThat(client1.dependencyCalls()).isEqualTo(4);
    }

    @Test
    @Order(2)
    void resilience4jsEndpointsAndMetersAnswerOverHttp() throws Exception {
        BackendClient client1 = one.getBean(BackendClient.class);
        if (backend(one).getState() != State.OPEN) { // run alone: open it as the first test does
            client1.dependencyDown(true);
            for (int i = 0; i < 4; i++) {
                client1.call();
            }
        }
        eventually(() -> backend(two).getState() == State.OPEN, "instance 2 learns of the open breaker");
        two.getBean(BackendClient.class).call(); // a rejected call on instance 2

        JsonNode breakers = getJson(BackendInstances.url(two) + "/actuator/circuitbreakers").path("circuitBreakers");
        assertThat(breakers.path("backend").path("state").asText()).isEqualTo("OPEN");

        assertThat(events(one, "type")).as("instance 1's calls").contains("ERROR", "STATE_TRANSITION")
                .filteredOn("ERROR"::equals).hasSize(4);
        assertThat(events(two, "stateTransition")).as("instance 2 publishes the fleet's transition")
                .contains("CLOSED_TO_OPEN");
        assertThat(events(two, "type")).contains("NOT_PERMITTED").doesNotContain("ERROR");

        String metrics2 = BackendInstances.url(two) + "/actuator/metrics/";
        JsonNode open = getJson(metrics2 + "resilience4j.circuitbreaker.state?tag=name:backend&tag=state:open");
        assertThat(measurement(open, "VALUE")).isEqualTo(1.0);
        JsonNode closed = getJson(metrics2 + "resilience4j.circuitbreaker.state?tag=name:backend&tag=state:closed");
        assertThat(measurement(closed, "VALUE")).isEqualTo(0.0);
        JsonNode failed = getJson(BackendInstances.url(one)
                + "/actuator/metrics/resilience4j.circuitbreaker.calls?tag=name:backend&tag=kind:failed");
        assertThat(measurement(failed, "COUNT")).isEqualTo(4.0);
        JsonNode notPermitted = getJson(metrics2 + "resilience4j.circuitbreaker.not.permitted.calls?tag=name:backend");
        assertThat(measurement(notPermitted, "COUNT")).isGreaterThanOrEqualTo(1.0);
    }
}
