package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.failing;
import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.Strategy;
import dev.redeye.tck.MutableClock;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * With {@link MeterNaming#RESILIENCE4J}, the Grafana dashboard Resilience4j ships ({@code grafana_dashboard.json}
 * at the root of the resilience4j repository) works unchanged: every circuit-breaker metric its panels query exists,
 * with the labels the queries filter on, once the breaker has made a few calls. The names below are the ones the
 * dashboard's circuit-breaker panels and template variables query (read from the dashboard, not copied into this
 * repository); the registry is scraped in Prometheus' text format, as Grafana's Prometheus data source reads it.
 */
class Resilience4jDashboardTest {
    private static final String OP = "inventory";

    /** Metric names the dashboard's circuit-breaker panels query (its retry and bulkhead panels are not ours). */
    static final List<String> DASHBOARD_METRICS = List.of(
            "resilience4j_circuitbreaker_state",               // "Number of closed/open/half_open", "CircuitBreaker States", the variables
            "resilience4j_circuitbreaker_failure_rate",        // "Failure Rate: $circuitbreaker_name" (percent, -1 is N/A)
            "resilience4j_circuitbreaker_calls_seconds_count", // "Call rate", "Average call durations"
            "resilience4j_circuitbreaker_calls_seconds_sum",   // "Average call durations"
            "resilience4j_circuitbreaker_buffered_calls",      // "Buffered calls"
            "resilience4j_circuitbreaker_max_buffered_calls"); // "Buffered calls"

    /** The state values the panels filter on: state="closed", state=~"open|forced_open", state="half_open". */
    static final List<String> DASHBOARD_STATES = List.of("closed", "open", "forced_open", "half_open");

    @Test
    void everyCircuitBreakerMetricTheDashboardQueriesExistsAfterAFewCalls() throws Exception {
        MutableClock clock = Fixtures.clock();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).strategy(Strategy.ERROR_RATE).minimumCalls(4)
                .errorRateThreshold(0.9).build();
                RedeyeMetrics metrics = RedeyeMetrics.builder(b).naming(MeterNaming.RESILIENCE4J).build()) {
            metrics.bindTo(registry);
            for (int i = 0; i < 4; i++) {
                succeed(b, OP);
            }
            failing(b, OP);
            String scrape = registry.scrape();
            for (String metric : DASHBOARD_METRICS) {
                assertTrue(Pattern.compile("(?m)^" + Pattern.quote(metric) + "\\{[^}]*name=\"" + OP + "\"[^}]*} ")
                        .matcher(scrape).find(), () -> metric + "{name=\"" + OP + "\"} missing from the scrape:\n"
                        + scrape);
            }
            for (String state : DASHBOARD_STATES) {
                assertTrue(scrape.contains("resilience4j_circuitbreaker_state{name=\"" + OP + "\",state=\"" + state
                        + "\"} "), () -> "state " + state + " missing:\n" + scrape);
            }
            assertEquals(1.0, value(scrape, "resilience4j_circuitbreaker_state", "state=\"closed\""));
            assertEquals(5.0, value(scrape, "resilience4j_circuitbreaker_calls_seconds_count", "kind=\"successful\"")
                    + value(scrape, "resilience4j_circuitbreaker_calls_seconds_count", "kind=\"failed\""));
            double rate = value(scrape, "resilience4j_circuitbreaker_failure_rate", "name=\"" + OP + "\"");
            assertTrue(rate > 0 && rate <= 100, "a percentage, as Resilience4j's: " + rate);
            assertEquals(4.0, value(scrape, "resilience4j_circuitbreaker_max_buffered_calls", "name=\"" + OP + "\""),
                    "the calls the rate needs before it decides (minimumCalls)");
        }
    }

    @Test
    void belowMinimumCallsTheRateIsMinusOneAsResilience4jsAndTheDashboardShowsNA() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (CircuitBreaker b = CircuitBreaker.builder().strategy(Strategy.ERROR_RATE).minimumCalls(10).build();
                RedeyeMetrics metrics = RedeyeMetrics.builder(b).naming(MeterNaming.RESILIENCE4J).build()) {
            metrics.bindTo(registry);
            succeed(b, OP);
            assertEquals(-1.0, value(registry.scrape(), "resilience4j_circuitbreaker_failure_rate", "name=\"" + OP
                    + "\""));
        }
    }

    @Test
    void withoutARateThereIsNoFailureRateGaugeAndRedeyesOwnMetersKeepTheirNames() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (CircuitBreaker b = CircuitBreaker.builder().failureThreshold(3).build();
                RedeyeMetrics metrics = RedeyeMetrics.builder(b).naming(MeterNaming.RESILIENCE4J).build()) {
            metrics.bindTo(registry);
            succeed(b, OP);
            failing(b, OP);
            String scrape = registry.scrape();
            assertFalse(scrape.contains("failure_rate"), "consecutive strategy: no rate, no gauge (never -1):\n" + scrape);
            assertFalse(scrape.contains("slow_call_rate"), scrape);
            assertEquals(1.0, value(scrape, "resilience4j_circuitbreaker_buffered_calls", "kind=\"failed\""));
            assertEquals(3.0, value(scrape, "resilience4j_circuitbreaker_max_buffered_calls", "name=\"" + OP + "\""),
                    "the failures that open it (failureThreshold)");
            assertTrue(scrape.contains("redeye_circuitbreaker_trials_total{"), "redeye's own meters keep its names");
            assertFalse(scrape.contains("redeye_circuitbreaker_calls_seconds"), scrape);
            assertTrue(scrape.contains("resilience4j_circuitbreaker_not_permitted_calls_total{kind=\"not_permitted\""),
                    scrape);
        }
    }

    /** The value of the first sample of {@code metric} whose labels contain {@code label}. */
    static double value(String scrape, String metric, String label) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(metric) + "\\{([^}]*)} (\\S+)$").matcher(scrape);
        while (m.find()) {
            if (m.group(1).contains(label)) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError(metric + "{" + label + "} not in the scrape:\n" + scrape);
    }
}
