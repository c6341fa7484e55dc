package dev.redeye.tck.broken;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;

/**
 * A store that forwards everything to a correct client (an {@code InMemoryStore} client view) and declares
 * exactly what that client declares. Each deliberately broken store extends it and overrides the one piece
 * it gets wrong, so the TCK failures it causes can be attributed to that defect alone.
 */
public class ForwardingStore extends dev.redeye.api.ForwardingStore {
    protected final Store inner;

    protected ForwardingStore(Store inner) {
        super(inner);
        this.inner = inner;
    }

    /** Runs before every atomic operation; a mutant may prepare the key. The default does nothing. */
    void before(String key, Policy policy) {
    }

    /** Every atomic result passes through here; a mutant may alter it. The default returns it unchanged. */
    StateChange written(String key, Policy policy, long now, StateChange change) {
        return change;
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.recordFailure(key, policy, now));
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.recordSuccess(key, policy, now));
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.recordOutcome(key, success, policy, now));
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.trialSucceeded(key, trialVersion, policy, now));
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.trialFailed(key, trialVersion, policy, now));
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.force(key, status, policy, now));
    }

    @Override
    public String toString() {
        return getClass().getSimpleName();
    }
}
