package dev.redeye.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A store that forwards every method of the SPI to another store and declares exactly the capabilities that
 * store declares: the one base for decorators (counting, degrading, fault injection, test doubles). A
 * subclass overrides the methods it changes and calls {@code super} for the rest.
 *
 * <p>{@link #capability(Class)} returns {@code this} for each of the four capability interfaces the
 * delegate offers, so an overridden capability method is what the engine calls, and empty for each it
 * lacks; any other type is looked up on the delegate. Calling a capability method the delegate lacks throws
 * {@link UnsupportedOperationException}. The delegate's capabilities are looked up once, at construction.
 *
 * <p>Thread-safe if the delegate is. {@link #close()} closes the delegate.
 */
public abstract class ForwardingStore implements Store, AtomicRecording, TrialClaims, AtomicTransitions,
        TransitionFeed {
    private final Store delegate;
    private final AtomicRecording recording;
    private final TrialClaims claims;
    private final AtomicTransitions transitions;
    private final TransitionFeed feed;

    /**
     * @param delegate the store every call goes to
     * @throws NullPointerException if {@code delegate} is null
     */
    protected ForwardingStore(Store delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.recording = delegate.capability(AtomicRecording.class).orElse(null);
        this.claims = delegate.capability(TrialClaims.class).orElse(null);
        this.transitions = delegate.capability(AtomicTransitions.class).orElse(null);
        this.feed = delegate.capability(TransitionFeed.class).orElse(null);
    }

    /** The store every call goes to. */
    protected final Store delegate() {
        return delegate;
    }

    /**
     * Whether the delegate offers {@code type}, one of {@link AtomicRecording}, {@link TrialClaims},
     * {@link AtomicTransitions} and {@link TransitionFeed}.
     */
    protected final boolean delegateOffers(Class<?> type) {
        return forwarded(type) != null;
    }

    private Object forwarded(Class<?> type) {
        if (type == AtomicRecording.class) {
            return recording;
        }
        if (type == TrialClaims.class) {
            return claims;
        }
        if (type == AtomicTransitions.class) {
            return transitions;
        }
        if (type == TransitionFeed.class) {
            return feed;
        }
        return null;
    }

    private static boolean isCapabilityType(Class<?> type) {
        return type == AtomicRecording.class || type == TrialClaims.class || type == AtomicTransitions.class
                || type == TransitionFeed.class;
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        if (isCapabilityType(type)) {
            return forwarded(type) == null ? Optional.empty() : Optional.of(type.cast(this));
        }
        return delegate.capability(type);
    }

    private static <C> C need(C capability, Class<C> type) {
        if (capability == null) {
            throw new UnsupportedOperationException("the wrapped store does not offer " + type.getSimpleName());
        }
        return capability;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return delegate.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        delegate.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        delegate.delete(key);
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return need(recording, AtomicRecording.class).recordFailure(key, policy, now);
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return need(recording, AtomicRecording.class).recordSuccess(key, policy, now);
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return need(recording, AtomicRecording.class).recordOutcome(key, success, policy, now);
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        return need(claims, TrialClaims.class).claimTrial(key, permits, ttl);
    }

    @Override
    public void releaseTrial(String key, String token) {
        need(claims, TrialClaims.class).releaseTrial(key, token);
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return need(transitions, AtomicTransitions.class).trialSucceeded(key, trialVersion, policy, now);
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return need(transitions, AtomicTransitions.class).trialFailed(key, trialVersion, policy, now);
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return need(transitions, AtomicTransitions.class).force(key, status, policy, now);
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        return need(feed, TransitionFeed.class).subscribe(listener, onGap);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + delegate + "]";
    }
}
