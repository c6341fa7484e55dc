package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/** Calls through Resilience4j's {@code executeSupplier} that the tests share: one failing, one succeeding. */
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
}
