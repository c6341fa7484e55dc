package dev.redeye;

/**
 * A snapshot of one breaker instance's counters for one operation. Counters are per instance (not
 * fleet-wide, not stored) and only ever grow while the operation is held (an operation evicted past
 * {@code maxOperations} starts again from 0); the snapshot is taken without a lock, so counters read during
 * concurrent calls may be a few calls apart from each other.
 *
 * <p>Every call that ran ends as exactly one of {@code successes}, {@code failures} or {@code ignored}, so
 * {@code calls == successes + failures + ignored} once no call is in flight.
 *
 * @param calls       calls that were run (allowed by the gate, trials included, permits acquired through
 *                    {@link CircuitBreaker#tryAcquire(String)} included); rejected calls are not counted here
 * @param successes   calls that returned and counted as a success
 * @param failures    calls that ran and counted as a failure (exception, failed result or call timeout)
 * @param ignored     calls whose end the breaker did not count as a failure although they did not return:
 *                    an exception {@code recordFailure} declined (the breaker records it as a success), an
 *                    interrupt or a cancellation (recorded as nothing), or a permit released unused
 * @param rejections  calls that were not run ({@link dev.redeye.api.CircuitOpenException} or
 *                    {@link dev.redeye.api.StoreUnavailableException}), whether or not a fallback answered
 * @param storeErrors store operations that failed for this operation (reads, writes, claims, releases)
 * @param trials      half-open trial calls this instance ran
 */
public record Metrics(long calls, long successes, long failures, long ignored, long rejections, long storeErrors,
        long trials) {

    /** A snapshot with every counter at 0. */
    public static final Metrics EMPTY = new Metrics(0, 0, 0, 0, 0, 0, 0);
}
