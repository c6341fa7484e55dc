package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.ForwardingStore;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionEvent;
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
 * <p>It declares exactly the capabilities of the wrapped store ({@link ForwardingStore}): atomic operations
 * stay atomic (they still run in the wrapped store) and are counted too; a capability the wrapped store lacks
 * stays absent.
 *
 * <p>Thread-safe (one {@link LongAdder} per method). Counting costs a few nanoseconds per operation, nothing
 * next to a store round trip. An optional {@link Listener} is told of each operation on the calling thread.
 * {@link #close()} closes the wrapped store.
 */
public final class CountingStore extends ForwardingStore {

    /** The store operations counted, one per SPI method. */
    public enum Op {
        GET, PUT, DELETE,
        RECORD_FAILURE, RECORD_SUCCESS, RECORD_OUTCOME,
        CLAIM_TRIAL, RELEASE_TRIAL,
        TRIAL_SUCCEEDED, TRIAL_FAILED, FORCE,
        SUBSCRIBE
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
        super(delegate);
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

    private <T> T counted(Op op, String key, java.util.function.Supplier<T> call) {
        count(op);
        T out = call.get();
        listener.after(op, key, null);
        return out;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return counted(Op.GET, key, () -> super.get(key));
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        counted(Op.PUT, key, () -> {
            super.put(key, state, ttl);
            return null;
        });
    }

    @Override
    public void delete(String key) {
        counted(Op.DELETE, key, () -> {
            super.delete(key);
            return null;
        });
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return counted(Op.RECORD_FAILURE, key, () -> super.recordFailure(key, policy, now));
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return counted(Op.RECORD_SUCCESS, key, () -> super.recordSuccess(key, policy, now));
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return counted(Op.RECORD_OUTCOME, key, () -> super.recordOutcome(key, success, policy, now));
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        count(Op.CLAIM_TRIAL);
        Optional<String> out = super.claimTrial(key, permits, ttl);
        listener.after(Op.CLAIM_TRIAL, key, out.orElse(null));
        return out;
    }

    @Override
    public void releaseTrial(String key, String token) {
        count(Op.RELEASE_TRIAL);
        super.releaseTrial(key, token);
        listener.after(Op.RELEASE_TRIAL, key, token);
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return counted(Op.TRIAL_SUCCEEDED, key, () -> super.trialSucceeded(key, trialVersion, policy, now));
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return counted(Op.TRIAL_FAILED, key, () -> super.trialFailed(key, trialVersion, policy, now));
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return counted(Op.FORCE, key, () -> super.force(key, status, policy, now));
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> eventListener, Runnable onGap) {
        return counted(Op.SUBSCRIBE, null, () -> super.subscribe(eventListener, onGap));
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
}
