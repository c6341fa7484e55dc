package dev.redeye.tck.example;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A minimal store with the atomic capability and trial claims: one {@link ConcurrentHashMap} shared by every
 * client ({@link #newClient()}), every method one {@code compute} of the key's entry, so each is atomic per
 * key. An entry outlives its state (deleted or expired) to remember the version a new life of the key starts
 * at: above every version the key had.
 */
public final class MapStore implements Store, AtomicUpdates, TrialClaims {

    /** A key: its state (null when none), when that expires, where a new life starts, its live claims. */
    private static final class Entry {
        BreakerState state;
        long expiresAt;
        long newLifeVersion;
        final Map<String, Long> claims = new HashMap<>(); // token -> expiry, System.nanoTime()

        /**
         * Drops the state once its ttl passed (a pinned state, forced or in an operator's mode, never expires) and
         * the expired claims.
         */
        Entry expire(long nanos) {
            if (state != null && !state.pinned() && nanos - expiresAt >= 0) {
                drop();
            }
            claims.values().removeIf(at -> nanos - at >= 0);
            return this;
        }

        void write(BreakerState s, Duration ttl, long nanos) {
            state = s;
            expiresAt = nanos + ttl.toNanos();
        }

        void drop() {
            if (state != null) {
                newLifeVersion = Math.max(newLifeVersion, state.version() + 1);
                state = null;
            }
        }
    }

    private final ConcurrentHashMap<String, Entry> entries;
    private volatile boolean closed;

    /** A store of its own. */
    public MapStore() {
        this(new ConcurrentHashMap<>());
    }

    private MapStore(ConcurrentHashMap<String, Entry> entries) {
        this.entries = entries;
    }

    /** Another client of the same data, closed on its own (as another process's connection would be). */
    public MapStore newClient() {
        return new MapStore(entries);
    }

    /**
     * Runs {@code action} on the key's entry, its expired parts dropped first, as one atomic step; on an
     * absent key it makes the entry if {@code create}, else answers {@code absent}.
     */
    private <T> T atomically(String key, boolean create, T absent, Function<Entry, T> action) {
        Objects.requireNonNull(key, "key");
        if (closed) {
            throw new StoreException("MapStore is closed");
        }
        Object[] result = {absent};
        BiFunction<String, Entry, Entry> step = (k, e) -> {
            Entry entry = (e == null ? new Entry() : e).expire(System.nanoTime());
            result[0] = action.apply(entry);
            return entry;
        };
        if (create) {
            entries.compute(key, step);
        } else {
            entries.computeIfPresent(key, step);
        }
        @SuppressWarnings("unchecked")
        T out = (T) result[0];
        return out;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return atomically(key, false, Optional.empty(), e -> Optional.ofNullable(e.state));
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(ttl, "ttl");
        atomically(key, true, null, e -> {
            e.write(state, ttl, System.nanoTime());
            return null;
        });
    }

    @Override
    public void delete(String key) {
        atomically(key, false, null, e -> {
            e.drop();
            e.claims.clear();
            return null;
        });
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(policy, "policy");
        return atomically(key, true, null, e -> {
            BreakerState current = e.state != null ? e.state : BreakerState.initial(e.newLifeVersion);
            StateChange change = operation.apply(current, policy, now);
            if (change.changed()) {
                e.write(change.state(), policy.stateTtl(), System.nanoTime());
            }
            if (operation.removesClaims()) {
                e.claims.clear();
            }
            return change;
        });
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        if (permits < 1 || ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("permits must be >= 1 and ttl positive: " + permits + ", " + ttl);
        }
        return atomically(key, true, null, e -> {
            if (e.claims.size() >= permits) {
                return Optional.empty();
            }
            String token = UUID.randomUUID().toString();
            e.claims.put(token, System.nanoTime() + ttl.toNanos());
            return Optional.of(token);
        });
    }

    @Override
    public void releaseTrial(String key, String token) {
        atomically(key, false, null, e -> e.claims.remove(token));
    }

    @Override
    public void close() {
        closed = true;
    }
}
