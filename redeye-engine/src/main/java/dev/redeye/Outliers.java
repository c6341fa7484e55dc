package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import dev.redeye.spi.Transitions;

/**
 * Local trips of an outlier instance under a quorum: after each of this instance's writes, if the fleet is closed
 * below its quorum while this instance's own contribution reaches the strategy's threshold (consecutive: its
 * failures; sliding windows: its failure rate over at least {@code windowMinimumCalls} of its own outcomes),
 * this instance is an outlier for the operation for one reset window: reported once per trip, and with
 * {@link OutlierPolicy#REJECT} its calls are rejected meanwhile. A write showing its contribution below the
 * threshold (cleared by a success, expired with the window) ends the trip, and so does this instance learning
 * that the fleet is open, by a write, a read or the feed ({@link StateViews}).
 */
final class Outliers {
    private final Policy policy;
    private final String instance;
    private final boolean reject;
    private final long holdNanos;
    private final Rejections rejections;
    private final Observers observers;

    Outliers(Policy policy, String instance, OutlierPolicy outlierPolicy, Rejections rejections, Observers observers) {
        this.policy = policy;
        this.instance = instance;
        this.reject = outlierPolicy == OutlierPolicy.REJECT;
        this.holdNanos = Math.max(1L, Monotonic.ofMillis(policy.resetTimeoutMillis()));
        this.rejections = rejections;
        this.observers = observers;
    }

    /** Whether this instance's calls are rejected while it is an outlier. */
    boolean rejects() {
        return reject;
    }

    /** After this instance's write that left {@code s}: starts, goes on with or ends a local trip. */
    void afterWrite(OperationState e, BreakerState s, long tick) {
        Contribution mine = null;
        int failing = 0;
        for (Contribution c : s.contributors()) {
            if (c.failures() > 0) {
                failing++;
            }
            if (c.instance().equals(instance)) {
                mine = c;
            }
        }
        if (s.open() || mine == null || !reachesThreshold(mine) || Transitions.quorumMet(s, policy)) {
            e.outlierUntil = 0L;
            return;
        }
        long until = e.outlierUntil;
        if (until != 0L && tick - until < 0) {
            return; // already tripped: one report per trip
        }
        e.outlierUntil = Monotonic.after(tick, holdNanos);
        Observers.Set o = observers.current();
        if (o != null) {
            o.outlier(new Outlier(e.name, instance, mine.failures(), mine.calls(), failing,
                    policy.quorumRequired(s.contributors().size()), reject));
        }
    }

    private boolean reachesThreshold(Contribution c) {
        if (policy.strategy() == Strategy.SLIDING_WINDOW) {
            return c.calls() >= policy.windowMinimumCalls()
                    && c.failures() * 100.0 >= policy.failureRateThreshold() * c.calls();
        }
        return c.failures() >= policy.failureThreshold();
    }

    /** Whether this instance is an outlier for {@code e} at {@code tick}. */
    static boolean tripped(OperationState e, long tick) {
        long until = e.outlierUntil;
        return until != 0L && tick - until < 0;
    }

    /** The rejection of a call of {@code e} while this instance is an outlier rejecting, else null. */
    Object admit(OperationState e, long tick, boolean build) {
        long until = e.outlierUntil;
        if (until == 0L || tick - until >= 0) {
            return null;
        }
        return rejections.of(e.name, BreakerStatus.OPEN, Monotonic.ceilMillis(until - tick), build);
    }
}
