package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.failing;
import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import java.time.Duration;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * redeye's own naming: {@code failure.rate} is a ratio, present only under a strategy that decides on a rate
 * (never a -1 for the others), {@code slow.call.rate} and {@code slow.calls} only under the sliding window,
 * {@code not.permitted.calls} carries {@code kind}, and {@code calls.max} is the longest timed call.
 */
class RatesAndMaxTest {
    private static final String OP = "pricing";

    @Test
    void theErrorRateStrategysRateIsARatio() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().strategy(Strategy.ERROR_RATE).minimumCalls(100).build();
                RedeyeMetrics metrics = RedeyeMetrics.of(b)) {
            metrics.bindTo(registry);
            failing(b, OP);
            assertEquals(1.0, registry.get(RedeyeMetrics.FAILURE_RATE).tag("name", OP).gauge().value(),
                    "the first outcome sets the rate; below minimumCalls it is still the rate, not -1");
            succeed(b, OP);
            double r = registry.get(RedeyeMetrics.FAILURE_RATE).tag("name", OP).gauge().value();
            assertTrue(r > 0 && r < 1, "a ratio: " + r);
            assertTrue(registry.find(RedeyeMetrics.SLOW_CALL_RATE).meters().isEmpty());
        }
    }

    @Test
    void aSlidingWindowHasItsRatesSlowCallsAndBufferedCalls() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 10)
                .minimumNumberOfCalls(10).slowCallDurationThreshold(Duration.ofMillis(20)).build();
                RedeyeMetrics metrics = RedeyeMetrics.of(b)) {
            metrics.bindTo(registry);
            failing(b, OP);
            succeed(b, OP);
            succeed(b, OP);
            b.execute(OP, () -> {
                Thread.sleep(40);
                return "slow";
            });
            assertEquals(0.25, registry.get(RedeyeMetrics.FAILURE_RATE).tag("name", OP).gauge().value());
            assertEquals(0.25, registry.get(RedeyeMetrics.SLOW_CALL_RATE).tag("name", OP).gauge().value());
            assertEquals(1, registry.get("redeye.circuitbreaker.slow.calls").tag("name", OP).gauge().value());
            assertEquals(1, registry.get("redeye.circuitbreaker.buffered.calls").tags("name", OP, "kind", "failed")
                    .gauge().value());
            assertEquals(3, registry.get("redeye.circuitbreaker.buffered.calls").tags("name", OP, "kind", "successful")
                    .gauge().value());
            assertEquals(10, registry.get("redeye.circuitbreaker.max.buffered.calls").tag("name", OP).gauge().value());
        }
    }

    @Test
    void strategiesWithoutARateHaveNoRateGauges() throws Exception {
        for (Strategy s : new Strategy[] {Strategy.CONSECUTIVE, Strategy.LEAKY}) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (CircuitBreaker b = CircuitBreaker.builder().strategy(s).build();
                    RedeyeMetrics metrics = RedeyeMetrics.of(b)) {
                metrics.bindTo(registry);
                succeed(b, OP);
                assertTrue(registry.find(RedeyeMetrics.FAILURE_RATE).meters().isEmpty(), s.toString());
                assertTrue(registry.find(RedeyeMetrics.SLOW_CALL_RATE).meters().isEmpty(), s.toString());
                assertTrue(registry.find(RedeyeMetrics.FAILURES).meters().size() == 1, s + ": its count instead");
            }
        }
    }

    @Test
    void callsMaxIsTheLongestTimedCallAndRejectionsHaveAKind() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().failureThreshold(1).build();
                RedeyeMetrics metrics = RedeyeMetrics.builder(b).timeEveryCall().build()) {
            metrics.bindTo(registry);
            b.execute(OP, () -> {
                Thread.sleep(20);
                return "slow";
            });
            succeed(b, OP);
            double max = registry.get(RedeyeMetrics.CALLS_MAX).tags("name", OP, "kind", "successful").timeGauge()
                    .value(TimeUnit.MILLISECONDS);
            assertTrue(max >= 20, "the 20 ms call: " + max);
            failing(b, OP);
            b.executeOrElse(OP, () -> "ran", "rejected");
            assertEquals(1, registry.get(RedeyeMetrics.NOT_PERMITTED).tags("name", OP, "kind", "not_permitted")
                    .functionCounter().count());
        }
    }
}
