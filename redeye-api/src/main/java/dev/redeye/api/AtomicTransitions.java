package dev.redeye.api;

/**
 * Capability: atomic half-open outcomes and operator changes, applying {@link Transitions} exactly. Each
 * call is one atomic read-modify-write and, when it is a transition, bumps the version by exactly one.
 *
 * <p>Trial outcomes are fenced (contract v2): each carries the version of the open period its trial was
 * admitted under, and an outcome for any other version is a no-op that returns the current state.
 */
public interface AtomicTransitions {

    /**
     * Atomically applies {@link Transitions#trialSucceeded(BreakerState, long, Policy, long)}.
     *
     * @param trialVersion the version of the state when the trial's claim was won
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now);

    /**
     * Atomically applies {@link Transitions#trialFailed(BreakerState, long, Policy, long)}.
     *
     * @param trialVersion the version of the state when the trial's claim was won
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange trialFailed(String key, long trialVersion, Policy policy, long now);

    /**
     * Atomically applies {@link Transitions#force(BreakerState, BreakerStatus, Policy, long)}: always a
     * transition. Forcing {@link BreakerStatus#CLOSED} or {@link BreakerStatus#HALF_OPEN} also removes every
     * trial claim of the key in the same step ({@link AtomicOperation#removesClaims()}): a forced half-open
     * starts a new period, whose trial must not wait for a hung trial's claim of the old one to expire.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange force(String key, BreakerStatus status, Policy policy, long now);
}
