package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.redeye.api.AtomicOperation;
import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicRules;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A redeye {@link Store} on Hazelcast 5 (community edition) over a user-given {@link HazelcastInstance}: an
 * embedded member or a client. It offers every capability: {@link AtomicRecording}, {@link AtomicTransitions},
 * {@link TrialClaims} and {@link TransitionFeed}. The stored layout is documented in the
 * {@linkplain dev.redeye.store.hazelcast package Javadoc}.
 *
 * <pre>{@code
 * HazelcastInstance client = HazelcastClient.newHazelcastClient(clientConfig);   // or an embedded member
 * HazelcastStore store = HazelcastStore.builder(client).map("redeye").build();   // does not shut the client down
 * }</pre>
 *
 * <p><b>Two modes, one layout.</b> In <em>native</em> mode every atomic operation is an entry processor that
 * applies the shared {@code Transitions} rule on the member owning the key: one network hop. It needs this jar
 * and {@code redeye-api} on every member's class path (embedded members have them). In <em>CAS</em> mode, for
 * members that cannot run redeye's classes (a managed cluster, the official image), the rule runs on the
 * client between a {@code get} and a {@code replace(key, old, new)} / {@code putIfAbsent}, retried on a lost
 * race up to {@link Builder#casAttempts(int)} times. Both modes store the same {@code String} values, so
 * clients of either mode share a map. {@link Mode#AUTO} (the default) probes every data member at
 * {@link Builder#build()} with a read-only processor and picks native only if all of them run it; a call that
 * later meets a member without the classes (one that joined since) switches this store to CAS mode, logs one
 * warning and is retried: no call fails because members lack the classes. {@link #toString()} and one INFO
 * line at open say which mode runs and why. The CP subsystem, User Code Namespaces and User Code Deployment are
 * not used.
 *
 * <p><b>Cost</b> (store operations per call, measured by the module's tests): {@link #get} 1; native
 * {@code recordFailure}, trial outcomes, claim and release 1 each, force CLOSED or HALF_OPEN 2 (their claims are in a
 * sibling map), {@link #delete} 2; CAS mode: a write 3 (get, replace, setTtl), 2 on an absent key (get,
 * putIfAbsent), 1 when nothing changes, plus 2 per lost race; {@link #put} 1. The feed costs one entry listener
 * and one thread per store instance, started by the first {@link #subscribe}.
 *
 * <p><b>Errors.</b> Every Hazelcast failure (an unreachable cluster, a timeout, a shut-down instance),
 * malformed data under a key, a value written by an incompatible redeye version and any use after
 * {@link #close()} is a {@link StoreException}. Bad arguments are {@link NullPointerException} /
 * {@link IllegalArgumentException}; an operation name that is not well-formed UTF-16 is refused (Hazelcast
 * encodes keys as UTF-8, where an unpaired surrogate would merge two names).
 *
 * <p><b>Threads.</b> Thread-safe. Feed callbacks run on the store's feed thread.
 */
public final class HazelcastStore implements Store, AtomicRules, TrialClaims, TransitionFeed {
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
    private final IMap<String, Object> claims;
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
            this.claims = hz.getMap(claimsMapName(b.map));
        } catch (RuntimeException e) {
            throw new StoreException("cannot open Hazelcast map '" + b.map + "': " + e.getMessage(), e);
        }
        long tombstoneTtl = b.tombstoneTtl.toMillis();
        this.cas = new CasOperations(states, claims, tombstoneTtl, b.casAttempts);
        Operations natives = new NativeOperations(states, claims, tombstoneTtl);
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
        return HazelcastStoreProvider.openHazelcast(uri);
    }

    /** The name of the map holding the states. */
    public String mapName() {
        return states.getName();
    }

    /** The name of the sibling map holding the trial claims: the state map's name plus {@code .claims}. */
    public String claimsMapName() {
        return claims.getName();
    }

    /** The name of the claims map that goes with a state map. */
    static String claimsMapName(String map) {
        return map + ".claims";
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

    /** {@inheritDoc} One {@code get} ({@code getEntryView} in CAS mode, which also reads the expiry). */
    @Override
    public Optional<BreakerState> get(String key) {
        check(key);
        return call("get", key, () -> ops.get(key));
    }

    /**
     * {@inheritDoc} One {@code set} with the ttl; a forced state is stored without expiry, whatever {@code ttl}
     * says. A put is not a transition and produces no feed event.
     *
     * @throws IllegalArgumentException if {@code ttl} is not positive
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        check(key);
        Objects.requireNonNull(state, "state");
        long ttlMillis = positiveMillis(ttl, "ttl");
        call("put", key, () -> {
            states.set(key, StateValues.state(state),
                    state.forced() ? MemberProcessor.NO_EXPIRY : MemberProcessor.entryTtl(ttlMillis), TimeUnit.MILLISECONDS);
            return null;
        });
    }

    /**
     * {@inheritDoc} Replaces the state by a tombstone that remembers its version (for the tombstone ttl, see
     * {@link Builder#tombstoneTtl(Duration)}), so the key's next life starts above it; then deletes the claims.
     * Two operations in native mode.
     */
    @Override
    public void delete(String key) {
        check(key);
        atomic("delete", key, o -> {
            o.delete(key);
            return null;
        });
        call("delete", key, () -> {
            claims.delete(key);
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

    // ---------------------------------------------------------------- AtomicRecording, AtomicTransitions

    /**
     * {@inheritDoc} One entry processor (native) or a CAS loop; nothing is written when nothing changes. A
     * forced OPEN state is stored without expiry, and so is every later write while it stays forced. Forcing
     * CLOSED then deletes the claims (a second operation: they live in the sibling map; any trial claimed in
     * between is fenced out by the closed state's new version, and the claims are gone when this returns).
     */
    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        String what = operation.kind().method();
        check(key);
        Objects.requireNonNull(policy, "policy");
        StateChange c = atomic(what, key, o -> o.change(key, operation, policy, now));
        if (operation.removesClaims()) {
            call(what, key, () -> {
                claims.delete(key);
                return null;
            });
        }
        return c;
    }

    // ---------------------------------------------------------------- TrialClaims

    /**
     * {@inheritDoc} One entry processor on the claims map (native; expiry judged by the cluster clock) or a CAS
     * loop (expiry judged by this client's clock). The token is a random UUID.
     */
    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        check(key);
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be >= 1, was " + permits);
        }
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
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + d);
        }
        return Math.max(1L, d.toMillis());
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
         * The state map's name (default {@code redeye}); the claims live in {@code <map>.claims}. Configure
         * backups for both (the default of one synchronous backup keeps every acknowledged write through the
         * loss of one member) and no time-to-live or eviction (the store sets each entry's own ttl).
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
            Objects.requireNonNull(ttl, "tombstoneTtl");
            if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("tombstoneTtl must be >= 1 s, was " + ttl);
            }
            this.tombstoneTtl = ttl;
            return this;
        }

        /**
         * CAS mode: how many times one call tries its compare-and-set before it gives up with a
         * {@link StoreException}; default 100 (with a jittered pause of up to 4 ms between tries).
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder casAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("casAttempts must be >= 1, was " + attempts);
            }
            this.casAttempts = attempts;
            return this;
        }

        /** Whether {@link HazelcastStore#close()} also shuts the instance down (default false: the caller owns it). */
        public Builder closeInstance(boolean closeInstance) {
            this.closeInstance = closeInstance;
            return this;
        }

        /**
         * Builds the store; in {@link Mode#AUTO} it probes every data member once (one read-only processor
         * each).
         *
         * @throws StoreException if the cluster cannot be reached
         */
        public HazelcastStore build() {
            return new HazelcastStore(this);
        }
    }
}
