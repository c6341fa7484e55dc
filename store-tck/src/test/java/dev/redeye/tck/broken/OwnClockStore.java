package dev.redeye.tck.broken;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;

/**
 * Broken on purpose: atomic, but ignores the {@code now} it is given and reads its own clock
 * ({@link System#currentTimeMillis()}) for every rule.
 */
final class OwnClockStore extends ForwardingStore {

    OwnClockStore(Store inner) {
        super(inner);
    }

    private static long ownNow() {
        return System.currentTimeMillis();
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return super.recordFailure(key, policy, ownNow());
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return super.recordSuccess(key, policy, ownNow());
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return super.recordOutcome(key, success, policy, ownNow());
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return super.trialSucceeded(key, trialVersion, policy, ownNow());
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return super.trialFailed(key, trialVersion, policy, ownNow());
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return super.force(key, status, policy, ownNow());
    }
}
