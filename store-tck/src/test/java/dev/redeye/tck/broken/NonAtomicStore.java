package dev.redeye.tck.broken;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.Transitions;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Broken on purpose: records outcomes and trial results as get, apply {@link Transitions}, pause briefly,
 * put (the naive shared breaker). Correct in a single thread; loses updates under concurrency.
 */
final class NonAtomicStore extends ForwardingStore {

    NonAtomicStore(Store inner) {
        super(inner);
    }

    private StateChange readModifyWrite(String key, Function<BreakerState, StateChange> rule) {
        BreakerState prev = get(key).orElse(null);
        StateChange c = rule.apply(prev);
        Thread.yield();
        LockSupport.parkNanos(50_000); // the network round trip between the read and the write
        if (c.changed()) {
            put(key, c.state(), Duration.ofHours(1));
        }
        return c;
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return readModifyWrite(key, s -> Transitions.recordFailure(s, policy, now));
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return readModifyWrite(key, s -> Transitions.recordSuccess(s, policy, now));
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return readModifyWrite(key, s -> Transitions.recordOutcome(s, success, policy, now));
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return readModifyWrite(key, s -> Transitions.trialSucceeded(s, trialVersion, policy, now));
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return readModifyWrite(key, s -> Transitions.trialFailed(s, trialVersion, policy, now));
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return readModifyWrite(key, s -> Transitions.force(s, status, policy, now));
    }
}
