package dev.redeye.api;

/**
 * Capability: record call outcomes as one atomic read-modify-write in the store, applying
 * {@link Transitions} exactly. With this capability failures are never lost between instances and exactly
 * one caller observes the opening transition.
 *
 * <p>{@code now} is passed in by the caller; a store never reads its own clock for a rule.
 */
public interface AtomicRecording {

    /**
     * Atomically applies {@link Transitions#recordFailure(BreakerState, Policy, long)} to the stored state.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange recordFailure(String key, Policy policy, long now);

    /**
     * Atomically applies {@link Transitions#recordSuccess(BreakerState, Policy, long)}. When there is nothing
     * to change (consecutive strategy, no failures), nothing is written.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange recordSuccess(String key, Policy policy, long now);

    /**
     * Atomically records one outcome: {@link #recordSuccess} when {@code success}, else
     * {@link #recordFailure}.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange recordOutcome(String key, boolean success, Policy policy, long now);
}
