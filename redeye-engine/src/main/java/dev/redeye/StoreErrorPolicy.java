package dev.redeye;

/**
 * What a {@link CircuitBreaker} does when its shared store fails before a call: the read at the gate, or the
 * claim of a half-open trial. A failure is any exception the store throws, not only
 * {@link dev.redeye.api.StoreException} (a driver's own exception, a closed pool, a {@code null} answer).
 * Writes after a call are always best-effort whatever the policy: a failed write is logged (at most every
 * 10 s), counted in {@link Metrics#storeErrors()}, reported to the {@code onStoreError} listener and never
 * thrown. The policy applies to distributed mode only; local mode has no store to fail.
 *
 * <p>Whatever the policy, an open state this instance already knows keeps rejecting until this instance's
 * trial eligibility: a store error never makes an allow early.
 */
public enum StoreErrorPolicy {
    /**
     * Let the call through as if the breaker were closed (the default: the store is not a dependency). At a
     * known open state's eligibility, or when the trial claim fails, the call claims a per-instance trial
     * instead: at most {@code halfOpenPermits} trials per instance at once, never every caller.
     */
    ALLOW,
    /**
     * Do not run the call: throw {@link dev.redeye.api.StoreUnavailableException} (or answer with the
     * fallback), also when the trial claim fails.
     */
    REJECT,
    /**
     * Degrade to an in-process store, per operation, seeded with the last state this instance saw, so the
     * breaker keeps working per instance: failures keep counting and can open it, also when reads still work
     * but writes fail (a replica answering reads after a fail-over). Every operation tries the real store
     * first; the outage of an operation ends when the real store accepts a write for it (an outcome, a trial
     * claim, a forced change), or at the first good read if only reads had failed. Nothing written to the
     * in-process store is replayed to the real one. Trial claims that fail fall back to per-instance claims.
     */
    LOCAL
}
