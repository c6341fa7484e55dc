package dev.redeye;

/**
 * A snapshot of one breaker instance's counters for one operation. Counters are per instance (not
 * fleet-wide, not stored) and only ever grow while the operation is held (an operation evicted past
 * {@code maxOperations} starts again from 0); the snapshot is taken without a lock, so counters read during
 * concurrent calls may be a few calls apart from each other.
 *
 * @param calls       calls that were run (allowed by the gate, trials included); rejected calls are not
 *                    counted here. A call ended by an interrupt or a cancellation counts here only: it is
 *                    neither a success nor a failure
 * @param successes   calls that ran and counted as a success
 * @param failures    calls that ran and counted as a failure (exception, failed result or call timeout)
 * @param rejections  calls that were not run ({@link dev.redeye.api.CircuitOpenException} or
 *                    {@link dev.redeye.api.StoreUnavailableException}), whether or not a fallback answered
 * @param storeErrors store operations that failed for this operation (reads, writes, claims, releases)
 * @param trials      half-open trial calls this instance ran
 */
public record Metrics(long calls, long successes, long failures, long rejections, long storeErrors, long trials) {

    /** A snapshot with every counter at 0. */
    public static final Metrics EMPTY = new Metrics(0, 0, 0, 0, 0, 0);
}
