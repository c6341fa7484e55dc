package dev.redeye;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.time.Duration;

/** Makes the breaker's rejections: cheap by default (no stack trace), as {@code writableStackTraces} says. */
final class Rejections {
    private final boolean writableStackTraces;

    Rejections(boolean writableStackTraces) {
        this.writableStackTraces = writableStackTraces;
    }

    CircuitOpenException of(String operation, BreakerStatus status, long retryAfterMillis) {
        return new CircuitOpenException(operation, status, Duration.ofMillis(Math.max(0, retryAfterMillis)),
                writableStackTraces);
    }
}
