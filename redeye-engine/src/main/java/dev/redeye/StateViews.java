package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a distributed-mode breaker remembers of the states it learned, per operation: the open-state view that
 * serves rejections without store reads, and the opt-in local cache that serves closed states without reads.
 *
 * <h2>Which state wins</h2>
 * <ul>
 * <li>A store read and this instance's own write are authoritative: they replace what is cached whatever its
 * version, because a key's version may restart or jump after a delete or an expiry (a new life of the key
 * may even start at a large base such as a microsecond clock), and a cache that refused a lower version
 * would be bypassed for that operation for good. The one exception: a feed event with a higher version that
 * arrived while the read or write was under way is newer than its result and is kept.</li>
 * <li>A feed event replaces the cached state only with a strictly higher version: a duplicate or a late event
 * never overwrites newer data.</li>
 * </ul>
 *
 * <h2>The hold after a lost claim, and after an unwritten trial failure</h2>
 * A caller that lost a trial claim marks the open view held until the winner's claim could have expired
 * ({@code trialTimeout} after the lost claim). Until then every caller of the operation on this instance is
 * rejected from the view with zero store operations, unless a state of another version is learned first (the
 * trial's outcome, through this instance's own write or a feed event). A read of the same open period keeps
 * the hold. A trial that failed but whose reopen could not be written holds the view the same way, for the
 * window the reopen would have started ({@link #backOff}): this instance backs off as if it had been written.
 *
 * <h2>Time</h2>
 * Eligibility is computed from the stored {@code openedAt} (wall-clock ms, as every instance reads it), but
 * never later than this instance's own window after it first saw the open period, by its local time
 * ({@link #eligibleTick}): a member whose clock runs ahead writes an {@code openedAt} in everyone's future,
 * and delays the others by at most one window. Everything else here (refresh instants, holds, cache age) is
 * local time ({@link Monotonic}), which a wall-clock step does not move.
 *
 * <p>The views are written under the {@link OperationState}'s monitor and read without it. The common
 * healthy path (a closed state, no local cache, nothing cached) returns before taking the monitor.
 */
final class StateViews {
    private final boolean enabled;
    private final Policy policy;
    private final long seed;
    private final long refreshMillis;
    private final long refreshNanos;
    private final long cacheMaxAgeMillis;
    private final long cacheMaxAgeNanos;
    private final AtomicLong gapEpoch = new AtomicLong();
    private final Observers observers;
    private volatile boolean cacheActive;

    /**
     * @param enabled           false in local mode, where the gate reads memory and nothing is cached
     * @param seed              this instance's jitter seed
     * @param refreshMillis     how long an open view serves rejections before one caller re-verifies it
     * @param cacheMaxAgeMillis how long a trusted closed cache entry serves calls; 0 without the local cache
     * @param observers         while any is registered, the last state seen is remembered for them
     */
    StateViews(boolean enabled, Policy policy, long seed, long refreshMillis, long cacheMaxAgeMillis,
            Observers observers) {
        this.enabled = enabled;
        this.observers = observers;
        this.policy = policy;
        this.seed = seed;
        this.refreshMillis = refreshMillis;
        this.refreshNanos = Monotonic.ofMillis(refreshMillis);
        this.cacheMaxAgeMillis = cacheMaxAgeMillis;
        this.cacheMaxAgeNanos = Monotonic.ofMillis(cacheMaxAgeMillis);
    }

    /** Called once the feed subscription is up: from now on the local cache serves calls. */
    void activateCache() {
        cacheActive = cacheMaxAgeMillis > 0;
    }

    void deactivateCache() {
        cacheActive = false;
    }

    /** Whether the local cache serves calls now (requested, and the feed subscription is up). */
    boolean caching() {
        return cacheActive;
    }

    /** How long a trusted closed cache entry serves calls (the stale tolerance, at most 5 s); 0 without the cache. */
    long cacheMaxAgeMillis() {
        return cacheMaxAgeMillis;
    }

    /** {@link #cacheMaxAgeMillis()} in ns. */
    long cacheMaxAgeNanos() {
        return cacheMaxAgeNanos;
    }

    /** A feed gap: every cache entry fetched before now is distrusted until re-read (one counter, no pass). */
    void distrustAll() {
        gapEpoch.incrementAndGet();
    }

    /**
     * Whether the gate rejects calls (or admits trials only) under {@code s}: it is open and the mode in force is
     * {@link BreakerMode#NORMAL}. In {@link BreakerMode#METRICS_ONLY} and {@link BreakerMode#DISABLED} every call is
     * admitted, also under a state opened before the mode applied.
     */
    boolean rejects(BreakerState s) {
        return s.open() && s.effectiveMode(policy) == BreakerMode.NORMAL;
    }

    /** A trusted closed state younger (by local time {@code tick}) than the stale tolerance, else null. */
    BreakerState cachedClosed(OperationState e, long tick) {
        if (!cacheActive) {
            return null;
        }
        OperationState.CacheEntry c = e.cached;
        if (c != null && !rejects(c.state()) && c.trusted(gapEpoch.get()) && tick - c.fetchedAt() < cacheMaxAgeNanos) {
            return c.state();
        }
        return null;
    }

    /** A store operation whose result the views learn: a read, or this instance's own write. */
    @FunctionalInterface
    interface StoreCall<T> {
        T call(OperationState e, long now);
    }

    /** What is noted of a {@link StoreCall}'s result, given the feed stamp taken before the call. */
    @FunctionalInterface
    interface Note<T> {
        void note(OperationState e, T result, long now, long tick, int stampBefore);
    }

    private final Note<BreakerState> readNote = (e, s, now, tick, stampBefore) -> noteRead(e, s, tick, stampBefore);

    /**
     * The one way a store operation's result reaches the views: the operation's feed stamp is taken before the
     * call, the call is made at stored time {@code now} (local time {@code tick}), and {@code note} is given the
     * result with that stamp, so that a feed event that arrived while the call was under way is kept over it
     * (see "Which state wins"). An exception from the call propagates and nothing is noted.
     */
    <T> T stamped(OperationState e, long now, long tick, StoreCall<T> call, Note<? super T> note) {
        int stampBefore = cacheActive ? e.feedStamp : 0;
        T result = call.call(e, now);
        note.note(e, result, now, tick, stampBefore);
        return result;
    }

    /** {@link #stamped} for a read at local time {@code tick}, noted with {@link #noteRead}. */
    BreakerState readNoted(OperationState e, long tick, StoreCall<BreakerState> read) {
        return stamped(e, 0L, tick, read, readNote);
    }

    /**
     * This instance's trial eligibility for an open state by the stored time (its own jitter), epoch ms;
     * {@link Long#MAX_VALUE} if forced. See {@link #eligibleTick} for the cap by local time.
     */
    long eligibleAt(String operation, BreakerState s) {
        double jf = Transitions.jitterFactor(seed, operation, s.openedAt(), policy.jitter());
        return Transitions.trialEligibleAt(s, policy, jf);
    }

    /**
     * The skew cap: the local time at which this instance may claim a trial of the open state {@code s}
     * whatever the stored {@code openedAt} says, its own (jittered) reset window after it first saw the
     * period; {@link Long#MAX_VALUE} if forced. The first sight is remembered per operation: {@code tick}
     * (now, local time) is it unless this period was seen before.
     */
    long eligibleTick(OperationState e, BreakerState s, long tick) {
        if (s.forced()) {
            return Long.MAX_VALUE;
        }
        OperationState.SeenOpen seen = e.seenOpen;
        long first;
        if (seen != null && seen.isOf(s)) {
            first = seen.firstSeen();
        } else {
            // two callers seeing a new period at once may both write: either instant is a first sight
            e.seenOpen = new OperationState.SeenOpen(s.version(), s.openedAt(), tick);
            first = tick;
        }
        double jf = Transitions.jitterFactor(seed, e.name, s.openedAt(), policy.jitter());
        return Monotonic.after(first, Monotonic.ofMillis(Transitions.resetWindowMillis(s, policy, jf)));
    }

    /**
     * How long until eligibility by either time (stored epoch ms {@code eligibleAt} against {@code now}, local
     * ns {@code eligibleTick} against {@code tick}), in whole ms rounded up; 0 if due.
     */
    static long untilEligibleMillis(long eligibleAt, long now, long eligibleTick, long tick) {
        return Math.min(Math.max(0, eligibleAt - now), Monotonic.ceilMillis(eligibleTick - tick));
    }

    /**
     * The status of {@code s} for this instance at stored time {@code now} and local time {@code tick}:
     * {@link Transitions#status} with this instance's jitter, and half-open also once the skew cap of a period
     * it saw has passed. {@code e} may be null (an operation this instance does not hold).
     */
    BreakerStatus status(String operation, OperationState e, BreakerState s, long now, long tick) {
        double jf = Transitions.jitterFactor(seed, operation, s.openedAt(), policy.jitter());
        BreakerStatus st = Transitions.status(s, policy, now, jf);
        if (st == BreakerStatus.OPEN && e != null) {
            OperationState.SeenOpen seen = e.seenOpen;
            if (seen != null && seen.isOf(s) && tick >= eligibleTick(e, s, tick)) {
                return BreakerStatus.HALF_OPEN;
            }
        }
        return st;
    }

    long refreshMillis() {
        return refreshMillis;
    }

    long refreshNanos() {
        return refreshNanos;
    }

    /** A state read from the store at local time {@code tick} (read before the store call); see {@link #stamped}. */
    void noteRead(OperationState e, BreakerState s, long tick, int stampBefore) {
        note(e, s, tick, false, stampBefore);
    }

    /** The state this instance's own write left in the store; see {@link #stamped}. */
    void noteOwnWrite(OperationState e, BreakerState s, long tick, int stampBefore) {
        if (!enabled && s.open()) {
            eligibleTick(e, s, tick); // local mode has no views; the skew cap counts from this write
        }
        note(e, s, tick, false, stampBefore);
    }

    /** A state another instance's transition published on the feed. */
    void noteFeed(OperationState e, BreakerState s, long tick) {
        if (s.hasKnownVersion()) {
            note(e, s, tick, true, 0);
        }
    }

    /**
     * This instance lost the trial claim of the open period {@code s}: hold the view until local time
     * {@code until} (see the class comment). No effect if the view moved on meanwhile.
     */
    void holdAfterLostClaim(OperationState e, BreakerState s, long until) {
        hold(e, s.version(), until, BreakerStatus.HALF_OPEN);
    }

    /**
     * This instance's trial of the open period {@code trialVersion} failed and its reopen could not be written:
     * hold the view, as OPEN, for the window the reopen would have started (the backoff step it would have
     * added, this instance's jitter), from local time {@code tick}. No effect if the view moved on meanwhile.
     *
     * @param now the stored time the reopen would have been written with
     */
    void backOff(OperationState e, long trialVersion, long now, long tick) {
        OperationState.OpenView v = e.openView.get();
        if (v == null || v.state().version() != trialVersion) {
            return;
        }
        StateChange reopen = Transitions.trialFailed(v.state(), trialVersion, policy, now);
        if (!reopen.isTransition()) {
            return;
        }
        BreakerState s = reopen.state();
        double jf = Transitions.jitterFactor(seed, e.name, s.openedAt(), policy.jitter());
        long window = Monotonic.ofMillis(Transitions.resetWindowMillis(s, policy, jf));
        hold(e, trialVersion, Monotonic.after(tick, window), BreakerStatus.OPEN);
    }

    private void hold(OperationState e, long version, long until, BreakerStatus as) {
        synchronized (e) {
            OperationState.OpenView v = e.openView.get();
            if (v != null && v.state().version() == version && v.heldUntil() < until) {
                e.openView.set(v.heldUntil(until, as));
            }
        }
    }

    /**
     * What this instance knows of the state of {@code e} without a store call (distributed mode): the last
     * state it saw, or its open view; null if it knows nothing.
     */
    static BreakerState known(OperationState e) {
        BreakerState seen = e.lastSeen;
        OperationState.OpenView v = e.openView.get();
        if (v != null && (seen == null || v.state().version() >= seen.version())) {
            return v.state(); // the view is kept current also while no observer tracks lastSeen
        }
        return seen;
    }

    private void note(OperationState e, BreakerState s, long tick, boolean fromFeed, int stampBefore) {
        if (s.open() && e.outlierUntil != 0L) {
            e.outlierUntil = 0L; // the fleet opened: the failures are not this instance's alone (see Outliers)
        }
        if (enabled && observers.current() != null) {
            BreakerState seen = e.lastSeen;
            if (!fromFeed || seen == null || s.version() > seen.version()) {
                e.lastSeen = s; // for gauges, which never call the store
            }
        }
        boolean cache = cacheActive;
        if (!enabled || (!rejects(s) && !cache && e.openView.get() == null)) {
            return; // the common distributed healthy path: nothing cached, nothing to change, no lock
        }
        synchronized (e) {
            OperationState.CacheEntry c = e.cached;
            OperationState.OpenView v = e.openView.get();
            if (fromFeed) {
                BreakerState known = c != null ? c.state() : v != null ? v.state() : null;
                if (known != null && s.version() <= known.version()) {
                    return; // a duplicate or a late event
                }
                e.feedStamp++;
            } else if (cache && e.feedStamp != stampBefore && c != null && c.state().version() > s.version()) {
                return; // a newer feed event arrived while this read or write was under way
            }
            if (rejects(s)) {
                boolean samePeriod = v != null && v.state().version() == s.version();
                long heldUntil = samePeriod ? v.heldUntil() : Long.MIN_VALUE;
                BreakerStatus heldAs = samePeriod ? v.heldAs() : BreakerStatus.HALF_OPEN;
                long eligible = s.forced() ? Long.MAX_VALUE : eligibleAt(e.name, s);
                BreakerStatus status = s.forced() ? BreakerStatus.FORCED_OPEN : BreakerStatus.OPEN;
                e.openView.set(new OperationState.OpenView(s, status, eligible, eligibleTick(e, s, tick),
                        Monotonic.after(tick, refreshNanos), heldUntil, heldAs));
            } else {
                e.openView.set(null);
            }
            if (cache) {
                e.cached = new OperationState.CacheEntry(s, tick, gapEpoch.get());
            }
        }
    }
}
