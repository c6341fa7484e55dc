package dev.redeye;

/** What an outlier instance ({@link Outlier}) does with its own calls of the operation. */
public enum OutlierPolicy {
    /** Rejects them, like a local breaker, for one reset window ({@code resetTimeout}); then calls go again. */
    REJECT,
    /** Admits them and only reports ({@link CircuitBreakerBuilder#onOutlier}, observers). */
    ALLOW
}
