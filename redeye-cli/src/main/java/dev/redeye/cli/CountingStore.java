package dev.redeye.cli;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * A store decorator for the simulation: counts every store operation the engine makes (the "store
 * operations per call" figure) and marks the calling thread while it holds a trial claim, which is how the
 * simulation knows, honestly, that a call reaching the dependency is a half-open trial.
 *
 * <p>{@link #capability(Class)} forwards exactly the capabilities of the wrapped store, each wrapped to
 * count, so atomic operations stay the wrapped store's atomic operations; a capability the wrapped store
 * lacks stays absent. The transition feed is forwarded unwrapped (subscribing is not a per-call cost).
 *
 * <p>Thread-safe; the counters are {@link LongAdder}s. The trial mark is a thread-local, valid because the
 * engine claims, runs and releases a synchronous trial on the caller's thread.
 */
final class CountingStore implements Store {

    /** Every kind of store operation counted. */
    enum Op {
        GET, PUT, DELETE, RECORD_FAILURE, RECORD_SUCCESS, RECORD_OUTCOME, CLAIM_TRIAL, RELEASE_TRIAL,
        TRIAL_SUCCEEDED, TRIAL_FAILED, FORCE
    }

    private static final ThreadLocal<String> TRIAL_TOKEN = new ThreadLocal<>();

    private final Store delegate;
    private final Map<Op, LongAdder> counts = new EnumMap<>(Op.class);
    private final Optional<AtomicRecording> recording;
    private final Optional<TrialClaims> claims;
    private final Optional<AtomicTransitions> transitions;

    CountingStore(Store delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        for (Op op : Op.values()) {
            counts.put(op, new LongAdder());
        }
        recording = delegate.capability(AtomicRecording.class).map(CountingRecording::new);
        claims = delegate.capability(TrialClaims.class).map(CountingClaims::new);
        transitions = delegate.capability(AtomicTransitions.class).map(CountingTransitions::new);
    }

    /** Whether the current thread holds a trial claim made through a counting store. */
    static boolean currentThreadIsTrial() {
        return TRIAL_TOKEN.get() != null;
    }

    /** Forgets the current thread's trial mark (a worker calls this after each call, whatever happened). */
    static void clearTrialMark() {
        TRIAL_TOKEN.remove();
    }

    /** Operations counted so far of one kind. */
    long count(Op op) {
        return counts.get(op).sum();
    }

    private void count1(Op op) {
        counts.get(op).increment();
    }

    @Override
    public Optional<BreakerState> get(String key) {
        count1(Op.GET);
        return delegate.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        count1(Op.PUT);
        delegate.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        count1(Op.DELETE);
        delegate.delete(key);
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        if (type == AtomicRecording.class) {
            return recording.map(type::cast);
        }
        if (type == TrialClaims.class) {
            return claims.map(type::cast);
        }
        if (type == AtomicTransitions.class) {
            return transitions.map(type::cast);
        }
        if (type == TransitionFeed.class) {
            return delegate.capability(type);
        }
        // A capability this decorator does not know: forward it as the wrapped store has it.
        return delegate.capability(type);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "CountingStore[" + delegate + "]";
    }

    private final class CountingRecording implements AtomicRecording {
        private final AtomicRecording d;

        CountingRecording(AtomicRecording d) {
            this.d = d;
        }

        @Override
        public StateChange recordFailure(String key, Policy policy, long now) {
            count1(Op.RECORD_FAILURE);
            return d.recordFailure(key, policy, now);
        }

        @Override
        public StateChange recordSuccess(String key, Policy policy, long now) {
            count1(Op.RECORD_SUCCESS);
            return d.recordSuccess(key, policy, now);
        }

        @Override
        public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
            count1(Op.RECORD_OUTCOME);
            return d.recordOutcome(key, success, policy, now);
        }
    }

    private final class CountingClaims implements TrialClaims {
        private final TrialClaims d;

        CountingClaims(TrialClaims d) {
            this.d = d;
        }

        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            count1(Op.CLAIM_TRIAL);
            Optional<String> token = d.claimTrial(key, permits, ttl);
            token.ifPresent(TRIAL_TOKEN::set);
            return token;
        }

        @Override
        public void releaseTrial(String key, String token) {
            count1(Op.RELEASE_TRIAL);
            if (token != null && token.equals(TRIAL_TOKEN.get())) {
                TRIAL_TOKEN.remove();
            }
            d.releaseTrial(key, token);
        }
    }

    private final class CountingTransitions implements AtomicTransitions {
        private final AtomicTransitions d;

        CountingTransitions(AtomicTransitions d) {
            this.d = d;
        }

        @Override
        public StateChange trialSucceeded(String key, Policy policy, long now) {
            count1(Op.TRIAL_SUCCEEDED);
            return d.trialSucceeded(key, policy, now);
        }

        @Override
        public StateChange trialFailed(String key, Policy policy, long now) {
            count1(Op.TRIAL_FAILED);
            return d.trialFailed(key, policy, now);
        }

        @Override
        public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
            count1(Op.FORCE);
            return d.force(key, status, policy, now);
        }
    }
}
