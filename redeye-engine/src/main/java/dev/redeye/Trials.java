package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;

/**
 * The half-open protocol of one breaker instance: who may run a trial of an open state, and how a trial's
 * claim is given back.
 *
 * <ol>
 * <li>Forced, or before this instance's eligibility: rejected.</li>
 * <li>A slot: at most {@code halfOpenPermits} trials of an operation run on one instance at once, counted
 * until each trial returns, also after its store claim expired. A caller finding every slot taken is rejected
 * with zero store operations, so a hanging dependency never collects a cascade of hung trials.</li>
 * <li>The claim ({@code TrialClaims}): a refused claim rejects the caller and holds the open view (see
 * {@link StateViews}), so the callers after it cost zero store operations until the winner's outcome is
 * known or its claim could have expired. A claim that throws (any exception) is a store error: REJECT
 * rejects with {@link StoreUnavailableException} without running the call; ALLOW and LOCAL fall back to the
 * slot, the per-instance claim. A store without {@code TrialClaims} always uses the slot.</li>
 * <li>After winning, one re-read: if another instance's trial ended meanwhile (the version moved), the claim
 * is given back and the caller follows the new state instead of running a trial back to back.</li>
 * </ol>
 * A trial carries the version of the open period it was admitted under, which fences its outcome.
 */
final class Trials {
    private final Clock clock;
    private final Monotonic time;
    private final InMemoryStore local;
    private final StoreAccess access;
    private final StateViews views;
    private final StoreErrors errors;
    private final Rejections rejections;
    private final int permits;
    private final Duration trialTimeout;
    private final long trialTimeoutMillis;
    private final long trialTimeoutNanos;
    private final boolean rejectOnStoreError;
    private final Observers observers;

    Trials(Clock clock, Monotonic time, InMemoryStore local, StoreAccess access, StateViews views, StoreErrors errors,
            Rejections rejections, int permits, Duration trialTimeout, boolean rejectOnStoreError,
            Observers observers) {
        this.clock = clock;
        this.time = time;
        this.local = local;
        this.access = access;
        this.views = views;
        this.errors = errors;
        this.rejections = rejections;
        this.permits = permits;
        this.trialTimeout = trialTimeout;
        this.trialTimeoutMillis = trialTimeout.toMillis();
        this.trialTimeoutNanos = Monotonic.ofMillis(trialTimeoutMillis);
        this.rejectOnStoreError = rejectOnStoreError;
        this.observers = observers;
    }

    /**
     * The gate for a state seen open: a {@link Trial}, or the state itself when it closed meanwhile (a normal
     * call); otherwise the rejection, returned rather than thrown (see {@link Gate#admit} for {@code build}):
     * {@link CircuitOpenException} (open, forced, or half-open with the permits taken) or
     * {@link StoreUnavailableException} (the claim failed under REJECT).
     */
    Object admit(OperationState e, BreakerState s, long tick, boolean build) {
        if (s.forced()) {
            return rejections.of(e.name, BreakerStatus.FORCED_OPEN, CircuitOpenException.NO_RETRY, build);
        }
        long now = clock.millis();
        long eligibleAt = views.eligibleAt(e.name, s);
        if (now < eligibleAt) {
            long capped = views.eligibleTick(e, s, tick); // the skew cap: a window after this instance saw it
            if (tick < capped) {
                return rejections.of(e.name, BreakerStatus.OPEN,
                        StateViews.untilEligibleMillis(eligibleAt, now, capped, tick), build);
            }
        }
        return claim(e, s, tick, build);
    }

    /** Past this instance's eligibility: a slot, then the claim (see the class comment). */
    private Object claim(OperationState e, BreakerState s, long tick, boolean build) {
        if (!e.tryStartTrial(permits) && !(reclaimExpiredLeases(e, tick) && e.tryStartTrial(permits))) {
            return busy(e, build);
        }
        boolean keepSlot = false;
        try {
            String token = null;
            if (access.claims != null) {
                try {
                    token = access.claim(e.name, permits, trialTimeout);
                } catch (StoreException ex) {
                    errors.report(e, ex);
                    if (rejectOnStoreError) {
                        return new StoreUnavailableException(e.name, ex);
                    }
                    keepSlot = true; // the slot is the per-instance claim
                    return start(e, null, s.version());
                }
                if (token == null) {
                    views.holdAfterLostClaim(e, s, Monotonic.after(tick, trialTimeoutNanos));
                    return rejections.of(e.name, BreakerStatus.HALF_OPEN, trialTimeoutMillis, build);
                }
            }
            Object permit = afterWinning(e, s, token, build);
            keepSlot = permit instanceof Trial;
            return permit;
        } finally {
            if (!keepSlot) {
                e.endTrial();
            }
        }
    }

    /**
     * Whether every trial slot of this instance for the operation is taken (its trials are running), after
     * giving back the slots of permits whose lease ran out.
     */
    boolean slotsTaken(OperationState e, long tick) {
        return e.trialsInFlight() >= permits && !(reclaimExpiredLeases(e, tick) && e.trialsInFlight() < permits);
    }

    /**
     * Leases the slot of a trial admitted through the permission API: a permit nobody completes would
     * otherwise hold its slot forever (the breaker cannot see the call end), and this instance would never
     * run a trial of the operation again. The lease lasts as long as the store claim ({@code trialTimeout},
     * by the breaker's ticker); once it ran out, the next caller that finds the slots taken ends the trial
     * (gives its claim back, records nothing) and the permit's completion is then ignored.
     */
    void lease(OperationState e, Trial trial) {
        trial.leaseUntil = Monotonic.after(time.nanos(), trialTimeoutNanos);
        e.lease(trial);
    }

    /** Ends the leased trials of {@code e} whose lease ran out; whether any was. */
    private boolean reclaimExpiredLeases(OperationState e, long tick) {
        java.util.List<Trial> expired = e.takeExpiredLeases(tick);
        for (Trial t : expired) {
            e.ignored.increment(); // the permit's call ends as nothing recorded
            end(e, t, CircuitBreakerObserver.TrialOutcome.RELEASED);
        }
        return !expired.isEmpty();
    }

    /** The rejection while this instance's own trials of the operation run (see {@link #admit}). */
    Object busy(OperationState e, boolean build) {
        return rejections.of(e.name, BreakerStatus.HALF_OPEN, trialTimeoutMillis, build);
    }

    private static Trial start(OperationState e, String token, long version) {
        e.trials.increment();
        return new Trial(token, version);
    }

    /**
     * Between this caller's read and its claim, another instance's trial may have finished and released its
     * permit (a reopen, or a close). A trial run on that stale read would follow the finished one back to back
     * and add a backoff step for nothing.
     */
    private Object afterWinning(OperationState e, BreakerState s, String token, boolean build) {
        long tick = time.nanos();
        // noted only when it shows another period than the read the claim was made on
        BreakerState current = views.stamped(e, 0L, tick, (x, now) -> reread(x, s), (x, c, now, t, stampBefore) -> {
            if (c.version() != s.version()) {
                views.noteRead(x, c, t, stampBefore);
            }
        });
        if (current.version() == s.version()) {
            return start(e, token, current.version());
        }
        if (token != null) {
            releaseToken(e, token);
        }
        if (!current.open()) {
            return current; // closed meanwhile: a normal call
        }
        if (current.forced()) {
            return rejections.of(e.name, BreakerStatus.FORCED_OPEN, CircuitOpenException.NO_RETRY, build);
        }
        long now = clock.millis();
        return rejections.of(e.name, BreakerStatus.OPEN, StateViews.untilEligibleMillis(
                views.eligibleAt(e.name, current), now, views.eligibleTick(e, current, tick), tick), build);
    }

    /** The state as it is now; the earlier read if the store cannot answer. */
    private BreakerState reread(OperationState e, BreakerState earlier) {
        try {
            if (local != null) {
                BreakerState s = local.peek(e.name);
                return s == null ? BreakerState.INITIAL : s;
            }
            return access.get(e.name);
        } catch (StoreException ex) {
            errors.report(e, ex);
            return earlier;
        }
    }

    /**
     * Ends a trial: gives its claim back (compare-and-delete by token) and its slot, and tells the observers.
     * Never throws. The caller owns the trial's end (its call, its permit's one completion, or its expired lease).
     */
    void end(OperationState e, Trial trial, CircuitBreakerObserver.TrialOutcome outcome) {
        try {
            if (trial.token != null) {
                releaseToken(e, trial.token);
            }
        } finally {
            e.endTrial();
            Observers.Set o = observers.current();
            if (o != null) {
                o.trialEnded(e, outcome);
            }
        }
    }

    private void releaseToken(OperationState e, String token) {
        try {
            access.release(e.name, token);
        } catch (StoreException ex) {
            errors.report(e, ex);
        }
    }

    /**
     * A half-open trial: the claim token to give back (null for a per-instance claim: a store without
     * TrialClaims, or a claim that failed under ALLOW or LOCAL) and the version of the open period it was
     * admitted under, which fences its outcome.
     */
    static final class Trial {
        final String token;
        final long version;
        /** Until when a permit's trial holds its slot without completing (local ns); see {@link #lease}. */
        volatile long leaseUntil = Long.MAX_VALUE;
        private final java.util.concurrent.atomic.AtomicBoolean ended =
                new java.util.concurrent.atomic.AtomicBoolean();

        Trial(String token, long version) {
            this.token = token;
            this.version = version;
        }

        /** Wins the right to end a leased trial: its permit's completion or its lease's expiry, never both. */
        boolean tryEnd() {
            return ended.compareAndSet(false, true);
        }
    }
}
