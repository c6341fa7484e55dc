package dev.redeye.http;

import dev.redeye.api.CircuitOpenException;
import java.util.Objects;

/**
 * A request was rejected by the breaker of one of its two levels: {@link #level()} and {@link #key()} say which
 * rule's breaker, {@link #retryAfter()} when a trial may be tried (empty for a forced-open breaker, which admits
 * none until it is reset: never send a {@code Retry-After} for it). The request was not sent. A
 * {@link CircuitOpenException}, so code that handles redeye's rejections handles this one too; like it, it
 * carries no stack trace unless the breakers keep them.
 *
 * <p>The message names the breaker ({@code "circuit 'endpoint:/v1/charges' is OPEN; retry after 1200 ms"},
 * {@code "circuit 'service:payments' is FORCED_OPEN; no trial until it is reset"}), never the request's URL or
 * query.
 */
public class HttpCircuitOpenException extends CircuitOpenException {
    private static final long serialVersionUID = 1L;

    private final Level level;
    private final String key;

    /**
     * @param level the level whose breaker rejected the request
     * @param key   the rule's key
     * @param cause the engine's rejection, whose operation, status and retryAfter this one carries
     */
    public HttpCircuitOpenException(Level level, String key, CircuitOpenException cause) {
        super(cause.operation(), cause.status(), cause.retryAfterMillis(), cause.getStackTrace().length > 0);
        this.level = Objects.requireNonNull(level, "level");
        this.key = Objects.requireNonNull(key, "key");
    }

    /** The level whose breaker rejected the request. */
    public Level level() {
        return level;
    }

    /** The key of the rule whose breaker rejected the request. */
    public String key() {
        return key;
    }
}
