package dev.redeye.api;

/**
 * Capability: atomic half-open outcomes and operator changes, applying {@link Transitions} exactly. Each
 * call is one atomic read-modify-write and, when it is a transition, bumps the version by exactly one.
 */
public interface AtomicTransitions {

    /**
     * Atomically applies {@link Transitions#trialSucceeded(BreakerState, Policy, long)}.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange trialSucceeded(String key, Policy policy, long now);

    /**
     * Atomically applies {@link Transitions#trialFailed(BreakerState, Policy, long)}.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange trialFailed(String key, Policy policy, long now);

    /**
     * Atomically applies {@link Transitions#force(BreakerState, BreakerStatus, Policy, long)}: always a
     * transition. Forcing {@link BreakerStatus#CLOSED} also removes every trial claim of the key.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange force(String key, BreakerStatus status, Policy policy, long now);
}
