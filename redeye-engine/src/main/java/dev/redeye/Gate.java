package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import java.time.Clock;

/**
 * Admission: decides whether a call may run, and as what. {@link #admit} returns the permit the call runs
 * under: the {@link BreakerState} seen (a normal call), a {@link Trials.Trial} (a half-open trial) or
 * {@link #UNKNOWN} (the store failed under ALLOW and nothing is known); or the rejection, returned rather than
 * thrown (see {@link Rejections}).
 *
 * <ul>
 * <li>Local mode reads the in-process store: one map lookup and a volatile read. An open state is rejected
 * from the operation's {@link LocalOpen} view: with the system clock and ticker, until the
 * {@link EngineTimer} marks it due, a rejection reads no clock and computes nothing (a rejection answered
 * by {@code executeOrElse} costs about what a healthy call does); then the clock and the ticker decide
 * (eligibility by the stored {@code openedAt}, capped by the local time since this instance saw the opening),
 * and {@link Trials} takes over at eligibility.</li>
 * <li>Distributed mode: a trusted fresh closed state from the local cache (zero reads); else a rejection
 * from the open view (zero reads) while it is held after a lost claim or an unwritten trial failure, while
 * this instance's own trials of the operation take every permit, or before the view's refresh instant and
 * this instance's eligibility;
 * else one read, then {@link Trials} for a state read as open. Under the local cache, a closed path's read is
 * single-flight: the callers that arrive while it is in flight wait for its result ({@link CacheRefresh}).</li>
 * <li>A store error at the read: the known open view keeps rejecting before eligibility (the cache can make a
 * rejection late, never an allow early); otherwise REJECT rejects with {@link StoreUnavailableException}; ALLOW
 * claims a trial of a known open state (never letting every caller through) and lets the call through when
 * nothing is known. LOCAL never sees read errors: its {@link DegradingStore} answers from memory.</li>
 * <li>Local mode's in-process store fails only when {@code close()} raced a call past the breaker's closed
 * check; that call was admitted before the close and runs, its outcome write failing quietly.</li>
 * </ul>
 */
final class Gate {
    /** The permit when the store failed under ALLOW: run the call, nothing is known about the state. */
    static final Object UNKNOWN = new Object();

    private final Clock clock;
    private final Monotonic time;
    private final InMemoryStore local;
    private final StateViews views;
    private final Trials trials;
    private final Rejections rejections;
    /** An outlier's local trips (a quorum, OutlierPolicy.REJECT), else null. */
    private final Outliers outliers;
    private final boolean rejectOnStoreError;
    /**
     * The configured clock is the system clock and the ticker the system ticker: the {@link EngineTimer}
     * (real time) keeps pace with both.
     */
    private final boolean systemTime;
    /** Every store read of the gate (single-flight under the local cache); null in local mode. */
    private final CacheRefresh refresh;

    /**
     * @param local    the in-process store in local mode, null in distributed mode
     * @param outliers the local trips of an outlier that rejects (a quorum with OutlierPolicy.REJECT), else null
     */
    Gate(Clock clock, Monotonic time, InMemoryStore local, StoreAccess access, StateViews views, Trials trials,
            StoreErrors errors, Rejections rejections, boolean rejectOnStoreError, Outliers outliers) {
        this.outliers = outliers;
        this.clock = clock;
        this.time = time;
        this.local = local;
        this.views = views;
        this.trials = trials;
        this.rejections = rejections;
        this.rejectOnStoreError = rejectOnStoreError;
        this.systemTime = clock.getClass() == Clock.systemUTC().getClass() && time.isSystem();
        this.refresh = local == null ? new CacheRefresh(time, access, views, errors) : null;
    }

    /**
     * The token the call runs under, or its rejection, <b>returned, never thrown</b> (see {@link Rejections}):
     * a {@link CircuitOpenException} or a {@link StoreUnavailableException} when {@code build} is true, and
     * {@link Rejections#QUIET} instead of a {@code CircuitOpenException} when it is false (a store error under
     * REJECT is always an exception: it carries its cause). Tell a rejection with
     * {@link Rejections#isRejection}.
     *
     * <p>Kept small (a branch and a call) so that C2 inlines it into the caller; each mode's work is its own
     * method, and the rejection branches are out of the hot methods.
     *
     * @param build whether a {@code CircuitOpenException} is wanted (false: nobody will look at it)
     */
    Object admit(OperationState e, boolean build) {
        return local != null ? admitLocal(e, build) : admitShared(e, build);
    }

    /**
     * The closed path's read under the local cache: one read in flight per operation, its result shared with
     * the callers that arrive meanwhile ({@link CacheRefresh}); a failed or overdue read is reported there
     * once, and each caller is admitted per the policy with nothing known.
     */
    private Object admitCoalesced(OperationState e, long tick, boolean build) {
        BreakerState s;
        try {
            s = refresh.read(e, tick);
        } catch (StoreException ex) {
            if (rejectOnStoreError) {
                return new StoreUnavailableException(e.name, ex);
            }
            return UNKNOWN;
        }
        if (s == null) {
            return admitShared(e, build); // the views changed while this caller looked: admit from them
        }
        return views.rejects(s) ? trials.admit(e, s, tick, build) : s;
    }

    /**
     * The in-process state. The store fails only when {@code close()} raced this call past the breaker's own
     * closed check: the call was admitted before the close, so it runs (as with nothing known) and its
     * outcome write fails quietly.
     */
    private Object admitLocal(OperationState e, boolean build) {
        BreakerState s;
        try {
            s = local.peek(e.name);
        } catch (StoreException closedMeanwhile) {
            return UNKNOWN;
        }
        if (s == null) {
            return BreakerState.INITIAL;
        }
        return views.rejects(s) ? admitLocalOpen(e, s, build) : s;
    }

    /**
     * An open in-process state, through the operation's {@link LocalOpen} view of it: before the view is due,
     * a rejection that reads no clock (unless the exception, with its {@code retryAfter}, is wanted); once
     * due, the clock decides, or the ticker once the skew cap passed, and past eligibility {@link Trials}
     * takes over.
     */
    private Object admitLocalOpen(OperationState e, BreakerState s, boolean build) {
        LocalOpen v = e.localOpen;
        if (v == null || v.state != s) {
            v = localOpen(e, s);
        }
        if (!v.due) {
            return build ? rejectLocal(e, v, clock.millis(), time.nanos(), true) : Rejections.QUIET;
        }
        long now = clock.millis();
        long tick = time.nanos();
        if (now < v.eligibleAt && tick < v.eligibleTick) {
            return rejectLocal(e, v, now, tick, build);
        }
        return trials.admit(e, s, tick, build);
    }

    /**
     * A new view of the open state {@code s}, installed on {@code e}: with the system clock and ticker it is due
     * when the {@link EngineTimer} fires at this instance's eligibility (never, when forced); with any
     * other clock or ticker (a test's, a virtual one) it is due at once, so every call reads them.
     */
    private LocalOpen localOpen(OperationState e, BreakerState s) {
        long now = clock.millis();
        long tick = time.nanos();
        long eligibleAt = s.forced() ? Long.MAX_VALUE : views.eligibleAt(e.name, s);
        long eligibleTick = views.eligibleTick(e, s, tick);
        LocalOpen v = new LocalOpen(s, eligibleAt, eligibleTick);
        if (!systemTime || now >= eligibleAt || tick >= eligibleTick) {
            v.due = true;
        } else if (eligibleAt != Long.MAX_VALUE) {
            EngineTimer.markDueAfter(v, v.untilEligibleMillis(now, tick));
        }
        e.localOpen = v;
        return v;
    }

    private Object rejectLocal(OperationState e, LocalOpen v, long now, long tick, boolean build) {
        return v.eligibleAt == Long.MAX_VALUE
                ? rejections.of(e.name, BreakerStatus.FORCED_OPEN, CircuitOpenException.NO_RETRY, build)
                : rejections.of(e.name, BreakerStatus.OPEN, v.untilEligibleMillis(now, tick), build);
    }

    /**
     * Distributed mode: the local cache, then the open view, then one read. The ticker is read once (cache
     * age, holds, refresh); the clock only when an open view is consulted.
     */
    private Object admitShared(OperationState e, boolean build) {
        long tick = time.nanos();
        if (outliers != null) {
            Object outlier = outliers.admit(e, tick, build);
            if (outlier != null) {
                return outlier; // this instance is an outlier: its own local trip, whatever the fleet's state
            }
        }
        BreakerState cached = views.cachedClosed(e, tick);
        if (cached != null) {
            return cached;
        }
        OperationState.OpenView v = e.openView.get();
        if (v != null) {
            if (tick < v.heldUntil()) {
                // this instance lost the claim of this period, or backs off after a trial failure it could
                // not write: wait without store traffic
                return rejections.of(e.name, v.heldAs(), Monotonic.ceilMillis(v.heldUntil() - tick), build);
            }
            long now = clock.millis();
            boolean eligible = v.eligible(now, tick);
            if (eligible && trials.slotsTaken(e, tick)) {
                // this instance's own trials of the period run: their outcome will be its own write
                return trials.busy(e, build);
            }
            // Only one caller re-verifies an expired view; the others keep rejecting from it meanwhile.
            if (!eligible && (tick < v.refreshAt()
                    || !e.openView.compareAndSet(v, v.refreshingUntil(Monotonic.after(tick, views.refreshNanos()))))) {
                return rejectFrom(e, v, now, tick, build);
            }
        }
        if (v == null && refresh != null && refresh.coalesces()) {
            return admitCoalesced(e, tick, build);
        }
        return read(e, v, tick, build);
    }

    /** One store read, then {@link Trials} for a state read as open. */
    private Object read(OperationState e, OperationState.OpenView v, long tick, boolean build) {
        BreakerState s;
        try {
            s = refresh.readAndNote(e, tick); // this caller's own read: not coalesced
        } catch (StoreException ex) { // already reported
            if (v != null) {
                long now = clock.millis();
                if (!v.eligible(now, tick)) {
                    return rejectFrom(e, v, now, tick, build);
                }
            }
            if (rejectOnStoreError) {
                return new StoreUnavailableException(e.name, ex);
            }
            return v != null ? trials.admit(e, v.state(), tick, build) : UNKNOWN;
        }
        return views.rejects(s) ? trials.admit(e, s, tick, build) : s;
    }

    private Object rejectFrom(OperationState e, OperationState.OpenView v, long now, long tick, boolean build) {
        // forced open: no retry time, since only an operator ends it (see CircuitOpenException)
        return rejections.of(e.name, v.status(), v.eligibleAt() == Long.MAX_VALUE ? CircuitOpenException.NO_RETRY
                : v.untilEligibleMillis(now, tick), build);
    }

    /**
     * Local mode's view of one open in-process state (the distributed twin is {@link OperationState.OpenView}):
     * this instance's eligibility for it, computed once (the jitter and the backoff are not recomputed per
     * rejection), and whether the eligibility instant may have come ({@link #due}). Immutable but for
     * {@code due}, which goes from false to true once. Holds no reference to the breaker.
     */
    static final class LocalOpen implements Runnable {
        /** The state this view is of: compared by identity with what the in-process store holds. */
        final BreakerState state;
        /** This instance's trial eligibility (its own jitter), epoch ms; {@link Long#MAX_VALUE} when forced. */
        final long eligibleAt;
        /** The skew cap on it, local ns (see {@link StateViews#eligibleTick}); {@link Long#MAX_VALUE} when forced. */
        final long eligibleTick;
        /** False while the eligibility instant has certainly not come: rejections read no clock. */
        volatile boolean due;

        LocalOpen(BreakerState state, long eligibleAt, long eligibleTick) {
            this.state = state;
            this.eligibleAt = eligibleAt;
            this.eligibleTick = eligibleTick;
        }

        /** How long until eligibility by either time, in ms rounded up. */
        long untilEligibleMillis(long now, long tick) {
            return StateViews.untilEligibleMillis(eligibleAt, now, eligibleTick, tick);
        }

        /** The {@link EngineTimer} fired: from now on the clock decides. */
        @Override
        public void run() {
            due = true;
        }
    }
}
