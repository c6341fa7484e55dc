package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Duration;

/** What the tests share: a failing and a succeeding call through {@code executeSupplier}, the fleet tests' config. */
final class TestCalls {
    private TestCalls() {
    }

    /** A call that fails with an {@code IllegalStateException}, recorded as a failure by the default config. */
    static void fail(CircuitBreaker cb) {
        assertThrows(IllegalStateException.class, () -> cb.executeSupplier(() -> {
            throw new IllegalStateException("down");
        }));
    }

    /** A call that returns "ok". */
    static void succeed(CircuitBreaker cb) {
        assertEquals("ok", cb.executeSupplier(() -> "ok"));
    }

    /** The fleet tests' config: a count window of 10, rates from 4 calls, 50 %, {@code wait} open, one trial. */
    static CircuitBreakerConfig fleetConfig(Duration wait) {
        return CircuitBreakerConfig.custom()
                .slidingWindow(10, 4, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(50)
                .waitDurationInOpenState(wait)
                .permittedNumberOfCallsInHalfOpenState(1)
                .build();
    }
}
