package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.Transitions;
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
 * <h2>The hold after a lost claim</h2>
 * A caller that lost a trial claim marks the open view held until the winner's claim could have expired
 * ({@code trialTimeout} after the lost claim). Until then every caller of the operation on this instance is
 * rejected from the view with zero store operations, unless a state of another version is learned first (the
 * trial's outcome, through this instance's own write or a feed event). A read of the same open period keeps
 * the hold.
 *
 * <p>The views are written under the {@link OperationState}'s monitor and read without it. The common
 * healthy path (a closed state, no local cache, nothing cached) returns before taking the monitor.
 */
final class StateViews {
    private final boolean enabled;
    private final Policy policy;
    private final long seed;
    private final long refreshMillis;
    private final long cacheMaxAgeMillis;
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
        this.cacheMaxAgeMillis = cacheMaxAgeMillis;
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

    /** A feed gap: every cache entry fetched before now is distrusted until re-read (one counter, no pass). */
    void distrustAll() {
        gapEpoch.incrementAndGet();
    }

    /** A trusted closed state younger than the stale tolerance, served with zero reads; else null. */
    BreakerState cachedClosed(OperationState e, long now) {
        if (!cacheActive) {
            return null;
        }
        OperationState.CacheEntry c = e.cached;
        if (c != null && !c.state.open() && c.trusted(gapEpoch.get()) && now - c.fetchedAt < cacheMaxAgeMillis) {
            return c.state;
        }
        return null;
    }

    /** To pass back to {@link #noteRead} / {@link #noteOwnWrite}: taken before the store operation started. */
    int stampBeforeStoreCall(OperationState e) {
        return cacheActive ? e.feedStamp : 0;
    }

    /** This instance's trial eligibility for an open state (its own jitter); {@link Long#MAX_VALUE} if forced. */
    long eligibleAt(String operation, BreakerState s) {
        double jf = Transitions.jitterFactor(seed, operation, s.openedAt(), policy.jitter());
        return Transitions.trialEligibleAt(s, policy, jf);
    }

    long refreshMillis() {
        return refreshMillis;
    }

    /** A state read from the store. */
    void noteRead(OperationState e, BreakerState s, long now, int stampBefore) {
        note(e, s, now, false, stampBefore);
    }

    /** The state this instance's own write left in the store. */
    void noteOwnWrite(OperationState e, BreakerState s, long now, int stampBefore) {
        note(e, s, now, false, stampBefore);
    }

    /** A state another instance's transition published on the feed. */
    void noteFeed(OperationState e, BreakerState s, long now) {
        if (s.hasKnownVersion()) {
            note(e, s, now, true, 0);
        }
    }

    /**
     * This instance lost the trial claim of the open period {@code s}: hold the view until {@code until} (see
     * the class comment). No effect if the view moved on meanwhile.
     */
    void holdAfterLostClaim(OperationState e, BreakerState s, long until) {
        synchronized (e) {
            OperationState.OpenView v = e.openView.get();
            if (v != null && v.state.version() == s.version() && v.heldUntil < until) {
                e.openView.set(v.heldUntil(until));
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
        if (v != null && (seen == null || v.state.version() >= seen.version())) {
            return v.state; // the view is kept current also while no observer tracks lastSeen
        }
        return seen;
    }

    private void note(OperationState e, BreakerState s, long now, boolean fromFeed, int stampBefore) {
        if (enabled && observers.current() != null) {
            BreakerState seen = e.lastSeen;
            if (!fromFeed || seen == null || s.version() > seen.version()) {
                e.lastSeen = s; // for gauges, which never call the store
            }
        }
        boolean cache = cacheActive;
        if (!enabled || (!s.open() && !cache && e.openView.get() == null)) {
            return; // the common distributed healthy path: nothing cached, nothing to change, no lock
        }
        synchronized (e) {
            OperationState.CacheEntry c = e.cached;
            OperationState.OpenView v = e.openView.get();
            if (fromFeed) {
                BreakerState known = c != null ? c.state : v != null ? v.state : null;
                if (known != null && s.version() <= known.version()) {
                    return; // a duplicate or a late event
                }
                e.feedStamp++;
            } else if (cache && e.feedStamp != stampBefore && c != null && c.state.version() > s.version()) {
                return; // a newer feed event arrived while this read or write was under way
            }
            if (s.open()) {
                long heldUntil = v != null && v.state.version() == s.version() ? v.heldUntil : Long.MIN_VALUE;
                long eligible = s.forced() ? Long.MAX_VALUE : eligibleAt(e.name, s);
                BreakerStatus status = s.forced() ? BreakerStatus.FORCED_OPEN : BreakerStatus.OPEN;
                e.openView.set(new OperationState.OpenView(s, status, eligible, now + refreshMillis, heldUntil));
            } else {
                e.openView.set(null);
            }
            if (cache) {
                e.cached = new OperationState.CacheEntry(s, now, gapEpoch.get());
            }
        }
    }
}
