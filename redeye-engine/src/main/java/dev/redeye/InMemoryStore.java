package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.Arguments;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The in-process store local mode runs on: every capability, applying {@link Transitions} under a per-key
 * monitor. Zero dependencies, thread-safe.
 *
 * <p><b>Cost.</b> {@link #get} is lock-free (a {@link ConcurrentHashMap} lookup, a volatile read and a
 * clock read); the engine's local-mode fast path ({@code peek}) is lock-free and allocation-free and reads
 * no clock. Each atomic operation holds the monitor of one key only for the duration of the rule, never
 * during a user's call.
 *
 * <p><b>Expiry</b>, by real time ({@link System#nanoTime()}), as for any store it is clean-up
 * only: {@link #put} stores a state for its {@code ttl}, an atomic operation that writes stores it for the
 * policy's {@link Policy#stateTtl()}, refreshed on every write; a pinned state (forced, or in a stored mode,
 * {@link BreakerState#pinned()}) never expires (TCK rules R1.9, R1.11, R5.7, R12.4). An expired state reads as
 * absent at once for {@link #get} and every atomic operation;
 * the memory it holds is reclaimed when its key is next written or by a sweep over all keys that a write
 * runs at most once a second, which also drops keys holding nothing but expired claims. Trial claims expire
 * by real time too. The engine's {@code peek} skips the clock, so in local mode an expired state stays
 * visible to the gate until its key is written or swept.
 *
 * <p><b>Versions</b> never go backwards for a key, also across {@link #delete} and expiry (TCK rules R1.10,
 * R1.12): the store keeps one floor, the highest version of any state it deleted or expired, and a key created
 * by an atomic operation starts its new life at {@link BreakerState#initial(long) initial(floor + 1)}, above
 * the version it replaces. A fresh store starts keys at version 0; {@link #put} stores the version it is
 * given.
 *
 * <p><b>Feed.</b> In-process: events of a key are queued under its monitor, so in version order (R6.9), and
 * delivered on one daemon thread per store, started with the first subscription and stopped by
 * {@link #close()}. The queue holds at most {@value #DEFAULT_FEED_CAPACITY} events: when subscribers fall
 * that far behind, further events are dropped and every subscriber's {@code onGap} runs.
 *
 * <p><b>Listing</b> ({@link #page}): by name, in {@link String#compareTo} order; the cursor is the last name of
 * the page before. A page costs one pass over the keys without locking (keeping the {@code limit} smallest names
 * after the cursor) and one {@link #get} per name it returns.
 *
 * <p>{@link #newClient()} returns an independent client view of the same data (its own subscriptions and
 * its own {@code close()}); several views stand for several processes sharing one backend, which is how the
 * fleet simulation and the TCK use this store. {@code Stores.open("memory:")} returns a new, empty store.
 */
public final class InMemoryStore implements Store, AtomicUpdates, TrialClaims, TransitionFeed, QuorumState,
        OutcomeBatches, OperationListing {
    /** How many undelivered feed events the store holds before it drops and signals a gap. */
    static final int DEFAULT_FEED_CAPACITY = 10_000;
    /** How often at most a write sweeps expired states and claims of every key. */
    static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(1);
    /** A ttl this long (about 100 years) or longer never expires; it also keeps nanosecond arithmetic exact. */
    private static final long MAX_TTL_NANOS = TimeUnit.DAYS.toNanos(36_500);
    /**
     * How often (in records, a power of two) {@link #recordInPlace} reads the clock to renew its state's expiry: a
     * state's ttl is far longer than the time this many calls take, and half of it must pass before a renewal.
     */
    private static final int TTL_CHECK_EVERY = 1024;

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final InMemoryFeed feed;
    /** The highest version of any state deleted or expired (UNKNOWN_VERSION if none); new lives start above it. */
    private final AtomicLong floor = new AtomicLong(BreakerState.UNKNOWN_VERSION);
    private final long sweepIntervalNanos;
    private final AtomicLong nextSweep;
    private volatile boolean closed;

    /** A new, empty store. */
    public InMemoryStore() {
        this(DEFAULT_FEED_CAPACITY, DEFAULT_SWEEP_INTERVAL);
    }

    /** A store with another feed capacity and sweep interval (for tests of overflow and sweeping). */
    InMemoryStore(int feedCapacity, Duration sweepInterval) {
        this.feed = new InMemoryFeed(Arguments.atLeast("feedCapacity", feedCapacity, 1));
        this.sweepIntervalNanos = Objects.requireNonNull(sweepInterval, "sweepInterval").toNanos();
        this.nextSweep = new AtomicLong(System.nanoTime() + sweepIntervalNanos);
    }

    /**
     * The state stored under {@code key}, or {@code null}, without allocating, locking or reading a clock:
     * the engine's local-mode fast path. An expired state stays visible here until its key is written or
     * swept (see the class Javadoc). Fails like {@link #get} after close.
     */
    BreakerState peek(String key) {
        ensureOpen();
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        Life l = e.life;
        return l == null ? null : l.state;
    }

    /**
     * The state stored under {@code key} with the window local mode counts in place
     * ({@link #recordInPlace}) folded in, or {@code null}; does not read a clock, so an expired state stays visible
     * as with {@link #peek}. Fails like {@link #get} after close.
     */
    BreakerState current(String key) {
        ensureOpen();
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        synchronized (e) {
            return e.life == null ? null : settle(e);
        }
    }

    /** {@inheritDoc} An expired state reads as absent. */
    @Override
    public Optional<BreakerState> get(String key) {
        Objects.requireNonNull(key, "key");
        ensureOpen();
        Entry e = entries.get(key);
        if (e == null) {
            return Optional.empty();
        }
        synchronized (e) {
            Life l = e.life;
            if (l == null || l.expiredAt(System.nanoTime())) {
                return Optional.empty();
            }
            return Optional.of(settle(e));
        }
    }

    /**
     * Local mode's record of one outcome of a sliding-window breaker, counted in place in the key's
     * {@link SlidingWindow.Counter} under its monitor: no state, window or change is built, so the healthy path
     * allocates nothing. Every read and every other write folds the counter back into the state first
     * ({@link #settle}), so what the store answers is what {@link AtomicOperation#apply} would have left. Returns
     * false, changing nothing, for any outcome that is more than a write of the window: no live state of the key,
     * open, disabled, another strategy, a window of another shape, or an outcome that would open the breaker
     * (or publish what would): the caller then applies it as usual.
     */
    boolean recordInPlace(String key, boolean failed, boolean slow, Policy p, long now) {
        if (p.strategy() != Strategy.SLIDING_WINDOW) {
            return false;
        }
        ensureOpen();
        Entry e = entries.get(key);
        if (e == null) {
            return false;
        }
        synchronized (e) {
            Life l = e.life;
            if (e.removed || l == null) {
                return false;
            }
            BreakerState s = l.state;
            if (s.open() || s.effectiveMode(p) == BreakerMode.DISABLED) {
                return false;
            }
            // the clock is read once every TTL_CHECK_EVERY records: to keep the state alive, as apply's writes do
            long nowNanos = (++e.inPlaceRecords & (TTL_CHECK_EVERY - 1)) == 0 ? System.nanoTime() : 0L;
            if (nowNanos != 0L && l.expiredAt(nowNanos)) {
                return false;
            }
            SlidingWindow.Counter c = e.live;
            if (c == null) {
                SlidingWindow w = s.window();
                if (w == null || !w.hasShape(p.slidingWindowType(), p.slidingWindowSize())) {
                    return false;
                }
                c = new SlidingWindow.Counter(w);
                e.live = c;
                e.liveLastFailureAt = s.lastFailureAt();
            }
            if (c.tripsWith(failed, slow, now, p)) {
                return false;
            }
            c.record(failed, slow, now);
            if (failed) {
                e.liveLastFailureAt = now;
            }
            if (nowNanos != 0L && l.expires) {
                long ttl = p.stateTtlMillis() >= TimeUnit.NANOSECONDS.toMillis(MAX_TTL_NANOS) ? MAX_TTL_NANOS
                        : TimeUnit.MILLISECONDS.toNanos(p.stateTtlMillis());
                if (l.deadlineNanos - nowNanos < ttl / 2) {
                    e.life = Life.of(s, ttl, nowNanos);
                }
            }
            return true;
        }
    }

    /**
     * Under the entry's monitor, with a live state: the state with the window counted in place folded in, stored
     * as the entry's state (same expiry); the counter is dropped.
     */
    private static BreakerState settle(Entry e) {
        Life l = e.life;
        SlidingWindow.Counter c = e.live;
        if (c == null) {
            return l.state;
        }
        BreakerState s = l.state.toBuilder().window(c.snapshot()).lastFailureAt(e.liveLastFailureAt).build();
        e.life = new Life(s, l.deadlineNanos, l.expires);
        e.live = null;
        return s;
    }

    /**
     * {@inheritDoc} The state expires {@code ttl} from now, unless it is pinned (never) or the ttl is about
     * 100 years or more (never).
     *
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(state, "state");
        Arguments.positive("ttl", ttl);
        ensureOpen();
        long now = System.nanoTime();
        long ttlNanos = ttlNanos(ttl);
        update(key, e -> {
            retireIfExpired(e, now);
            e.life = Life.of(state, ttlNanos, now);
            e.live = null;
            return null;
        });
        maybeSweep(now);
    }

    /** {@inheritDoc} The deleted state's version raises the floor new lives start from. */
    @Override
    public void delete(String key) {
        Objects.requireNonNull(key, "key");
        ensureOpen();
        Entry e = entries.get(key);
        if (e != null) {
            synchronized (e) {
                Life l = e.life;
                if (l != null) {
                    raiseFloor(l.state);
                }
                e.life = null;
                e.live = null;
                e.removed = true;
                entries.remove(key, e);
            }
        }
    }

    /** {@inheritDoc} Under the key's monitor; the rule never runs while a user's call runs. */
    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        return apply(key, policy, st -> operation.apply(st, policy, now), now, operation.removesClaims());
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        Objects.requireNonNull(key, "key");
        Arguments.atLeast("permits", permits, 1);
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        ensureOpen();
        long nowNanos = System.nanoTime();
        long expiresAt = nowNanos + ttlNanos(ttl);
        Optional<String> token = update(key, e -> {
            e.pruneClaims(nowNanos);
            if (e.claims.size() >= permits) {
                return Optional.<String>empty();
            }
            String t = UUID.randomUUID().toString();
            e.claims.add(new Claim(t, expiresAt));
            return Optional.of(t);
        });
        maybeSweep(nowNanos);
        return token;
    }

    @Override
    public void releaseTrial(String key, String token) {
        Objects.requireNonNull(key, "key");
        ensureOpen();
        if (token == null) {
            return;
        }
        Entry e = entries.get(key);
        if (e == null) {
            return;
        }
        synchronized (e) {
            e.claims.removeIf(c -> c.token.equals(token));
        }
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        ensureOpen();
        return feed.subscribe(listener, onGap);
    }

    /**
     * {@inheritDoc} The names after {@code cursor} in {@link String#compareTo} order; any string is a cursor (the
     * listing goes on after it).
     */
    @Override
    public Page page(String cursor, int limit) {
        OperationListing.checkLimit(limit);
        ensureOpen();
        long nowNanos = System.nanoTime();
        // the limit + 1 smallest live names after the cursor, the largest on top
        PriorityQueue<String> smallest = new PriorityQueue<>(limit + 1, Comparator.reverseOrder());
        for (Map.Entry<String, Entry> me : entries.entrySet()) {
            String name = me.getKey();
            Life l = me.getValue().life;
            if (l == null || l.expiredAt(nowNanos) || (cursor != null && name.compareTo(cursor) <= 0)) {
                continue;
            }
            if (smallest.size() <= limit) {
                smallest.add(name);
            } else if (name.compareTo(smallest.peek()) < 0) {
                smallest.poll();
                smallest.add(name);
            }
        }
        boolean more = smallest.size() > limit;
        if (more) {
            smallest.poll();
        }
        List<String> names = new ArrayList<>(smallest);
        Collections.sort(names);
        List<OperationListing.Entry> out = new ArrayList<>(names.size());
        for (String name : names) {
            get(name).ifPresent(st -> out.add(new OperationListing.Entry(name, st)));
        }
        return new Page(out, more ? names.get(names.size() - 1) : null);
    }

    /**
     * Simulates a dropped feed connection: every current subscriber's {@code onGap} runs (on the feed
     * thread, in order with events). For tests of gap handling; a real in-memory feed only drops on overflow.
     */
    public void simulateFeedGap() {
        ensureOpen();
        feed.simulateGap();
    }

    /**
     * A new independent client of this store's data: it reads and writes the same states and claims and
     * receives the same feed, but has its own subscriptions and its own {@code close()}, which ends only
     * those subscriptions and makes only that client fail fast. Closing this store closes every client.
     *
     * @throws StoreException if this store is closed
     */
    public Store newClient() {
        ensureOpen();
        return new InMemoryClient(this);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        feed.close();
    }

    @Override
    public String toString() {
        return "InMemoryStore[" + entries.size() + " keys]";
    }

    /** The number of keys holding a state or a claim, expired ones not yet reclaimed included (for tests). */
    int keyCount() {
        return entries.size();
    }

    private StateChange apply(String key, Policy policy, Function<BreakerState, StateChange> rule, long now,
            boolean clearClaims) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(policy, "policy");
        ensureOpen();
        long nowNanos = System.nanoTime();
        StateChange change = update(key, e -> {
            retireIfExpired(e, nowNanos);
            Life l = e.life;
            // An absent key starts a new life above every version it had before.
            BreakerState prev = l != null ? settle(e) : BreakerState.initial(floor.get() + 1);
            StateChange c = rule.apply(prev);
            if (c.changed()) {
                e.life = Life.of(c.state(), ttlNanos(Duration.ofMillis(policy.stateTtlMillis())), nowNanos);
            }
            if (clearClaims) {
                e.claims.clear();
            }
            if (c.isTransition() && feed.hasSubscribers()) {
                feed.publish(c.toEvent(key, policy, now));
            }
            return c;
        });
        maybeSweep(nowNanos);
        return change;
    }

    /** Runs {@code action} under the monitor of the live entry of {@code key}, creating it if needed. */
    private <T> T update(String key, Function<Entry, T> action) {
        while (true) {
            Entry e = entries.computeIfAbsent(key, k -> new Entry());
            synchronized (e) {
                if (e.removed) {
                    continue; // deleted or swept between lookup and lock: retry on the new entry
                }
                return action.apply(e);
            }
        }
    }

    /** A ttl in nanoseconds, capped at {@link #MAX_TTL_NANOS} (which never expires). */
    private static long ttlNanos(Duration ttl) {
        return ttl.compareTo(Duration.ofNanos(MAX_TTL_NANOS)) >= 0 ? MAX_TTL_NANOS : ttl.toNanos();
    }

    /** Under the entry's monitor: drops an expired state, raising the floor first. */
    private void retireIfExpired(Entry e, long nowNanos) {
        Life l = e.life;
        if (l != null && l.expiredAt(nowNanos)) {
            raiseFloor(l.state);
            e.life = null;
            e.live = null;
        }
    }

    private void raiseFloor(BreakerState s) {
        long v = s.version();
        if (v > floor.get()) {
            floor.accumulateAndGet(v, Math::max);
        }
    }

    /** At most once per sweep interval, on the writing thread that wins the race: reclaims expired data. */
    private void maybeSweep(long nowNanos) {
        long next = nextSweep.get();
        if (nowNanos - next < 0 || !nextSweep.compareAndSet(next, nowNanos + sweepIntervalNanos)) {
            return;
        }
        for (Map.Entry<String, Entry> me : entries.entrySet()) {
            Entry e = me.getValue();
            synchronized (e) {
                if (e.removed) {
                    continue;
                }
                retireIfExpired(e, nowNanos);
                e.pruneClaims(nowNanos);
                if (e.life == null && e.claims.isEmpty()) {
                    e.removed = true;
                    entries.remove(me.getKey(), e);
                }
            }
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreException("InMemoryStore is closed");
        }
    }

    /** One life of a key's state: the state and when it expires. Immutable. */
    private static final class Life {
        final BreakerState state;
        final long deadlineNanos;
        final boolean expires;

        private Life(BreakerState state, long deadlineNanos, boolean expires) {
            this.state = state;
            this.deadlineNanos = deadlineNanos;
            this.expires = expires;
        }

        /** A pinned state (forced, or in a stored mode), or a ttl of about 100 years or more, never expires. */
        static Life of(BreakerState state, long ttlNanos, long nowNanos) {
            boolean expires = !state.pinned() && ttlNanos < MAX_TTL_NANOS;
            return new Life(state, expires ? nowNanos + ttlNanos : 0L, expires);
        }

        boolean expiredAt(long nowNanos) {
            return expires && deadlineNanos - nowNanos <= 0;
        }
    }

    private static final class Entry {
        volatile Life life;
        /** The window counted in place since the state was last settled ({@link #recordInPlace}); under the monitor. */
        SlidingWindow.Counter live;
        /** The state's lastFailureAt while {@link #live} counts; under the monitor. */
        long liveLastFailureAt;
        /** Records counted in place, to renew the expiry now and then; under the monitor. */
        int inPlaceRecords;
        final List<Claim> claims = new ArrayList<>(1);
        boolean removed;

        void pruneClaims(long nowNanos) {
            for (Iterator<Claim> it = claims.iterator(); it.hasNext();) {
                if (it.next().expiresAtNanos - nowNanos <= 0) {
                    it.remove();
                }
            }
        }
    }

    private static final class Claim {
        final String token;
        final long expiresAtNanos;

        Claim(String token, long expiresAtNanos) {
            this.token = token;
            this.expiresAtNanos = expiresAtNanos;
        }
    }
}
