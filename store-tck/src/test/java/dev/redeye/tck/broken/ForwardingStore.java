package dev.redeye.tck.broken;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A store that forwards everything to a correct client (an {@code InMemoryStore} client view) and declares
 * exactly what that client declares. Each deliberately broken store extends it and overrides the one piece
 * it gets wrong, so the TCK failures it causes can be attributed to that defect alone.
 */
public class ForwardingStore implements Store, AtomicRecording, TrialClaims, AtomicTransitions, TransitionFeed {
    protected final Store inner;

    protected ForwardingStore(Store inner) {
        this.inner = inner;
    }

    private <C> C cap(Class<C> type) {
        return inner.capability(type).orElseThrow();
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        return type.isInstance(this) && inner.capability(type).isPresent()
                ? Optional.of(type.cast(this)) : Optional.empty();
    }

    /** Every atomic result passes through here; a mutant may alter it. The default returns it unchanged. */
    StateChange written(String key, Policy policy, long now, StateChange change) {
        return change;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return inner.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        inner.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        inner.delete(key);
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return written(key, policy, now, cap(AtomicRecording.class).recordFailure(key, policy, now));
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return written(key, policy, now, cap(AtomicRecording.class).recordSuccess(key, policy, now));
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return written(key, policy, now, cap(AtomicRecording.class).recordOutcome(key, success, policy, now));
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        return cap(TrialClaims.class).claimTrial(key, permits, ttl);
    }

    @Override
    public void releaseTrial(String key, String token) {
        cap(TrialClaims.class).releaseTrial(key, token);
    }

    @Override
    public StateChange trialSucceeded(String key, Policy policy, long now) {
        return written(key, policy, now, cap(AtomicTransitions.class).trialSucceeded(key, policy, now));
    }

    @Override
    public StateChange trialFailed(String key, Policy policy, long now) {
        return written(key, policy, now, cap(AtomicTransitions.class).trialFailed(key, policy, now));
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return written(key, policy, now, cap(AtomicTransitions.class).force(key, status, policy, now));
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        return cap(TransitionFeed.class).subscribe(listener, onGap);
    }

    @Override
    public void close() {
        inner.close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName();
    }
}
