package dev.redeye.api;

import java.time.Duration;
import java.util.Objects;

/**
 * A call was rejected because the breaker for its operation is open (or half-open with every trial permit
 * taken, or forced open). The call was not run.
 *
 * <p>Rejection is the hot path of an open breaker, so this exception carries no stack trace unless the
 * breaker was built to keep them.
 */
public class CircuitOpenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final BreakerStatus status;
    private final Duration retryAfter;

    /**
     * @param operation          the rejected operation
     * @param status             the status that caused the rejection
     * @param retryAfter         how long until a trial may be claimed ({@link Duration#ZERO} when a trial is
     *                           already running; {@code null} is read as zero)
     * @param writableStackTrace whether to fill in a stack trace
     */
    public CircuitOpenException(String operation, BreakerStatus status, Duration retryAfter,
            boolean writableStackTrace) {
        super(null, null, false, writableStackTrace);
        this.operation = Objects.requireNonNull(operation, "operation");
        this.status = Objects.requireNonNull(status, "status");
        this.retryAfter = retryAfter == null || retryAfter.isNegative() ? Duration.ZERO : retryAfter;
    }

    /** The rejected operation. */
    public String operation() {
        return operation;
    }

    /** The status the breaker had when it rejected the call. */
    public BreakerStatus status() {
        return status;
    }

    /**
     * How long until this instance may try a trial. For a forced-open breaker this is the time until the
     * next re-check, since only an operator can close it.
     */
    public Duration retryAfter() {
        return retryAfter;
    }

    @Override
    public String getMessage() {
        return "circuit '" + abbreviate(operation) + "' is " + status + "; retry after " + retryAfter.toMillis()
                + " ms";
    }

    private static String abbreviate(String s) {
        return s.length() <= 100 ? s : s.substring(0, 97) + "...";
    }
}
