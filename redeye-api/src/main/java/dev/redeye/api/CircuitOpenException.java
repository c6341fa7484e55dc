package dev.redeye.api;

import java.time.Duration;
import java.util.Objects;

/**
 * A call was rejected because the breaker for its operation is open (or half-open with every trial permit
 * taken, or forced open). The call was not run.
 *
 * <p>Rejection is the hot path of an open breaker, so this exception carries no stack trace unless the
 * breaker was built to keep them, and the engine builds it with {@link #CircuitOpenException(String,
 * BreakerStatus, long, boolean) the millisecond constructor}: the {@link Duration} of {@link #retryAfter()} is
 * made only when asked for.
 */
public class CircuitOpenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final BreakerStatus status;
    private final long retryAfterMillis;
    /** Made on first use by the millisecond constructor's exceptions (racy but benign: Duration is immutable). */
    private Duration retryAfter;

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
        this.retryAfterMillis = saturatedMillis(this.retryAfter);
    }

    /**
     * Like {@link #CircuitOpenException(String, BreakerStatus, Duration, boolean)} with the wait in
     * milliseconds, without making a {@link Duration} (the one {@link #retryAfter()} returns is made when first
     * asked for).
     *
     * @param operation          the rejected operation
     * @param status             the status that caused the rejection
     * @param retryAfterMillis   how long until a trial may be claimed, in ms (a negative value is read as 0)
     * @param writableStackTrace whether to fill in a stack trace
     */
    public CircuitOpenException(String operation, BreakerStatus status, long retryAfterMillis,
            boolean writableStackTrace) {
        super(null, null, false, writableStackTrace);
        this.operation = Objects.requireNonNull(operation, "operation");
        this.status = Objects.requireNonNull(status, "status");
        this.retryAfterMillis = Math.max(0L, retryAfterMillis);
    }

    private static long saturatedMillis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
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
        Duration d = retryAfter;
        if (d == null) {
            d = Duration.ofMillis(retryAfterMillis);
            retryAfter = d;
        }
        return d;
    }

    /** {@link #retryAfter()} in milliseconds (rounded down; {@link Long#MAX_VALUE} if it does not fit). */
    public long retryAfterMillis() {
        return retryAfterMillis;
    }

    @Override
    public String getMessage() {
        return "circuit '" + OperationNames.abbreviate(operation) + "' is " + status + "; retry after "
                + retryAfterMillis + " ms";
    }
}
