package dev.redeye;

/**
 * This instance is an outlier for an operation: its own failures reach the strategy's threshold while the fleet,
 * below its quorum ({@code quorum}, {@code quorumFraction}), stays closed; the problem is probably this
 * instance's own (its network, its deploy, its pool). Reported to {@link CircuitBreakerBuilder#onOutlier} and
 * to observers ({@link CircuitBreakerObserver#outlier}) once per local trip.
 *
 * @param operation        the operation
 * @param instance         this instance's id
 * @param failures         this instance's failures in the scope
 * @param calls            this instance's outcomes in the scope
 * @param failingInstances the instances with failures in the scope, this one included
 * @param quorumRequired   the failing instances the fleet opening needs
 * @param rejecting        whether this instance now rejects the operation's calls ({@link OutlierPolicy#REJECT})
 *                         for a reset window, or only reports ({@link OutlierPolicy#ALLOW})
 */
public record Outlier(String operation, String instance, int failures, int calls, int failingInstances,
        int quorumRequired, boolean rejecting) {
}
