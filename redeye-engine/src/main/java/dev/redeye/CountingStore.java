package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreOperation;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * A store decorator that counts every store operation by SPI method, and the updates by rule: what "store operations per call" means
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

    /**
     * Told of each counted operation, after it returned, on the thread that made it. Must be quick and must
     * not throw.
     */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param op    the operation
         * @param key   the operation name it was made for ({@code null} for {@link StoreOperation#SUBSCRIBE} and
         *              {@link StoreOperation#LIST_PAGE})
         * @param token for {@link StoreOperation#CLAIM_TRIAL} the token won ({@code null} if the claim was
         *              refused); for {@link StoreOperation#RELEASE_TRIAL} the token released; {@code null}
         *              otherwise
         */
        void after(StoreOperation op, String key, String token);
    }

    private static final Listener NONE = (op, key, token) -> { };
    private static final int OPS = StoreOperation.values().length;

    private final Listener listener;
    /** One counter per {@link StoreOperation}, then one per {@link AtomicOperation.Kind} of the updates. */
    private final LongAdder[] counts = new LongAdder[OPS + AtomicOperation.Kind.values().length];

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

    /** The count so far of one operation ({@link StoreOperation#UPDATE}: every update, whatever its rule). */
    public long countOf(StoreOperation op) {
        return counts[op.ordinal()].sum();
    }

    /** The count so far of the updates applying one rule. */
    public long countOf(AtomicOperation.Kind rule) {
        return counts[OPS + rule.ordinal()].sum();
    }

    /** The counts so far; a consistent-enough snapshot once the calls being counted are done. */
    public Counts snapshot() {
        long[] out = new long[counts.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = counts[i].sum();
        }
        return new Counts(out);
    }

    private <T> T counted(StoreOperation op, String key, java.util.function.Supplier<T> call) {
        counts[op.ordinal()].increment();
        T out = call.get();
        listener.after(op, key, null);
        return out;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return counted(StoreOperation.GET, key, () -> super.get(key));
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        counted(StoreOperation.PUT, key, () -> {
            super.put(key, state, ttl);
            return null;
        });
    }

    @Override
    public void delete(String key) {
        counted(StoreOperation.DELETE, key, () -> {
            super.delete(key);
            return null;
        });
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        counts[OPS + operation.kind().ordinal()].increment();
        return counted(StoreOperation.UPDATE, key, () -> super.apply(key, operation, policy, now));
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        counts[StoreOperation.CLAIM_TRIAL.ordinal()].increment();
        Optional<String> out = super.claimTrial(key, permits, ttl);
        listener.after(StoreOperation.CLAIM_TRIAL, key, out.orElse(null));
        return out;
    }

    @Override
    public void releaseTrial(String key, String token) {
        counts[StoreOperation.RELEASE_TRIAL.ordinal()].increment();
        super.releaseTrial(key, token);
        listener.after(StoreOperation.RELEASE_TRIAL, key, token);
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> eventListener, Runnable onGap) {
        return counted(StoreOperation.SUBSCRIBE, null, () -> super.subscribe(eventListener, onGap));
    }

    @Override
    public Page page(String cursor, int limit) {
        return counted(StoreOperation.LIST_PAGE, null, () -> super.page(cursor, limit));
    }

    /** An immutable snapshot of the counts. */
    public static final class Counts {
        private final long[] values;

        Counts(long[] values) {
            this.values = values;
        }

        /** The count of one operation. */
        public long get(StoreOperation op) {
            return values[op.ordinal()];
        }

        /** The count of the updates applying one rule. */
        public long get(AtomicOperation.Kind rule) {
            return values[OPS + rule.ordinal()];
        }

        /** Every operation counted (reads, writes, claims; not {@link StoreOperation#SUBSCRIBE}). */
        public long total() {
            long t = 0;
            for (StoreOperation op : StoreOperation.values()) {
                if (op != StoreOperation.SUBSCRIBE) {
                    t += get(op);
                }
            }
            return t;
        }

        /** Reads: {@link StoreOperation#GET} and the pages of listings ({@link StoreOperation#LIST_PAGE}). */
        public long reads() {
            return get(StoreOperation.GET) + get(StoreOperation.LIST_PAGE);
        }

        /** Operations that may write: everything but reads, claims, releases and subscriptions. */
        public long writes() {
            return total() - reads() - get(StoreOperation.CLAIM_TRIAL) - get(StoreOperation.RELEASE_TRIAL);
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
        public Map<StoreOperation, Long> nonZero() {
            Map<StoreOperation, Long> out = new EnumMap<>(StoreOperation.class);
            for (StoreOperation op : StoreOperation.values()) {
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
