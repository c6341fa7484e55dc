package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The store decorator behind {@link StoreErrorPolicy#LOCAL}: every operation goes to the real store first; when
 * the real store throws (any store error, {@link StoreErrors#isStoreError}: also a checked exception thrown
 * sneakily or a {@link LinkageError}), the error is reported and the operation runs against an in-process
 * {@link InMemoryStore} instead. It declares exactly the real store's capabilities, and the feed is the real
 * store's own (the in-process store's events are not the fleet's).
 *
 * <h2>An outage of a key</h2>
 * The first failure of a key starts its outage: the in-process state of the key is seeded, once, with the
 * last state this instance saw in the real store, before any operation of the outage runs on it (concurrent
 * callers wait for the seed, so none of their records is overwritten by it). During the outage:
 * <ul>
 * <li>writes (outcomes, claims, forced changes) still try the real store first; the first one the real store
 * accepts ends the outage: the real store is the truth again and nothing written in memory is replayed;</li>
 * <li>reads also try the real store. If only reads failed so far, a good read ends the outage. If a write
 * failed, a good read does not: a replica can answer reads while refusing writes (a Redis replica answering
 * READONLY after a fail-over), and failures counted in memory meanwhile must keep counting and open the
 * breaker. The read then answers with the in-process state, unless the real state moved to a newer version
 * during the outage (another instance's or an operator's transition), which then replaces the in-process
 * state.</li>
 * </ul>
 *
 * <h2>Memory</h2>
 * The healthy path (a good read, nothing to write) writes no shared map. The last states seen are kept only
 * for keys whose state matters for a seed (failures counted, open, samples): a key back to a plain closed
 * state is dropped. Outages end with the real store's recovery; {@link #forget(String)} drops a key the engine
 * evicted.
 */
final class DegradingStore extends ForwardingStore {
    private final InMemoryStore memory = new InMemoryStore();
    private final BiConsumer<String, Throwable> onError;
    private final ConcurrentHashMap<String, BreakerState> lastSeen = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Outage> outages = new ConcurrentHashMap<>();

    /**
     * @param real    the user's store
     * @param onError told of every error of the real store this decorator absorbed; must not throw
     */
    DegradingStore(Store real, BiConsumer<String, Throwable> onError) {
        super(real);
        this.onError = onError;
    }

    /** The outage of one key: its in-process state lives in {@link #memory} while this is registered. */
    private static final class Outage {
        boolean writeFailed;
        boolean ended;
        /** The last real state read during this outage (or the seed); null if none was seen. */
        BreakerState lastReal;

        Outage(BreakerState seed) {
            this.lastReal = seed;
        }
    }

    // ------------------------------------------------------------------------------------------------ reads

    @Override
    public Optional<BreakerState> get(String key) {
        Optional<BreakerState> real;
        try {
            real = Objects.requireNonNull(super.get(key), "the store answered null");
        } catch (Throwable e) {
            onError.accept(key, StoreErrors.storeError(e));
            return inMemory(key, false, () -> memory.get(key));
        }
        Outage o = outages.get(key);
        if (o == null) {
            remember(key, real.orElse(null));
            return real;
        }
        return afterGoodRead(key, o, real.orElse(null));
    }

    private Optional<BreakerState> afterGoodRead(String key, Outage o, BreakerState real) {
        synchronized (o) {
            if (!o.ended) {
                if (!o.writeFailed) {
                    end(key, o); // only reads failed, and the real store answers again
                } else {
                    // Moved on: a newer version than seen before, or (no seed: the key was plain or absent when
                    // the outage began) a state that is no longer plain.
                    boolean movedOn = real != null
                            && (o.lastReal != null ? real.version() > o.lastReal.version() : !isPlain(real));
                    if (movedOn) {
                        memory.delete(key); // a transition elsewhere since: it replaces what was counted here
                        memory.put(key, real, real.pinned() ? Duration.ofDays(365) : Duration.ofDays(1));
                    }
                    if (real != null) {
                        o.lastReal = real;
                    }
                    return memory.get(key);
                }
            }
        }
        remember(key, real);
        return Optional.ofNullable(real);
    }

    // ----------------------------------------------------------------------------------------------- writes

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        write(key, () -> {
            super.put(key, state, ttl);
            return state;
        }, () -> {
            memory.put(key, state, ttl);
            return state;
        });
    }

    @Override
    public void delete(String key) {
        write(key, () -> {
            super.delete(key);
            remember(key, null);
            return null;
        }, () -> {
            memory.delete(key);
            return null;
        });
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        return write(key, () -> Objects.requireNonNull(super.apply(key, operation, policy, now),
                "the store answered null"), () -> memory.apply(key, operation, policy, now));
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        // a claim is a write in the real store: its success ends an outage like any other write
        return write(key, () -> Objects.requireNonNull(super.claimTrial(key, permits, ttl), "the store answered null"),
                () -> memory.claimTrial(key, permits, ttl));
    }

    @Override
    public void releaseTrial(String key, String token) {
        // the token may come from either side; releasing an unknown token is a no-op on both
        memory.releaseTrial(key, token);
        try {
            super.releaseTrial(key, token);
        } catch (Throwable e) {
            onError.accept(key, StoreErrors.storeError(e)); // the real claim expires by itself; nothing to fall back to
        }
    }

    /** A write: the real store first; on its failure the in-process store, within the key's outage. */
    private <T> T write(String key, Supplier<T> onReal, Supplier<T> onMemory) {
        T result;
        try {
            result = onReal.get();
        } catch (Throwable e) {
            onError.accept(key, StoreErrors.storeError(e));
            return inMemory(key, true, onMemory);
        }
        Outage o = outages.get(key);
        if (o != null) {
            synchronized (o) {
                if (!o.ended) {
                    end(key, o); // the real store accepts writes again: it is the truth, nothing is replayed
                }
            }
        }
        if (result instanceof StateChange) {
            remember(key, ((StateChange) result).state());
        } else if (result instanceof BreakerState) {
            remember(key, (BreakerState) result); // a put
        }
        return result;
    }

    // ---------------------------------------------------------------------------------------------- outages

    /** Runs {@code op} on the in-process store within the key's outage, starting (and seeding) it if needed. */
    private <T> T inMemory(String key, boolean isWrite, Supplier<T> op) {
        while (true) {
            // The seed is written inside computeIfAbsent: every caller of this outage waits for it.
            Outage o = outages.computeIfAbsent(key, this::seed);
            synchronized (o) {
                if (o.ended) {
                    continue; // ended between lookup and lock: start a new outage
                }
                if (isWrite) {
                    o.writeFailed = true;
                }
                return op.get();
            }
        }
    }

    private Outage seed(String key) {
        BreakerState last = lastSeen.get(key);
        memory.delete(key);
        if (last != null) {
            memory.put(key, last, last.pinned() ? Duration.ofDays(365) : Duration.ofDays(1));
        }
        return new Outage(last);
    }

    /** Under the outage's monitor: drops the in-process state, then the outage (in this order, see seed). */
    private void end(String key, Outage o) {
        o.ended = true;
        memory.delete(key);
        outages.remove(key, o);
    }

    /** Keeps the last real state of a key when a seed would need it; never writes for a plain closed state. */
    private void remember(String key, BreakerState s) {
        if (s == null || isPlain(s)) {
            if (lastSeen.containsKey(key)) {
                lastSeen.remove(key);
            }
        } else if (!s.equals(lastSeen.get(key))) {
            lastSeen.put(key, s);
        }
    }

    /** A state a seed need not carry: closed, nothing counted, no window, no stored mode (the same as no state). */
    private static boolean isPlain(BreakerState s) {
        return !s.open() && s.failures() == 0 && s.samples() == 0 && s.openCount() == 0 && s.window() == null
                && s.mode() == BreakerMode.DEFAULT;
    }

    /** Drops what is kept for {@code key} (the engine evicted the operation). */
    void forget(String key) {
        lastSeen.remove(key);
        Outage o = outages.get(key);
        if (o != null) {
            synchronized (o) {
                if (!o.ended) {
                    end(key, o);
                }
            }
        }
    }

    /** Keys with a last state kept, plus keys in an outage (for tests of boundedness). */
    int trackedKeys() {
        return lastSeen.size() + outages.size();
    }

    @Override
    public void close() {
        try {
            super.close();
        } finally {
            memory.close();
        }
    }

    /** Closes the in-process store only; the real one belongs to the user ({@code closeStore(false)}). */
    void closeLocalOnly() {
        memory.close();
    }

    @Override
    public String toString() {
        return "DegradingStore[" + delegate() + "]";
    }
}
