package dev.redeye;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;

/**
 * Makes the breaker's rejections: cheap by default (no stack trace, as {@code writableStackTraces} says, and no
 * {@link java.time.Duration} until {@link CircuitOpenException#retryAfter()} is asked for).
 *
 * <p>The gate never throws a rejection: it returns it as the call's token (see {@link Gate#admit}), and the
 * caller throws it once, at the top, so the exception does not unwind through compiled frames. A call that
 * answers rejections without looking at them ({@code executeOrElse}) gets {@link #QUIET} instead, and nothing
 * is built.
 */
final class Rejections {
    /**
     * The token of a rejection nobody will look at: the call asked for no exception ({@code executeOrElse}) and
     * no observer was registered when it was admitted. Immutable and shared; never thrown, never seen by users.
     */
    static final Object QUIET = new Object() {
        @Override
        public String toString() {
            return "Rejections.QUIET";
        }
    };

    private final boolean writableStackTraces;

    Rejections(boolean writableStackTraces) {
        this.writableStackTraces = writableStackTraces;
    }

    /** Whether the admission token {@code token} is a rejection (an exception to throw, or {@link #QUIET}). */
    static boolean isRejection(Object token) {
        return token instanceof RuntimeException || token == QUIET;
    }

    /**
     * The rejection of a call of {@code operation}: {@link #QUIET} when {@code build} is false, else a new
     * {@link CircuitOpenException} (returned, not thrown).
     */
    Object of(String operation, BreakerStatus status, long retryAfterMillis, boolean build) {
        return build ? exception(operation, status, retryAfterMillis) : QUIET;
    }

    /** A new {@link CircuitOpenException} (not thrown), for callers that always need one. */
    CircuitOpenException exception(String operation, BreakerStatus status, long retryAfterMillis) {
        return new CircuitOpenException(operation, status, retryAfterMillis, writableStackTraces);
    }
}
