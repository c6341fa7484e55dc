package dev.redeye.examples;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.micrometer.RedeyeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;

/**
 * Micrometer with a Prometheus scrape: a breaker's meters bound to a {@link PrometheusMeterRegistry}, a few
 * calls (successes, failures that open the breaker, a rejection), then the scrape text an HTTP endpoint would
 * serve, printed to stdout.
 *
 * <p>{@code ExamplesTest} runs this {@code main} and checks what it prints; run it from an IDE to see the
 * whole scrape.
 */
public final class PrometheusExample {
    private PrometheusExample() {
    }

    /** Runs the example; prints the scrape to stdout. */
    public static void main(String[] args) {
        run(System.out);
    }

    static void run(PrintStream out) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (CircuitBreaker breaker = CircuitBreaker.builder()
                .failureThreshold(2)
                .resetTimeout(Duration.ofMinutes(1))
                .build();
                RedeyeMetrics metrics = RedeyeMetrics.builder(breaker).tags("app", "example").build()) {
            metrics.bindTo(registry);
            for (int i = 0; i < 3; i++) {
                breaker.execute("inventory", () -> "in stock");
            }
            for (int i = 0; i < 2; i++) {
                try {
                    breaker.execute("inventory", () -> {
                        throw new IOException("inventory service down");
                    });
                } catch (IOException expected) {
                    // the call's own failure, rethrown unchanged
                }
            }
            try {
                breaker.execute("inventory", () -> "never runs");
            } catch (CircuitOpenException rejected) {
                out.println("# rejected: " + rejected.getMessage());
            }
            out.print(registry.scrape());
        }
    }
}
