package dev.redeye.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A call was rejected because the breaker for its operation is open (or half-open with every trial permit
 * taken, or forced open). The call was not run.
 *
 * <h2>When to retry</h2>
 * {@link #retryAfter()} says how long until this instance may try a trial of the operation: the rest of the
 * open window for {@link BreakerStatus#OPEN}, zero or the wait for a running trial's outcome for
 * {@link BreakerStatus#HALF_OPEN}. A {@link BreakerStatus#FORCED_OPEN} breaker admits no trial at all until an
 * operator resets it, so it has <b>no retry time</b>: {@code retryAfter()} is empty and
 * {@link #retryAfterMillis()} is {@value #NO_RETRY}, whatever wait the constructor was given. Never derive a
 * {@code Retry-After} from a forced-open rejection.
 *
 * <h2>Cost</h2>
 * Rejection is the hot path of an open breaker, so this exception carries no stack trace unless the breaker was
 * built to keep them, and the engine builds it with {@link #CircuitOpenException(String, BreakerStatus, long,
 * boolean) the millisecond constructor}: the {@link Duration} and the {@link Optional} of {@link #retryAfter()}
 * are made only when asked for. A caller that answers rejections without looking at them
 * ({@code executeOrElse}) gets no exception at all.
 */
public class CircuitOpenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What {@link #retryAfterMillis()} answers when there is no retry time (a forced-open breaker). */
    public static final long NO_RETRY = -1L;

    private final String operation;
    private final BreakerStatus status;
    /** {@link #NO_RETRY} when there is no retry time, else at least 0. */
    private final long retryAfterMillis;
    /** The Duration given to the constructor, kept as is; null otherwise. */
    private final Duration given;
    /** Made on first use (racy but benign: Optional and Duration are immutable). */
    private transient Optional<Duration> retryAfter;

    /**
     * @param operation          the rejected operation
     * @param status             the status that caused the rejection
     * @param retryAfter         how long until a trial may be claimed ({@link Duration#ZERO} when a trial is
     *                           already running; {@code null} or a negative value is read as zero); ignored
     *                           for {@link BreakerStatus#FORCED_OPEN}, which has no retry time
     * @param writableStackTrace whether to fill in a stack trace
     * @throws NullPointerException if {@code operation} or {@code status} is null
     */
    public CircuitOpenException(String operation, BreakerStatus status, Duration retryAfter,
            boolean writableStackTrace) {
        super(null, null, false, writableStackTrace);
        this.operation = Objects.requireNonNull(operation, "operation");
        this.status = Objects.requireNonNull(status, "status");
        if (status == BreakerStatus.FORCED_OPEN) {
            this.given = null;
            this.retryAfterMillis = NO_RETRY;
        } else {
            this.given = retryAfter == null || retryAfter.isNegative() ? Duration.ZERO : retryAfter;
            this.retryAfterMillis = saturatedMillis(given);
        }
    }

    /**
     * Like {@link #CircuitOpenException(String, BreakerStatus, Duration, boolean)} with the wait in
     * milliseconds, without making a {@link Duration} (the one {@link #retryAfter()} returns is made when first
     * asked for).
     *
     * @param operation          the rejected operation
     * @param status             the status that caused the rejection
     * @param retryAfterMillis   how long until a trial may be claimed, in ms (a negative value is read as 0);
     *                           ignored for {@link BreakerStatus#FORCED_OPEN}, which has no retry time
     * @param writableStackTrace whether to fill in a stack trace
     * @throws NullPointerException if {@code operation} or {@code status} is null
     */
    public CircuitOpenException(String operation, BreakerStatus status, long retryAfterMillis,
            boolean writableStackTrace) {
        super(null, null, false, writableStackTrace);
        this.operation = Objects.requireNonNull(operation, "operation");
        this.status = Objects.requireNonNull(status, "status");
        this.given = null;
        this.retryAfterMillis = status == BreakerStatus.FORCED_OPEN ? NO_RETRY : Math.max(0L, retryAfterMillis);
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
     * How long until this instance may try a trial; empty when there is none to wait for: the breaker is
     * {@linkplain BreakerStatus#FORCED_OPEN forced open} and admits no trial until an operator resets it. See
     * the class comment.
     */
    public Optional<Duration> retryAfter() {
        Optional<Duration> r = retryAfter;
        if (r == null) {
            r = retryAfterMillis == NO_RETRY ? Optional.empty()
                    : Optional.of(given != null ? given : Duration.ofMillis(retryAfterMillis));
            retryAfter = r;
        }
        return r;
    }

    /**
     * {@link #retryAfter()} in milliseconds (rounded down; {@link Long#MAX_VALUE} if it does not fit), or
     * {@value #NO_RETRY} when it is empty (forced open): the allocation-free form.
     */
    public long retryAfterMillis() {
        return retryAfterMillis;
    }

    @Override
    public String getMessage() {
        String head = "circuit '" + OperationNames.abbreviate(operation) + "' is " + status;
        return retryAfterMillis == NO_RETRY ? head + "; no trial until it is reset"
                : head + "; retry after " + retryAfterMillis + " ms";
    }
}
