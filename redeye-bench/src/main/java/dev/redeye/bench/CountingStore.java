package dev.redeye.bench;

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
 * A store decorator that counts every store operation by method, for the "store operations per call" table.
 * It forwards {@link #capability(Class)}: each capability the wrapped store offers is returned wrapped in a
 * counting view of that same capability, so atomic operations stay atomic (they still run in the wrapped
 * store) and are counted too; a capability the wrapped store lacks stays absent.
 *
 * <p>Thread-safe (one {@link LongAdder} per method). Counting costs a few nanoseconds per operation, nothing
 * next to a store round trip. {@link #close()} closes the wrapped store.
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

    private final Store delegate;
    private final LongAdder[] counts = new LongAdder[Op.values().length];

    /**
     * @param delegate the store to count; its capabilities are forwarded
     * @throws NullPointerException if {@code delegate} is null
     */
    public CountingStore(Store delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    private void count(Op op) {
        counts[op.ordinal()].increment();
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
        return delegate.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        count(Op.PUT);
        delegate.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        count(Op.DELETE);
        delegate.delete(key);
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
            wrapped = new Transitions((AtomicTransitions) inner.get());
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
            return inner.recordFailure(key, policy, now);
        }

        @Override
        public StateChange recordSuccess(String key, Policy policy, long now) {
            count(Op.RECORD_SUCCESS);
            return inner.recordSuccess(key, policy, now);
        }

        @Override
        public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
            count(Op.RECORD_OUTCOME);
            return inner.recordOutcome(key, success, policy, now);
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
            return inner.claimTrial(key, permits, ttl);
        }

        @Override
        public void releaseTrial(String key, String token) {
            count(Op.RELEASE_TRIAL);
            inner.releaseTrial(key, token);
        }
    }

    private final class Transitions implements AtomicTransitions {
        private final AtomicTransitions inner;

        Transitions(AtomicTransitions inner) {
            this.inner = inner;
        }

        @Override
        public StateChange trialSucceeded(String key, Policy policy, long now) {
            count(Op.TRIAL_SUCCEEDED);
            return inner.trialSucceeded(key, policy, now);
        }

        @Override
        public StateChange trialFailed(String key, Policy policy, long now) {
            count(Op.TRIAL_FAILED);
            return inner.trialFailed(key, policy, now);
        }

        @Override
        public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
            count(Op.FORCE);
            return inner.force(key, status, policy, now);
        }
    }

    private final class Feed implements TransitionFeed {
        private final TransitionFeed inner;

        Feed(TransitionFeed inner) {
            this.inner = inner;
        }

        @Override
        public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
            count(Op.SUBSCRIBE);
            return inner.subscribe(listener, onGap);
        }
    }
}
