package dev.redeye;

/**
 * What a {@link CircuitBreaker} does when its store fails to answer the gate (a
 * {@link dev.redeye.api.StoreException} on the read before a call). Writes after a call are always
 * best-effort whatever the policy: a failed write is logged, counted in {@link Metrics#storeErrors()},
 * reported to the {@code onStoreError} listener and never thrown.
 */
public enum StoreErrorPolicy {
    /** Let the call through as if the breaker were closed (the default: the store is not a dependency). */
    ALLOW,
    /**
     * Do not run the call: throw {@link dev.redeye.api.StoreUnavailableException} (or answer with the
     * fallback).
     */
    REJECT,
    /**
     * Degrade to an in-process store seeded with the last state this instance saw for the operation, so
     * the breaker keeps working per instance; the real store is tried again on every call and takes over
     * as soon as it answers. Nothing written to the in-process store is replayed to the real one.
     */
    LOCAL
}
