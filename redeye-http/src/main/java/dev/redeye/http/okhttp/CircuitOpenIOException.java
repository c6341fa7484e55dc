package dev.redeye.http.okhttp;

import dev.redeye.api.CircuitOpenException;
import dev.redeye.http.HttpCircuitOpenException;
import java.io.IOException;

/**
 * The {@link IOException} an OkHttp call fails with when {@link RedeyeInterceptor} rejects it (OkHttp expects
 * interceptors to fail with {@code IOException}). The rejection itself is the cause and {@link #rejection()}:
 * {@link HttpCircuitOpenException#level()}, {@code key()} and {@code retryAfter()}.
 */
public final class CircuitOpenIOException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param rejection the breakers' rejection */
    public CircuitOpenIOException(CircuitOpenException rejection) {
        super(rejection.getMessage(), rejection);
    }

    /** The rejection: an {@link HttpCircuitOpenException} when {@code HttpBreakers} rejected the call. */
    public CircuitOpenException rejection() {
        return (CircuitOpenException) getCause();
    }
}
