package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.query.PagingPredicate;
import com.hazelcast.query.Predicate;
import com.hazelcast.query.Predicates;
import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.Arguments;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A redeye {@link Store} on Hazelcast 5 (community edition) over a user-given {@link HazelcastInstance}: an
 * embedded member or a client. It offers every capability: {@link AtomicUpdates},
 * {@link TrialClaims}, {@link TransitionFeed}, {@link QuorumState} (a state's contributions are kept in its
 * value, format 4, in both modes), {@link OperationListing} (a paged query by key, in both modes) and
 * {@link OutcomeBatches} (a batch of outcomes is folded in one atomic step on the entry: one entry processor in
 * native mode, one compare-and-set loop in CAS mode). The stored layout is documented in the
 * {@linkplain dev.redeye.store.hazelcast package Javadoc}.
 *
 * <pre>{@code
 * HazelcastInstance client = HazelcastClient.newHazelcastClient(clientConfig);   // or an embedded member
 * HazelcastStore store = HazelcastStore.builder(client).map("redeye").build();   // does not shut the client down
 * }</pre>
 *
 * <p><b>Two modes, one layout.</b> In <em>native</em> mode every call is an entry processor that applies the
 * shared {@code Transitions} rule on the member owning the key: one network hop. It needs this jar and
 * {@code redeye-api} on every member's class path and {@link RedeyeSerializableFactory} registered in every
 * member's serialization configuration (an embedded member: {@link RedeyeSerializableFactory#register}). In
 * <em>CAS</em> mode, for members that cannot run redeye's classes (a managed cluster, the official image), the
 * rule runs on the client between a {@code get} and one conditional write ({@code replace(key, old, new)},
 * {@code putIfAbsent} or {@code remove(key, old)}), retried on a lost race up to
 * {@link Builder#casAttempts(int)} times. Both modes store the same {@code String} values, so clients of either
 * mode share a map. Every call is one atomic step on one entry: an operation's state, its expiry and its trial
 * claims share the entry, so that forcing CLOSED or deleting removes the claims in the same write, and no second
 * step can give a forced state an expiry.
 *
 * <p>{@link Mode#AUTO} (the default) probes every data member at {@link Builder#build()} with a read-only
 * processor and picks native only if all of them run it; a call that later meets a member that cannot (one that
 * joined since) switches this store to CAS mode, logs one warning and is retried: no call fails because members
 * lack the classes. {@link #toString()} and one INFO line at open say which mode runs and why. The CP subsystem,
 * User Code Namespaces and User Code Deployment are not used.
 *
 * <p><b>What it refuses.</b> {@link Builder#build()} throws {@link IllegalArgumentException} when the instance
 * has a near cache configured for the map (reads would be stale, and CAS mode would compare against a stale value
 * until it gives up), and when the map is configured to expire or evict entries by itself (time-to-live, max-idle,
 * an eviction policy: a forced state or a live claim would vanish); see {@link MapChecks}.
 *
 * <p><b>Cost</b> (store operations per call, measured by the module's tests): native mode: every call 1 (one
 * entry processor, {@link #get} included: it judges expiry by the cluster clock, as the writes do); CAS mode:
 * {@link #get} 1, a write 2 (get, then replace, putIfAbsent or remove), 1 when
 * nothing changes, plus 2 per lost race. The feed costs one entry listener and one thread
 * per store instance, started by the first {@link #subscribe}.
 *
 * <p><b>Errors.</b> Every Hazelcast failure (an unreachable cluster, a timeout, a shut-down instance),
 * malformed data under a key, a value written by an incompatible redeye version and any use after
 * {@link #close()} is a {@link StoreException}. Bad arguments are {@link NullPointerException} /
 * {@link IllegalArgumentException}; an operation name that is not well-formed UTF-16 is refused (Hazelcast
 * encodes keys as UTF-8, where an unpaired surrogate would merge two names).
 *
 * <p><b>Threads.</b> Thread-safe. Feed callbacks run on the store's feed thread.
 */
public final class HazelcastStore implements Store, AtomicUpdates, TrialClaims, TransitionFeed, QuorumState,
        OperationListing, OutcomeBatches {
    private static final Logger LOG = LoggerFactory.getLogger(HazelcastStore.class);

    /** How the store changes the maps; see the class Javadoc. */
    public enum Mode {
        /** Native if every data member runs redeye's entry processors (probed at open), else CAS. */
        AUTO,
        /** Entry processors on the members, without a probe at open (still falls back to CAS on a call). */
        NATIVE,
        /** Compare-and-set from the client; never sends a redeye class to a member. */
        CAS
    }

    private final HazelcastInstance hz;
    private final boolean closeInstance;
    private final IMap<String, Object> states;
    private final CasOperations cas;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object feedLock = new Object();
    private volatile Operations ops;
    private volatile String why;
    private HazelcastFeed feed; // guarded by feedLock

    private HazelcastStore(Builder b) {
        this.hz = b.hz;
        this.closeInstance = b.closeInstance;
        try {
            this.states = hz.getMap(b.map);
        } catch (RuntimeException e) {
            throw new StoreException("cannot open Hazelcast map '" + b.map + "': " + e.getMessage(), e);
        }
        MapChecks.refuseUnsafe(hz, states);
        long tombstoneTtl = b.tombstoneTtl.toMillis();
        this.cas = new CasOperations(states, tombstoneTtl, b.casAttempts);
        Operations natives = new NativeOperations(states, tombstoneTtl);
        switch (b.mode) {
            case CAS:
                ops = cas;
                why = "chosen by the caller";
                break;
            case NATIVE:
                ops = natives;
                why = "chosen by the caller, members not probed";
                break;
            default:
                String cannot = MemberProbe.whyNotNative(hz, states);
                ops = cannot == null ? natives : cas;
                why = cannot == null ? "every data member runs redeye's entry processors" : cannot;
                break;
        }
        LOG.info("redeye HazelcastStore on map '{}': {} mode ({})", b.map, ops.mode(), why);
    }

    /**
     * A builder over {@code hz}, a member or a client. The store does not shut the instance down unless
     * {@link Builder#closeInstance(boolean)} says so.
     *
     * @throws NullPointerException if {@code hz} is null
     */
    public static Builder builder(HazelcastInstance hz) {
        return new Builder(hz);
    }

    /**
     * Opens a store for a {@code hazelcast://} URI with its own client, shut down with the store; the same as
     * {@code Stores.open(uri)} with this module on the class path. See {@link HazelcastStoreProvider}.
     *
     * @throws IllegalArgumentException if the URI is malformed (the message never contains a password)
     * @throws StoreException           if the cluster cannot be reached
     */
    public static HazelcastStore open(String uri) {
        return new HazelcastStoreProvider().open(uri);
    }

    /** The name of the map holding the states and their trial claims. */
    public String mapName() {
        return states.getName();
    }

    /** The mode in use now: {@link Mode#NATIVE} or {@link Mode#CAS} (never AUTO). */
    public Mode mode() {
        return ops == cas ? Mode.CAS : Mode.NATIVE;
    }

    /** The Hazelcast instance this store works through. */
    public HazelcastInstance instance() {
        return hz;
    }

    /** Whether this instance's feed thread is running (started by the first subscribe, stopped by close). */
    public boolean isFeedAlive() {
        synchronized (feedLock) {
            return feed != null && feed.isAlive();
        }
    }

    // ---------------------------------------------------------------- Store

    /**
     * {@inheritDoc} One read: an entry processor that writes nothing (native mode) or a {@code get} (CAS mode).
     * A state whose expiry (stored in the value) has passed reads as absent, judged by the clock the mode's
     * writes store it with: the cluster clock in native mode, this client's in CAS mode, so that a read and the
     * next write agree on it.
     */
    @Override
    public Optional<BreakerState> get(String key) {
        check(key);
        return atomic("get", key, o -> o.get(key));
    }

    /**
     * {@inheritDoc} One entry processor (native) or a CAS loop, since the key's trial claims share its entry and
     * stay; a pinned state (forced, or a stored mode) is stored without expiry, whatever {@code ttl} says. Malformed data under the key is
     * overwritten. A put is not a transition and produces no feed event.
     *
     * @throws IllegalArgumentException if {@code ttl} is not positive
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        check(key);
        Objects.requireNonNull(state, "state");
        long ttlMillis = positiveMillis(ttl, "ttl");
        atomic("put", key, o -> {
            o.put(key, state, ttlMillis);
            return null;
        });
    }

    /**
     * {@inheritDoc} Replaces the state by a tombstone that remembers its version (for the tombstone ttl, see
     * {@link Builder#tombstoneTtl(Duration)}), so the key's next life starts above it, and removes the key's
     * claims, in one write.
     */
    @Override
    public void delete(String key) {
        check(key);
        atomic("delete", key, o -> {
            o.delete(key);
            return null;
        });
    }

    /**
     * Removes the feed's listeners from Hazelcast, ends every subscription, stops the feed thread, and shuts
     * the instance down if this store owns it. Idempotent; never throws.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        HazelcastFeed f;
        synchronized (feedLock) {
            f = feed;
            feed = null;
        }
        if (f != null) {
            f.close();
        }
        if (closeInstance) {
            try {
                hz.shutdown();
            } catch (RuntimeException e) {
                LOG.debug("shutting the Hazelcast instance down failed", e);
            }
        }
    }

    // ---------------------------------------------------------------- AtomicUpdates

    /**
     * {@inheritDoc} One entry processor (native) or a CAS loop; nothing is written when nothing changes. A
     * pinned state ({@link BreakerState#pinned()}: forced OPEN, or a mode an operator stored) is stored without
     * expiry, and so is every later write while it stays pinned. An operation that
     * {@linkplain AtomicOperation#removesClaims() removes the claims} (forcing CLOSED or HALF_OPEN, storing a
     * mode) removes them in the same write as the state change. A batch of outcomes ({@link OutcomeBatches}) is
     * one such step: the member (native) or this client (CAS) folds its outcomes, each at its own instant, and
     * writes the state after the last one once.
     */
    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        String what = operation.kind().method();
        check(key);
        Objects.requireNonNull(policy, "policy");
        return atomic(what, key, o -> o.change(key, operation, policy, now));
    }

    // ---------------------------------------------------------------- TrialClaims

    /**
     * {@inheritDoc} One entry processor on the operation's entry (native; expiry judged by the cluster clock) or a
     * CAS loop (expiry judged by this client's clock); the state is left as it is. The token is a random UUID.
     */
    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        check(key);
        Arguments.atLeast("permits", permits, 1);
        long ttlMillis = positiveMillis(ttl, "ttl");
        String token = UUID.randomUUID().toString();
        boolean won = atomic("claimTrial", key, o -> o.claim(key, token, permits, ttlMillis));
        return won ? Optional.of(token) : Optional.empty();
    }

    /** {@inheritDoc} Compare-and-delete of this token only: one entry processor (native) or a CAS loop. */
    @Override
    public void releaseTrial(String key, String token) {
        check(key);
        Objects.requireNonNull(token, "token");
        atomic("releaseTrial", key, o -> {
            o.release(key, token);
            return null;
        });
    }

    // ---------------------------------------------------------------- OperationListing

    /** What starts a cursor: then the last key of the page before, as it is. */
    private static final String CURSOR = "h1:";

    /**
     * {@inheritDoc} One query per page in both modes (it runs no redeye class on the members): a
     * {@link PagingPredicate} of {@code limit} entries over the keys after the cursor ({@code __key} greater than
     * it), sorted by key ({@link String#compareTo}), the cursor being the last key of the page. The values come
     * with the keys; tombstones, claims-only entries and states whose expiry (kept in the value) has passed are
     * left out, judged by the clock the mode's reads use (the cluster clock in native mode, this client's in CAS
     * mode), so a page may hold fewer entries than {@code limit} before the end. A query fans out to every member
     * (each one's partitions), so a page costs about one operation per member.
     */
    @Override
    public Page page(String cursor, int limit) {
        OperationListing.checkLimit(limit);
        if (cursor != null && !cursor.startsWith(CURSOR)) {
            throw new IllegalArgumentException("not a cursor of this store's listings: "
                    + OperationNames.abbreviate(cursor));
        }
        String after = cursor == null ? null : cursor.substring(CURSOR.length());
        checkOpen();
        Predicate<String, Object> keys = after == null ? Predicates.alwaysTrue()
                : Predicates.greaterThan("__key", after);
        PagingPredicate<String, Object> paging = Predicates.pagingPredicate(keys, limit);
        Collection<Map.Entry<String, Object>> found = call("page", after == null ? "" : after,
                () -> states.entrySet(paging));
        long clock = ops == cas ? System.currentTimeMillis() : hz.getCluster().getClusterTime();
        List<Entry> out = new ArrayList<>(found.size());
        String last = null;
        for (Map.Entry<String, Object> e : found) {
            String name = e.getKey();
            if (last != null && name.compareTo(last) <= 0) {
                throw new StoreException("hazelcast listing of map '" + mapName() + "' returned keys out of order");
            }
            last = name;
            BreakerState live;
            try {
                live = StateValues.decode(e.getValue(), StateValues.where(name)).live(clock);
            } catch (StoreException malformed) {
                out.add(Entry.nameOnly(name)); // get tells what is wrong with it
                continue;
            }
            if (live != null) {
                out.add(new Entry(name, live));
            }
        }
        return new Page(out, found.size() < limit || last == null ? null : CURSOR + last);
    }

    // ---------------------------------------------------------------- TransitionFeed

    /**
     * {@inheritDoc} The first call registers this store's one entry listener on the state map (synchronously:
     * every transition written after this method returns is delivered) and starts the feed thread.
     *
     * @throws StoreException       if the store is closed or the listener cannot be registered
     * @throws NullPointerException if an argument is null
     */
    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        synchronized (feedLock) {
            checkOpen();
            if (feed == null) {
                feed = new HazelcastFeed(hz, states, mapName());
            }
            return feed.add(listener, onGap);
        }
    }

    /** Names the map, the mode and why, and the instance; never credentials. */
    @Override
    public String toString() {
        return "HazelcastStore[map=" + mapName() + ", mode=" + ops.mode() + " (" + why + "), instance=" + hz.getName()
                + (closed.get() ? ", closed" : "") + "]";
    }

    // ---------------------------------------------------------------- internals


    /**
     * Runs an operation in the current mode. In native mode, a member that cannot load or read redeye's
     * processor (it lacks the jar, or runs another wire version) switches the store to CAS mode for good and the
     * operation is retried there: the processor never ran, so nothing was applied twice.
     */
    private <T> T atomic(String what, String key, Function<Operations, T> body) {
        Operations o = ops;
        if (o == cas) {
            return call(what, key, () -> body.apply(cas));
        }
        checkOpen();
        try {
            return body.apply(o);
        } catch (StoreException e) {
            throw e;
        } catch (RuntimeException e) {
            String cannot = MemberProbe.cannotRunProcessors(e);
            if (cannot == null) {
                throw wrap(what, key, e);
            }
            fallBack(cannot);
            return call(what, key, () -> body.apply(cas));
        }
    }

    private synchronized void fallBack(String reason) {
        if (ops == cas) {
            return;
        }
        ops = cas;
        why = "a member " + reason;
        LOG.warn("redeye HazelcastStore on map '{}' switches to CAS mode: a member {}. Every call now runs a"
                + " compare-and-set loop from the client; put redeye-store-hazelcast and redeye-api on every member"
                + " for native mode", mapName(), reason);
    }

    private <T> T call(String what, String key, Supplier<T> body) {
        checkOpen();
        try {
            return body.get();
        } catch (StoreException e) {
            throw e;
        } catch (RuntimeException e) {
            throw wrap(what, key, e);
        }
    }

    private StoreException wrap(String what, String key, RuntimeException e) {
        if (closed.get()) {
            return new StoreException("HazelcastStore is closed", e);
        }
        return new StoreException("hazelcast " + what + " failed at " + StateValues.where(key) + " of map '" + states.getName()
                + "': " + e, e);
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new StoreException("HazelcastStore is closed");
        }
    }

    private void check(String key) {
        OperationNames.requireWellFormed(key);
        checkOpen();
    }

    private static long positiveMillis(Duration d, String name) {
        return Math.max(1L, Arguments.positive(name, d).toMillis());
    }

    /**
     * Builder for {@link HazelcastStore}. Each setter validates its argument at once and throws
     * {@link NullPointerException} or {@link IllegalArgumentException} naming it. Not thread-safe.
     */
    public static final class Builder {
        private final HazelcastInstance hz;
        private String map = "redeye";
        private Mode mode = Mode.AUTO;
        private Duration tombstoneTtl = Duration.ofDays(1);
        private int casAttempts = 100;
        private boolean closeInstance;

        private Builder(HazelcastInstance hz) {
            this.hz = Objects.requireNonNull(hz, "hz");
        }

        /**
         * The map's name (default {@code redeye}): one entry per operation, its state and its trial claims.
         * Configure backups (the default of one synchronous backup keeps every acknowledged write through the
         * loss of one member), and no near cache, time-to-live, max-idle or eviction (refused, see
         * {@link MapChecks}; the store sets each entry's own clean-up ttl).
         *
         * @throws IllegalArgumentException if blank
         */
        public Builder map(String map) {
            Objects.requireNonNull(map, "map");
            if (map.isBlank()) {
                throw new IllegalArgumentException("map must not be blank");
            }
            this.map = map;
            return this;
        }

        /** {@link Mode#AUTO} (default), {@link Mode#NATIVE} or {@link Mode#CAS}. */
        public Builder mode(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * How long a deleted key's tombstone (its last version) is kept, default 1 day. Within it, the key's
         * next life starts above that version whatever the clocks say; after it, the new life starts at the
         * clock in microseconds, far above any version of a life that ended a tombstone-ttl ago.
         *
         * @throws IllegalArgumentException if below one second
         */
        public Builder tombstoneTtl(Duration ttl) {
            this.tombstoneTtl = Arguments.atLeast("tombstoneTtl", ttl, Duration.ofSeconds(1), "1 s");
            return this;
        }

        /**
         * CAS mode: how many times one call tries its compare-and-set before it gives up with a
         * {@link StoreException}; default 100 (with a jittered pause of up to 4 ms between tries).
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder casAttempts(int attempts) {
            this.casAttempts = Arguments.atLeast("casAttempts", attempts, 1);
            return this;
        }

        /** Whether {@link HazelcastStore#close()} also shuts the instance down (default false: the caller owns it). */
        public Builder closeInstance(boolean closeInstance) {
            this.closeInstance = closeInstance;
            return this;
        }

        /**
         * Builds the store; in {@link Mode#AUTO} it probes every data member once (one read-only processor
         * each). It first checks the map's configuration as far as the instance can see it (see
         * {@link MapChecks}).
         *
         * @throws IllegalArgumentException if the instance has a near cache for the map, or the map expires or
         *                                  evicts entries by itself (the message says what to change)
         * @throws StoreException           if the cluster cannot be reached
         */
        public HazelcastStore build() {
            return new HazelcastStore(this);
        }
    }
}
