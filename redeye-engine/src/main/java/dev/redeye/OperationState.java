package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.OperationNames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one breaker instance keeps per operation: its metrics, the open-state view, the local-cache entry and
 * its refresh read in flight, the count of this instance's trials in flight, and an access stamp for
 * {@link Operations}' eviction. Created on first use; the healthy path finds it with one map lookup and
 * allocates nothing. Observers see it as an {@link ObservedOperation}.
 *
 * <p>The views ({@link #openView}, {@link #cached}, {@link #feedStamp}, {@link #lastSeen}) are written only by
 * {@link StateViews} under this object's monitor (except {@code lastSeen} on the lock-free healthy path), and
 * read without it.
 */
final class OperationState implements ObservedOperation {
    final String name;
    final LongAdder calls = new LongAdder();
    final LongAdder successes = new LongAdder();
    final LongAdder failures = new LongAdder();
    /** Calls that ended in an exception not counted as a failure, or were released unused / cancelled. */
    final LongAdder ignored = new LongAdder();
    final LongAdder rejections = new LongAdder();
    final LongAdder storeErrors = new LongAdder();
    final LongAdder trials = new LongAdder();

    /**
     * The open period this instance saw last, and when (its local time) it first saw it: what caps this
     * instance's trial eligibility (see {@link StateViews#eligibleTick}). Null before any.
     */
    volatile SeenOpen seenOpen;
    /** The open state this instance last saw (distributed mode only); null when it last saw it closed. */
    final AtomicReference<OpenView> openView = new AtomicReference<>();
    /** Local mode: the view of the open state last seen (see {@link Gate.LocalOpen}); null before any. */
    volatile Gate.LocalOpen localOpen;
    /** The local-cache entry (distributed mode with the local cache only). */
    volatile CacheEntry cached;
    /** Feed events applied so far: a store read that raced one of them must not undo it. */
    volatile int feedStamp;
    /** The local cache's refresh read in flight, if any (see {@link CacheRefresh}); swapped by CAS only. */
    volatile CacheRefresh.Flight refresh;
    private static final AtomicReferenceFieldUpdater<OperationState, CacheRefresh.Flight> REFRESH =
            AtomicReferenceFieldUpdater.newUpdater(OperationState.class, CacheRefresh.Flight.class, "refresh");
    /** This instance's outcomes not written yet, under write batching ({@link OutcomeBatcher}); null before any. */
    volatile OutcomeBatcher.Batch batch;
    /** {@link Operations}' insert tick when this entry was last used (approximate LRU, no allocation). */
    volatile long lastUsed;
    /** Until when (ticker nanos) this instance is an outlier for the operation ({@link Outliers}); 0: it is not. */
    volatile long outlierUntil;
    /**
     * The last state this instance read, wrote or learned from the feed (distributed mode, tracked only while
     * an observer is registered, so that gauges never call the store); null if none is known.
     */
    volatile BreakerState lastSeen;

    /** The {@link TimingTicker} epoch in which a call of this operation was last timed (sampled timing). */
    int timedEpoch = Integer.MIN_VALUE;
    /** Per call outcome, the count of calls already stood for by timed calls (see {@link #weightOfTimedCall}). */
    private final AtomicLongArray timedUpTo = new AtomicLongArray(3);

    /** Trials admitted through the permission API: their slots are leased (see {@link #takeExpiredLeases}). */
    private List<Trials.Trial> leased;

    /** This instance's trials of the operation that are running now, whether or not their claims expired. */
    private final AtomicInteger trialsInFlight = new AtomicInteger();

    OperationState(String name) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Metrics metrics() {
        return new Metrics(calls.sum(), successes.sum(), failures.sum(), ignored.sum(), rejections.sum(),
                storeErrors.sum(), trials.sum());
    }

    /**
     * How many calls of {@code outcome} a timed call that just ended stands for: those counted since the
     * previous timed call of that outcome, itself included. Atomic, so concurrent timed calls never stand for
     * the same calls twice.
     */
    long weightOfTimedCall(CircuitBreakerObserver.CallOutcome outcome) {
        LongAdder counter = outcome == CircuitBreakerObserver.CallOutcome.SUCCESSFUL ? successes
                : outcome == CircuitBreakerObserver.CallOutcome.FAILED ? failures : ignored;
        long now = counter.sum();
        long before = timedUpTo.getAndAccumulate(outcome.ordinal(), now, Math::max);
        return Math.max(0, now - before);
    }

    @Override
    public String toString() {
        return "ObservedOperation[" + OperationNames.abbreviate(name) + "]";
    }

    /**
     * Takes one of this instance's {@code permits} trial slots, or answers false when that many trials of the
     * operation are still running here. A slot is held for as long as the trial runs, also after its store
     * claim expired, so a hanging dependency never collects more than {@code permits} hung trials per instance.
     */
    boolean tryStartTrial(int permits) {
        while (true) {
            int n = trialsInFlight.get();
            if (n >= permits) {
                return false;
            }
            if (trialsInFlight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Replaces the refresh read in flight if it is still {@code expect}. */
    boolean casRefresh(CacheRefresh.Flight expect, CacheRefresh.Flight update) {
        return REFRESH.compareAndSet(this, expect, update);
    }

    /** Gives back a slot taken by {@link #tryStartTrial(int)}. */
    void endTrial() {
        trialsInFlight.decrementAndGet();
    }

    /** This instance's trials of the operation running now. */
    int trialsInFlight() {
        return trialsInFlight.get();
    }

    /** Remembers a trial admitted through the permission API, whose slot is leased until its claim expires. */
    synchronized void lease(Trials.Trial trial) {
        if (leased == null) {
            leased = new ArrayList<>(2);
        }
        leased.add(trial);
    }

    /** Forgets a leased trial that ended (completed, released or reclaimed). */
    synchronized void unlease(Trials.Trial trial) {
        if (leased != null) {
            leased.remove(trial);
        }
    }

    /**
     * The leased trials whose lease ran out by {@code tick} (local time) and that this caller won the right to
     * end (each is handed out once); empty, without allocating, when there is none.
     */
    synchronized List<Trials.Trial> takeExpiredLeases(long tick) {
        if (leased == null || leased.isEmpty()) {
            return List.of();
        }
        List<Trials.Trial> out = null;
        for (int i = leased.size() - 1; i >= 0; i--) {
            Trials.Trial t = leased.get(i);
            if (tick >= t.leaseUntil && t.tryEnd()) {
                if (out == null) {
                    out = new ArrayList<>(2);
                }
                out.add(t);
                leased.remove(i);
            }
        }
        return out == null ? List.of() : out;
    }

    /** Whether a trial of this operation is running on this instance (such an entry is never evicted). */
    boolean hasTrialInFlight() {
        return trialsInFlight.get() > 0;
    }

    /**
     * A cached open (or forced-open) state: rejections are served from it without a store read until
     * {@code refreshAt} (re-verification) or this instance's trial eligibility, whichever comes first; and,
     * after this instance lost a trial claim or could not write a trial's failure, until {@code heldUntil}
     * (the winner's claim could have expired by then; the unwritten reopen's window is over) unless a state of
     * another version becomes known earlier. Eligibility comes at {@code eligibleAt} by the stored (wall-clock)
     * time or at {@code eligibleTick} by this instance's local time, whichever comes first (the skew cap);
     * {@code refreshAt} and {@code heldUntil} are local time. Immutable.
     *
     * @param eligibleAt   epoch ms (the configured clock); {@link Long#MAX_VALUE} when forced
     * @param eligibleTick local ns; {@link Long#MAX_VALUE} when forced
     * @param refreshAt    local ns
     * @param heldUntil    local ns; {@link Long#MIN_VALUE} when not held
     * @param heldAs       what a caller rejected by the hold is told: HALF_OPEN after a lost claim, OPEN while
     *                     backing off
     */
    record OpenView(BreakerState state, BreakerStatus status, long eligibleAt, long eligibleTick, long refreshAt,
                    long heldUntil, BreakerStatus heldAs) {
        /** Whether this instance may claim a trial at stored time {@code now}, local time {@code tick}. */
        boolean eligible(long now, long tick) {
            return now >= eligibleAt || tick >= eligibleTick;
        }

        /** How long until {@link #eligible}, in ms rounded up; meaningless when forced. */
        long untilEligibleMillis(long now, long tick) {
            return StateViews.untilEligibleMillis(eligibleAt, now, eligibleTick, tick);
        }

        OpenView refreshingUntil(long until) {
            return new OpenView(state, status, eligibleAt, eligibleTick, until, heldUntil, heldAs);
        }

        OpenView heldUntil(long until, BreakerStatus as) {
            return new OpenView(state, status, eligibleAt, eligibleTick, refreshAt, until, as);
        }
    }

    /** One open period ({@code version} and {@code openedAt} of its state) and the local time it was first seen. */
    record SeenOpen(long version, long openedAt, long firstSeen) {
        boolean isOf(BreakerState s) {
            return s.version() == version && s.openedAt() == openedAt;
        }
    }

    /**
     * A local-cache entry: the state, when it was fetched (local ns) and the gap epoch it was fetched in;
     * an entry from an older epoch (a feed gap happened since) is not trusted.
     */
    record CacheEntry(BreakerState state, long fetchedAt, long epoch) {
        boolean trusted(long currentEpoch) {
            return epoch == currentEpoch && state.hasKnownVersion();
        }
    }
}
