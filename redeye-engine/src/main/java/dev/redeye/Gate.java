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
 * {@link #UNKNOWN} (the store failed under ALLOW and nothing is known); or throws the rejection.
 *
 * <ul>
 * <li>Local mode reads the in-process store: one map lookup and a volatile read.</li>
 * <li>Distributed mode: a trusted fresh closed state from the local cache (zero reads); else a rejection
 * from the open view (zero reads) while it is held after a lost claim, while this instance's own trials of
 * the operation take every permit, or before the view's refresh instant and this instance's eligibility;
 * else one read, then {@link Trials} for a state read as open. Under the local cache, a closed path's read is
 * single-flight: the callers that arrive while it is in flight wait for its result ({@link CacheRefresh}).</li>
 * <li>A store error at the read: the known open view keeps rejecting before eligibility (the cache can make a
 * rejection late, never an allow early); otherwise REJECT throws {@link StoreUnavailableException}; ALLOW
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
    private final InMemoryStore local;
    private final StoreAccess access;
    private final StateViews views;
    private final Trials trials;
    private final StoreErrors errors;
    private final Rejections rejections;
    private final boolean rejectOnStoreError;
    /** Single-flight refresh of the local cache; null in local mode. */
    private final CacheRefresh refresh;

    /**
     * @param local the in-process store in local mode, null in distributed mode
     */
    Gate(Clock clock, InMemoryStore local, StoreAccess access, StateViews views, Trials trials, StoreErrors errors,
            Rejections rejections, boolean rejectOnStoreError) {
        this.clock = clock;
        this.local = local;
        this.access = access;
        this.views = views;
        this.trials = trials;
        this.errors = errors;
        this.rejections = rejections;
        this.rejectOnStoreError = rejectOnStoreError;
        this.refresh = local == null ? new CacheRefresh(access, views, errors) : null;
    }

    /**
     * @throws CircuitOpenException      the breaker rejects the call
     * @throws StoreUnavailableException the store failed under REJECT
     */
    Object admit(OperationState e) {
        if (local != null) {
            return admitLocal(e);
        }
        long now = clock.millis();
        BreakerState cached = views.cachedClosed(e, now);
        if (cached != null) {
            return cached;
        }
        OperationState.OpenView v = e.openView.get();
        if (v != null) {
            if (now < v.heldUntil) {
                // this instance lost the claim of this period: wait for the outcome without store traffic
                throw rejections.of(e.name, BreakerStatus.HALF_OPEN, v.heldUntil - now);
            }
            if (now >= v.eligibleAt && trials.slotsTaken(e, now)) {
                // this instance's own trials of the period run: their outcome will be its own write
                throw trials.busy(e);
            }
            // Only one caller re-verifies an expired view; the others keep rejecting from it meanwhile.
            if (now < v.eligibleAt && (now < v.refreshAt
                    || !e.openView.compareAndSet(v, v.refreshingUntil(now + views.refreshMillis())))) {
                throw rejectFrom(e, v, now);
            }
        }
        if (v == null && refresh != null && refresh.coalesces()) {
            return admitCoalesced(e, now);
        }
        int stamp = views.stampBeforeStoreCall(e);
        BreakerState s;
        try {
            s = access.get(e.name);
        } catch (StoreException ex) {
            errors.report(e, ex);
            if (v != null && now < v.eligibleAt) {
                throw rejectFrom(e, v, now);
            }
            if (rejectOnStoreError) {
                throw new StoreUnavailableException(e.name, ex);
            }
            return v != null ? trials.admit(e, v.state, now) : UNKNOWN;
        }
        views.noteRead(e, s, now, stamp);
        return s.open() ? trials.admit(e, s, now) : s;
    }

    /**
     * The closed path's read under the local cache: one read in flight per operation, its result shared with
     * the callers that arrive meanwhile ({@link CacheRefresh}); a failed or overdue read is reported there
     * once, and each caller is admitted per the policy with nothing known.
     */
    private Object admitCoalesced(OperationState e, long now) {
        BreakerState s;
        try {
            s = refresh.read(e, now);
        } catch (StoreException ex) {
            if (rejectOnStoreError) {
                throw new StoreUnavailableException(e.name, ex);
            }
            return UNKNOWN;
        }
        if (s == null) {
            return admit(e); // the views changed while this caller looked: admit from them
        }
        return s.open() ? trials.admit(e, s, now) : s;
    }

    private CircuitOpenException rejectFrom(OperationState e, OperationState.OpenView v, long now) {
        return rejections.of(e.name, v.status, v.eligibleAt == Long.MAX_VALUE ? views.refreshMillis()
                : v.eligibleAt - now);
    }

    /**
     * The in-process state. The store fails only when {@code close()} raced this call past the breaker's own
     * closed check: the call was admitted before the close, so it runs (as with nothing known) and its
     * outcome write fails quietly.
     */
    private Object admitLocal(OperationState e) {
        BreakerState s;
        try {
            s = local.peek(e.name);
        } catch (StoreException closedMeanwhile) {
            return UNKNOWN;
        }
        if (s == null) {
            return BreakerState.INITIAL;
        }
        return s.open() ? trials.admit(e, s, clock.millis()) : s;
    }
}
