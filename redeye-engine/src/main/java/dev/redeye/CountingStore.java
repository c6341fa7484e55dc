package dev.redeye;

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
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * A store decorator that counts every store operation by method: what "store operations per call" means
 * for a breaker, measured rather than assumed (the fleet simulation and the benchmarks report it, and an
 * application can wrap its store in one to watch its own cost).
 *
 * <p>It forwards {@link #capability(Class)}: each capability the wrapped store offers is returned wrapped in
 * a counting view of that same capability, so atomic operations stay atomic (they still run in the wrapped
 * store) and are counted too; a capability the wrapped store lacks stays absent.
 *
 * <p>Thread-safe (one {@link LongAdder} per method). Counting costs a few nanoseconds per operation, nothing
 * next to a store round trip. An optional {@link Listener} is told of each operation on the calling thread.
 * {@link #close()} closes the wrapped store.
 */
public final class CountingStore implements Store {

    /** The store operations counted, one per SPI method. */
    public enum Op {
        GET, PUT, DELETE,
        RECORD_FAILURE, RECORD_SUCCESS, RECORD_OUTCOME,
        CLAIM_TRIAL, RELEASE_TRIAL,
        TRIAL_SUCCEEDED, TRIAL_FAILED, FORCE,
        SUBSCRIBE;

        /** Whether this operation only reads (everything else may write). */
        public boolean isRead() {
            return this == GET;
        }
    }

    /**
     * Told of each counted operation, after it returned, on the thread that made it. Must be quick and must
     * not throw.
     */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param op    the operation
         * @param key   the operation name it was made for ({@code null} for {@link Op#SUBSCRIBE})
         * @param token for {@link Op#CLAIM_TRIAL} the token won ({@code null} if the claim was refused); for
         *              {@link Op#RELEASE_TRIAL} the token released; {@code null} otherwise
         */
        void after(Op op, String key, String token);
    }

    private static final Listener NONE = (op, key, token) -> { };

    private final Store delegate;
    private final Listener listener;
    private final LongAdder[] counts = new LongAdder[Op.values().length];

    /**
     * @param delegate the store to count; its capabilities are forwarded
     * @throws NullPointerException if {@code delegate} is null
     */
    public CountingStore(Store delegate) {
        this(delegate, NONE);
    }

    /**
     * @param delegate the store to count; its capabilities are forwarded
     * @param listener told of each operation after it returned
     * @throws NullPointerException if an argument is null
     */
    public CountingStore(Store delegate, Listener listener) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.listener = Objects.requireNonNull(listener, "listener");
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    private void count(Op op) {
        counts[op.ordinal()].increment();
    }

    /** The count so far of one operation. */
    public long countOf(Op op) {
        return counts[op.ordinal()].sum();
    }

    /** The counts so far, by operation; a consistent-enough snapshot once the calls being counted are done. */
    public Counts snapshot() {
        long[] out = new long[counts.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = counts[i].sum();
        }
        return new Counts(out);
    }

    @Override
    public Optional<BreakerState> get(String key) {
        count(Op.GET);
        Optional<BreakerState> out = delegate.get(key);
        listener.after(Op.GET, key, null);
        return out;
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        count(Op.PUT);
        delegate.put(key, state, ttl);
        listener.after(Op.PUT, key, null);
    }

    @Override
    public void delete(String key) {
        count(Op.DELETE);
        delegate.delete(key);
        listener.after(Op.DELETE, key, null);
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        Optional<C> inner = delegate.capability(type);
        if (inner.isEmpty()) {
            return inner;
        }
        Object wrapped;
        if (type == AtomicRecording.class) {
            wrapped = new Recording((AtomicRecording) inner.get());
        } else if (type == TrialClaims.class) {
            wrapped = new Claims((TrialClaims) inner.get());
        } else if (type == AtomicTransitions.class) {
            wrapped = new CountingTransitions((AtomicTransitions) inner.get());
        } else if (type == TransitionFeed.class) {
            wrapped = new Feed((TransitionFeed) inner.get());
        } else {
            return inner; // a capability this decorator does not know: forwarded uncounted
        }
        return Optional.of(type.cast(wrapped));
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "CountingStore[" + delegate + "]";
    }

    /** An immutable snapshot of the counts, by {@link Op}. */
    public static final class Counts {
        private final long[] values;

        Counts(long[] values) {
            this.values = values;
        }

        /** The count of one operation. */
        public long get(Op op) {
            return values[op.ordinal()];
        }

        /** Every operation counted (reads, writes, claims; not {@link Op#SUBSCRIBE}). */
        public long total() {
            long t = 0;
            for (Op op : Op.values()) {
                if (op != Op.SUBSCRIBE) {
                    t += get(op);
                }
            }
            return t;
        }

        /** Reads ({@link Op#GET}). */
        public long reads() {
            return get(Op.GET);
        }

        /** Operations that may write: everything but reads, claims, releases and subscriptions. */
        public long writes() {
            return total() - reads() - get(Op.CLAIM_TRIAL) - get(Op.RELEASE_TRIAL);
        }

        /** This snapshot minus an earlier one. */
        public Counts minus(Counts earlier) {
            long[] out = new long[values.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = values[i] - earlier.values[i];
            }
            return new Counts(out);
        }

        /** The non-zero counts by operation, in declaration order. */
        public Map<Op, Long> nonZero() {
            Map<Op, Long> out = new EnumMap<>(Op.class);
            for (Op op : Op.values()) {
                if (get(op) != 0) {
                    out.put(op, get(op));
                }
            }
            return out;
        }

        @Override
        public String toString() {
            return nonZero().toString();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Counts && Arrays.equals(values, ((Counts) o).values);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(values);
        }
    }

    private final class Recording implements AtomicRecording {
        private final AtomicRecording inner;

        Recording(AtomicRecording inner) {
            this.inner = inner;
        }

        @Override
        public StateChange recordFailure(String key, Policy policy, long now) {
            count(Op.RECORD_FAILURE);
            StateChange out = inner.recordFailure(key, policy, now);
            listener.after(Op.RECORD_FAILURE, key, null);
            return out;
        }

        @Override
        public StateChange recordSuccess(String key, Policy policy, long now) {
            count(Op.RECORD_SUCCESS);
            StateChange out = inner.recordSuccess(key, policy, now);
            listener.after(Op.RECORD_SUCCESS, key, null);
            return out;
        }

        @Override
        public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
            count(Op.RECORD_OUTCOME);
            StateChange out = inner.recordOutcome(key, success, policy, now);
            listener.after(Op.RECORD_OUTCOME, key, null);
            return out;
        }
    }

    private final class Claims implements TrialClaims {
        private final TrialClaims inner;

        Claims(TrialClaims inner) {
            this.inner = inner;
        }

        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            count(Op.CLAIM_TRIAL);
            Optional<String> out = inner.claimTrial(key, permits, ttl);
            listener.after(Op.CLAIM_TRIAL, key, out.orElse(null));
            return out;
        }

        @Override
        public void releaseTrial(String key, String token) {
            count(Op.RELEASE_TRIAL);
            inner.releaseTrial(key, token);
            listener.after(Op.RELEASE_TRIAL, key, token);
        }
    }

    private final class CountingTransitions implements AtomicTransitions {
        private final AtomicTransitions inner;

        CountingTransitions(AtomicTransitions inner) {
            this.inner = inner;
        }

        @Override
        public StateChange trialSucceeded(String key, Policy policy, long now) {
            count(Op.TRIAL_SUCCEEDED);
            StateChange out = inner.trialSucceeded(key, policy, now);
            listener.after(Op.TRIAL_SUCCEEDED, key, null);
            return out;
        }

        @Override
        public StateChange trialFailed(String key, Policy policy, long now) {
            count(Op.TRIAL_FAILED);
            StateChange out = inner.trialFailed(key, policy, now);
            listener.after(Op.TRIAL_FAILED, key, null);
            return out;
        }

        @Override
        public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
            count(Op.FORCE);
            StateChange out = inner.force(key, status, policy, now);
            listener.after(Op.FORCE, key, null);
            return out;
        }
    }

    private final class Feed implements TransitionFeed {
        private final TransitionFeed inner;

        Feed(TransitionFeed inner) {
            this.inner = inner;
        }

        @Override
        public Subscription subscribe(Consumer<TransitionEvent> eventListener, Runnable onGap) {
            count(Op.SUBSCRIBE);
            Subscription out = inner.subscribe(eventListener, onGap);
            CountingStore.this.listener.after(Op.SUBSCRIBE, null, null);
            return out;
        }
    }
}
