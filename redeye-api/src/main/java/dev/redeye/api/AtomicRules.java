package dev.redeye.api;

import java.util.Objects;

/**
 * For a store that applies the {@link Transitions} rules atomically where its data lives: implement
 * {@link #apply(String, AtomicOperation, Policy, long)} once (read the key's state, or its new-life state if
 * absent; {@link AtomicOperation#apply}; write the result if it changed, refreshing the state's ttl unless it is
 * forced; remove the key's claims if {@link AtomicOperation#removesClaims()}; publish the event of a
 * transition; all as one atomic step) and every method of {@link AtomicRecording} and
 * {@link AtomicTransitions} is that one primitive. The in-memory, PostgreSQL, DynamoDB and Hazelcast stores
 * are written this way, so the rules are dispatched in one place.
 */
public interface AtomicRules extends AtomicRecording, AtomicTransitions {

    /**
     * Atomically applies {@code operation} to the stored state of {@code key}.
     *
     * @throws StoreException if the backend fails or the stored data is malformed
     */
    StateChange apply(String key, AtomicOperation operation, Policy policy, long now);

    @Override
    default StateChange recordFailure(String key, Policy policy, long now) {
        return apply(key, AtomicOperation.failure(), Objects.requireNonNull(policy, "policy"), now);
    }

    @Override
    default StateChange recordSuccess(String key, Policy policy, long now) {
        return apply(key, AtomicOperation.success(), Objects.requireNonNull(policy, "policy"), now);
    }

    @Override
    default StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return apply(key, AtomicOperation.outcome(success), Objects.requireNonNull(policy, "policy"), now);
    }

    @Override
    default StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return apply(key, AtomicOperation.trialSucceeded(trialVersion), Objects.requireNonNull(policy, "policy"),
                now);
    }

    @Override
    default StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return apply(key, AtomicOperation.trialFailed(trialVersion), Objects.requireNonNull(policy, "policy"), now);
    }

    @Override
    default StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return apply(key, AtomicOperation.force(status), Objects.requireNonNull(policy, "policy"), now);
    }
}
