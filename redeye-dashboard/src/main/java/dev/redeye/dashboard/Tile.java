package dev.redeye.dashboard;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.spi.Transitions;
import java.util.List;
import java.util.Objects;

/**
 * One operation as the dashboard shows it: its state in the store read against the operator's policy (the
 * store holds state, not configuration, so thresholds and timings are the dashboard's options), and what the
 * feed told of its last transition. The JSON form the page and {@code /api/state} receive. Immutable.
 *
 * @param operation        the operation name, exactly as written
 * @param status           the nominal status ({@link BreakerStatus}, no jitter) at {@code at}
 * @param version          the state's version
 * @param failures         the consecutive (or leaky) failure count
 * @param failureThreshold the policy's failure threshold, to show the count against
 * @param errorRate        the error rate (EWMA, 0 to 1) when the state has samples, else null
 * @param errorRateThreshold the policy's error-rate threshold (0 to 1)
 * @param windowCalls      the calls in the sliding window, or null without one
 * @param windowFailures   the failed calls in the sliding window, or null without one
 * @param failureRateThreshold the policy's failure-rate threshold of a window, in percent
 * @param openedAt         epoch ms of the opening while open, else null
 * @param retryAt          epoch ms from which a trial may run while OPEN, else null
 * @param openCount        consecutive failed trials of this open period
 * @param forced           whether an operator holds the status
 * @param mode             the stored mode's wire name
 * @param lastKind         the wire name of the last transition the dashboard saw, or null
 * @param lastAt           epoch ms the dashboard saw it, or null
 * @param lastTrial        "success" or "failure" after a trial closed or reopened the breaker, else null
 * @param contributions    the instances' contributions under a quorum (empty without one)
 * @param at               epoch ms the status was computed at
 */
public record Tile(String operation, String status, long version, int failures, int failureThreshold,
        Double errorRate, double errorRateThreshold, Integer windowCalls, Integer windowFailures,
        double failureRateThreshold, Long openedAt, Long retryAt, int openCount, boolean forced, String mode,
        String lastKind, Long lastAt, String lastTrial, List<Contribution> contributions, long at) {

    /**
     * @throws NullPointerException if {@code operation}, {@code status}, {@code mode} or {@code contributions} is
     *                              null
     */
    public Tile {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(mode, "mode");
        contributions = List.copyOf(contributions);
    }

    /** The tile of {@code s} under {@code p} at {@code now}, with the last transition seen (nulls if none). */
    static Tile of(String operation, BreakerState s, Policy p, long now, String lastKind, Long lastAt,
            String lastTrial) {
        BreakerStatus status = Transitions.status(s, p, now, 1.0);
        SlidingWindow w = s.window() == null ? null : s.window().rolledTo(now);
        Long retryAt = status == BreakerStatus.OPEN ? Transitions.trialEligibleAt(s, p, 1.0) : null;
        return new Tile(operation, status.name(), s.version(), s.failures(), p.failureThreshold(),
                s.samples() > 0 ? s.errorRate() : null, p.errorRateThreshold(), w == null ? null : w.calls(),
                w == null ? null : w.failures(), p.failureRateThreshold(), s.open() ? s.openedAt() : null, retryAt,
                s.openCount(), s.forced(), s.mode().wireName(), lastKind, lastAt, lastTrial, s.contributors(), now);
    }

    /** Whether the breaker rejects calls: OPEN or FORCED_OPEN. */
    public boolean rejecting() {
        return status.equals(BreakerStatus.OPEN.name()) || status.equals(BreakerStatus.FORCED_OPEN.name());
    }

    /** The same tile without its time of computation, to tell whether anything shown changed. */
    Tile timeless() {
        return new Tile(operation, status, version, failures, failureThreshold, errorRate, errorRateThreshold,
                windowCalls, windowFailures, failureRateThreshold, openedAt, retryAt, openCount, forced, mode,
                lastKind, lastAt, lastTrial, contributions, 0L);
    }
}
