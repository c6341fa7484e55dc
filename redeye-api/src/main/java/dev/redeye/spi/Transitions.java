package dev.redeye.spi;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The transition rules of a breaker: the one Java implementation of the state machine. Pure static
 * functions of {@code (state, policy, now)}; no clock is read and nothing is stored.
 *
 * <p>Stores that can run Java where the data lives (a row lock, a conditional-write retry loop, an entry
 * processor, process memory) call these functions; a store that cannot (Redis Lua) expresses the same rules
 * natively and the TCK proves parity case by case. A {@code null} state stands for a key never written and
 * reads as {@link BreakerState#INITIAL}.
 *
 * <h2>Rules</h2>
 * <ul>
 * <li><b>Consecutive failure</b> while closed: if {@code maxGapBetweenFailures > 0}, failures were counted
 * and the previous failure is older than the gap, the count restarts at 1, else it adds 1;
 * {@code lastFailureAt = now}; at {@code failures >= failureThreshold} the breaker opens
 * ({@code openedAt = now}, {@code trialSuccesses = 0}, version + 1, {@link TransitionKind#OPENED}).</li>
 * <li><b>Failure while open</b> (any strategy, not a trial): {@code failures + 1} and
 * {@code lastFailureAt = now}; {@code openedAt} and version do not move; not a transition.</li>
 * <li><b>Success while closed</b> (consecutive): if {@code failures > 0} they are cleared: a write, not a
 * transition (no version bump, no event: a flapping dependency would otherwise publish one event per
 * failure); otherwise nothing changes and nothing is written.</li>
 * <li><b>Leaky failure</b> while closed ({@link Strategy#LEAKY}): exactly the consecutive failure rule (the
 * count adds 1, or restarts at 1 after a gap longer than {@code maxGapBetweenFailures}: an idle bucket is
 * drained; opens at {@code failures >= failureThreshold}). The strategies differ only in what a success
 * does.</li>
 * <li><b>Leaky success</b> while closed: if {@code failures > 0}, {@code failures - 1}: a write, not a
 * transition (no version bump, no event; {@code lastFailureAt} kept, so the gap still counts from the last
 * failure); at 0 nothing changes and nothing is written.</li>
 * <li><b>Success while open</b> (not a trial, any strategy): nothing changes.</li>
 * <li><b>Error-rate outcome</b> while closed: {@code x = 1} for a failure, 0 for a success;
 * {@code errorRate = samples == 0 ? x : decay * errorRate + (1 - decay) * x} (evaluated in that order, in
 * IEEE double); {@code samples + 1}; a failure also sets {@code lastFailureAt = now}; opens when
 * {@code samples >= minimumCalls && errorRate >= errorRateThreshold}. The {@code failures} counter is not
 * used by this strategy while closed.</li>
 * <li><b>Sliding-window outcome</b> while closed ({@link Strategy#SLIDING_WINDOW}): the outcome is recorded in
 * the state's {@link SlidingWindow} (an empty one of the policy's type and size when the state has none or one of
 * another shape); a failure also sets {@code lastFailureAt = now}; the breaker opens when
 * {@link #windowTrips} holds. Every outcome is a write. The window is kept, unchanged, while the breaker is
 * open, and emptied ({@code null}) when it closes.</li>
 * <li><b>Slow outcomes</b>: {@link #recordOutcome(BreakerState, boolean, boolean, Policy, long)} with
 * {@code slow} counts the call as slow in a window; the other strategies read it as a plain outcome.
 * {@link #slowCall} counts a call still running as a slow success the moment it crosses the slow-call duration
 * threshold (the other strategies ignore it); {@link #slowCallFailed} then marks that call failed in place, only
 * while the state still has the version the slow call was recorded under.</li>
 * <li><b>Modes</b>: the mode in force is {@link BreakerState#effectiveMode}. In {@link BreakerMode#DISABLED} every
 * outcome rule changes nothing. In {@link BreakerMode#METRICS_ONLY}, where a closed breaker would open it stays
 * closed instead: {@code failures}, {@code errorRate}, {@code samples} and the window are reset, version + 1,
 * {@link TransitionKind#WOULD_OPEN}. {@link #forceMode} stores a mode: the breaker closes as by
 * {@link #closedFrom}, with that mode, {@link TransitionKind#MODE_CHANGED}. Forcing OPEN or HALF_OPEN makes
 * {@link BreakerMode#NORMAL} the mode in force (an operator's opening is obeyed; stored as
 * {@link BreakerMode#DEFAULT} when that is the policy's mode); forcing CLOSED stores
 * {@link BreakerMode#DEFAULT} (the policy's mode applies again).</li>
 * <li><b>Batches</b> ({@link AtomicOperation#outcomes}): one instance's ordinary outcomes, each applied by
 * {@link #recordOutcome(BreakerState, boolean, boolean, Policy, long, String)} in order at its own instant; the
 * batch's change goes from the state before the first to the state after the last and reports the first
 * transition (a {@link BreakerMode#METRICS_ONLY} batch that would open twice bumps the version twice and reports
 * one {@link TransitionKind#WOULD_OPEN}).</li>
 * <li><b>Trial fencing</b>: a trial is admitted under one open period, identified by the
 * state's {@code version} when its claim was won, and its outcome carries that version
 * ({@code trialVersion}). An outcome whose version is not the current one, or that arrives when the breaker
 * is not open or is forced, changes nothing and returns the current state: a late success from an earlier
 * period never closes a breaker that reopened since, and K failing trials of one period reopen it once.</li>
 * <li><b>Trial success</b> of the current period: {@code trialSuccesses + 1}; at {@code successThreshold}
 * the breaker closes ({@link #closedFrom(BreakerState)}), version + 1, {@link TransitionKind#CLOSED}; below
 * it, a write that is not a transition (the version, and so the period, stays).</li>
 * <li><b>Trial failure</b> of the current period: {@code open = true}, {@code openedAt = now},
 * {@code openCount + 1}, {@code failures = max(failures, failureThreshold)}, {@code lastFailureAt = now},
 * {@code trialSuccesses = 0}, version + 1, {@link TransitionKind#REOPENED}; the new version starts a new
 * period, so {@code trialSuccesses} restarts at 0 in every period.</li>
 * <li><b>Force</b>: always a transition. OPEN holds the breaker open ({@code forced}, {@code openedAt = now});
 * HALF_OPEN opens it, not forced, with {@code openedAt = now - 2 * maxResetTimeout} so every instance's
 * (jittered) reset window has elapsed and a trial may be claimed at once; CLOSED closes it and resets every
 * counter. Whether a target is already in force is {@link #inForce}: the engine's manual API asks it first and
 * skips the change (see {@code CircuitBreaker#forceOpen}), so an operator repeating a change makes no
 * transition; the store operation itself stays unconditional.</li>
 * <li><b>Reset window</b>: {@code min(resetTimeout * backoffMultiplier ^ openCount, maxResetTimeout)},
 * multiplied by the instance's jitter factor in {@code [1 - jitter, 1 + jitter]}.</li>
 * </ul>
 * Counters saturate at their maximum instead of overflowing.
 *
 * <h2>Versions across a key's lives</h2>
 * Every transition sets {@code version = max(version, 0) + 1}. A store must never let a key's version go
 * backwards, also after {@link Store#delete} or a backend expiry: when it creates a key that is absent, it
 * starts from {@link BreakerState#initial(long)} with a base above any version the key had before (the
 * backend's clock in microseconds, or a remembered tombstone version), not from {@link BreakerState#INITIAL}.
 */
public final class Transitions {

    private Transitions() {
    }

    /**
     * Records one failed call that was not a trial.
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange recordFailure(BreakerState s, Policy p, long now) {
        return recordOutcome(s, false, false, p, now);
    }

    /**
     * Records one call that was not a trial, timed: {@code slow} counts toward a sliding window's slow-call rate;
     * the other strategies read it as {@link #recordOutcome(BreakerState, boolean, Policy, long)}.
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange recordOutcome(BreakerState s, boolean success, boolean slow, Policy p, long now) {
        return recordOutcome(s, success, slow, p, now, null);
    }

    /**
     * {@link #recordOutcome(BreakerState, boolean, boolean, Policy, long)} by {@code instance} (null: not
     * attributed). Under a quorum ({@link Policy#quorumOn()}) the outcome also updates the instance's
     * {@link Contribution} in the scope ({@link #quorumMet}), and the breaker opens only when the strategy says
     * so and the failing instances make the quorum; below it the counters go on (and the opening comes with the
     * failure that makes the quorum).
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange recordOutcome(BreakerState s, boolean success, boolean slow, Policy p, long now,
            String instance) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(p, "policy");
        if (prev.effectiveMode(p) == BreakerMode.DISABLED) {
            return StateChange.unchanged(prev);
        }
        if (prev.open()) {
            return success ? StateChange.unchanged(prev) : new StateChange(prev, failureWhileOpen(prev, now), null);
        }
        switch (p.strategy()) {
            case SLIDING_WINDOW:
                SlidingWindow w = window(prev, p).record(!success, slow, now);
                return windowOutcome(prev, w, !success, p, now,
                        contributions(prev, w, p, now, instance, !success, false));
            case ERROR_RATE:
                return errorRateOutcome(prev, success, p, now);
            default:
                return success ? countedSuccess(prev, p, now, instance) : countedFailure(prev, p, now, instance);
        }
    }

    /**
     * The contributions after an outcome of {@code instance} (null: none added), under a quorum; null without one.
     * The scope: for a time window, the window's span (older contributions drop out); for a count window, until
     * the window holds no failure; for the consecutive strategy, since the count last cleared or restarted
     * ({@code restart}: {@code maxGapBetweenFailures} passed). The instance's contribution goes first; past
     * {@link BreakerState#MAX_CONTRIBUTORS} the least recent one drops out.
     */
    private static List<Contribution> contributions(BreakerState prev, SlidingWindow w, Policy p, long now,
            String instance, boolean failed, boolean restart) {
        if (!p.quorumOn()) {
            return null;
        }
        List<Contribution> kept = new ArrayList<>(BreakerState.MAX_CONTRIBUTORS + 1);
        Contribution mine = null;
        boolean emptied = restart || (w != null && p.slidingWindowType() == SlidingWindowType.COUNT_BASED
                && w.failures() == 0);
        if (!emptied) {
            long horizon = w != null && p.slidingWindowType() == SlidingWindowType.TIME_BASED
                    ? now - p.slidingWindowSize() * 1000L : Long.MIN_VALUE;
            for (Contribution c : prev.contributors()) {
                if (c.lastAt() <= horizon) {
                    continue;
                }
                if (c.instance().equals(instance)) {
                    mine = c;
                } else {
                    kept.add(c);
                }
            }
        }
        if (instance == null) {
            return kept;
        }
        int f = failed ? 1 : 0;
        kept.add(0, mine == null ? new Contribution(instance, f, 1, now)
                : new Contribution(instance, Math.min(mine.failures() + f, Integer.MAX_VALUE - 1),
                        inc(mine.calls()), Math.max(mine.lastAt(), now)));
        while (kept.size() > BreakerState.MAX_CONTRIBUTORS) {
            int oldest = 1;
            for (int i = 2; i < kept.size(); i++) {
                if (kept.get(i).lastAt() <= kept.get(oldest).lastAt()) {
                    oldest = i;
                }
            }
            kept.remove(oldest);
        }
        return kept;
    }

    /**
     * Whether the contributions {@code q} make the quorum of {@code p}: at least
     * {@link Policy#quorumRequired(int)} of them (for the instances they hold) have failures. True without a
     * quorum ({@code q} null).
     */
    private static boolean quorumMet(List<Contribution> q, Policy p) {
        if (q == null) {
            return true;
        }
        int failing = 0;
        for (Contribution c : q) {
            if (c.failures() > 0) {
                failing++;
            }
        }
        return failing >= p.quorumRequired(q.size());
    }

    /**
     * Whether the contributions a state holds make the quorum of {@code p} (see
     * {@link #recordOutcome(BreakerState, boolean, boolean, Policy, long, String)}); true without a quorum.
     *
     * @throws NullPointerException if an argument is null
     */
    public static boolean quorumMet(BreakerState s, Policy p) {
        return quorumMet(p.quorumOn() ? s.contributors() : null, p);
    }

    /**
     * A call still running crossed the slow-call duration threshold: a sliding window counts it now, as a slow
     * success ({@link #slowCallFailed} corrects it if it then fails). Changes nothing for the other strategies,
     * which judge a call when it ends, nor while the breaker is open or disabled.
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange slowCall(BreakerState s, Policy p, long now) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(p, "policy");
        if (p.strategy() != Strategy.SLIDING_WINDOW || prev.open()
                || prev.effectiveMode(p) == BreakerMode.DISABLED) {
            return StateChange.unchanged(prev);
        }
        SlidingWindow w = window(prev, p).record(false, true, now);
        return windowOutcome(prev, w, false, p, now, contributions(prev, w, p, now, null, false, false));
    }

    /**
     * The call that {@link #slowCall} counted failed. While the state has the version that call's state had
     * ({@code version}), the slot at {@code slot} becomes a slow failure ({@link SlidingWindow#slowCallFailed}),
     * {@code lastFailureAt = now}, and the breaker opens if {@link #windowTrips} now holds. While open it is a
     * failure while open; otherwise (another version, the slot gone from the window, another strategy, disabled)
     * nothing changes: a slow call is counted once.
     *
     * @param slot    the window's position in the state the slow call returned
     * @param version the version of that state
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange slowCallFailed(BreakerState s, long slot, long version, Policy p, long now) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(p, "policy");
        if (prev.effectiveMode(p) == BreakerMode.DISABLED) {
            return StateChange.unchanged(prev);
        }
        if (prev.open()) {
            return new StateChange(prev, failureWhileOpen(prev, now), null);
        }
        if (p.strategy() != Strategy.SLIDING_WINDOW || prev.version() != version || prev.window() == null
                || !prev.window().hasShape(p.slidingWindowType(), p.slidingWindowSize())) {
            return StateChange.unchanged(prev);
        }
        // judged against the window rolled to now: a failure rolled out in the same step is not the mark
        SlidingWindow rolled = prev.window().rolledTo(now);
        SlidingWindow w = rolled.slowCallFailed(slot, now);
        if (w.failures() == rolled.failures()) {
            return StateChange.unchanged(prev);
        }
        return windowOutcome(prev, w, true, p, now, contributions(prev, w, p, now, null, true, false));
    }

    /**
     * Whether a sliding window opens the breaker under {@code p}: it holds at least
     * {@link Policy#windowMinimumCalls()} outcomes, and {@code failures * 100 >= failureRateThreshold * calls} or
     * {@code slowCalls * 100 >= slowCallRateThreshold * calls}, each side evaluated in IEEE double (exact for
     * the counts; the same arithmetic as Resilience4j's percentage comparison without its rounding to float).
     *
     * @throws NullPointerException if {@code w} or {@code p} is null
     */
    public static boolean windowTrips(SlidingWindow w, Policy p) {
        return windowTrips(w.calls(), w.failures(), w.slowCalls(), p);
    }

    /**
     * {@link #windowTrips(SlidingWindow, Policy)} on a window's counts.
     *
     * @throws NullPointerException if {@code p} is null
     */
    public static boolean windowTrips(int calls, int failures, int slowCalls, Policy p) {
        if (calls < p.windowMinimumCalls()) {
            return false;
        }
        return failures * 100.0 >= p.failureRateThreshold() * calls
                || slowCalls * 100.0 >= p.slowCallRateThreshold() * calls;
    }

    private static SlidingWindow window(BreakerState prev, Policy p) {
        SlidingWindow w = prev.window();
        return w != null && w.hasShape(p.slidingWindowType(), p.slidingWindowSize()) ? w : p.emptyWindow();
    }

    private static StateChange windowOutcome(BreakerState prev, SlidingWindow w, boolean failed, Policy p, long now,
            List<Contribution> q) {
        BreakerState.Builder b = prev.toBuilder().window(w);
        if (failed) {
            b.lastFailureAt(now);
        }
        if (q != null) {
            b.contributors(q);
        }
        return windowTrips(w, p) && quorumMet(q, p) ? tripped(prev, b, p, now) : new StateChange(prev, b.build(), null);
    }

    /**
     * The closed breaker's strategy says open: it opens, or, in {@link BreakerMode#METRICS_ONLY}, stays closed with
     * its counters reset ({@link TransitionKind#WOULD_OPEN}). {@code b} holds the outcome's changes.
     */
    private static StateChange tripped(BreakerState prev, BreakerState.Builder b, Policy p, long now) {
        if (prev.effectiveMode(p) == BreakerMode.METRICS_ONLY) {
            b.failures(0).errorRate(0.0).samples(0L).window(null).contributors(List.of()).version(nextVersion(prev));
            return new StateChange(prev, b.build(), TransitionKind.WOULD_OPEN);
        }
        b.open(true).openedAt(now).trialSuccesses(0).version(nextVersion(prev));
        return new StateChange(prev, b.build(), TransitionKind.OPENED);
    }

    private static StateChange countedFailure(BreakerState prev, Policy p, long now, String instance) {
        boolean restart = p.maxGapBetweenFailuresMillis() > 0 && prev.failures() > 0
                && now - prev.lastFailureAt() > p.maxGapBetweenFailuresMillis();
        int failures = restart ? 1 : inc(prev.failures());
        BreakerState.Builder b = prev.toBuilder().failures(failures).lastFailureAt(now);
        List<Contribution> q = contributions(prev, null, p, now, instance, true, restart);
        if (q != null) {
            b.contributors(q);
        }
        if (failures >= p.failureThreshold() && quorumMet(q, p)) {
            return tripped(prev, b, p, now);
        }
        return new StateChange(prev, b.build(), null);
    }

    /**
     * Records one successful call that was not a trial. Returns an unchanged state (and the caller writes
     * nothing) when there is nothing to change.
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange recordSuccess(BreakerState s, Policy p, long now) {
        return recordOutcome(s, true, false, p, now);
    }

    private static StateChange countedSuccess(BreakerState prev, Policy p, long now, String instance) {
        if (prev.failures() == 0) {
            return StateChange.unchanged(prev);
        }
        if (p.strategy() == Strategy.LEAKY) {
            // One success leaks one failure out: a write, not a transition (same version, no event).
            return new StateChange(prev, prev.toBuilder().failures(prev.failures() - 1).build(), null);
        }
        // Clearing is a write, not a transition: same version, no event. Under a quorum the scope starts again,
        // with the clearing instance in it.
        BreakerState.Builder b = prev.toBuilder().failures(0);
        if (p.quorumOn()) {
            b.contributors(instance == null ? List.of() : List.of(new Contribution(instance, 0, 1, now)));
        }
        return new StateChange(prev, b.build(), null);
    }

    /** {@link #recordSuccess} when {@code success}, else {@link #recordFailure}. */
    public static StateChange recordOutcome(BreakerState s, boolean success, Policy p, long now) {
        return recordOutcome(s, success, false, p, now);
    }

    /**
     * Records one successful trial admitted under the open period {@code trialVersion} (fenced):
     * a no-op returning the current state unless the breaker is open, not forced, and still at that version.
     *
     * @param trialVersion the state's version when the trial's claim was won
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange trialSucceeded(BreakerState s, long trialVersion, Policy p, long now) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(p, "policy");
        if (!isCurrentTrialPeriod(prev, trialVersion)) {
            return StateChange.unchanged(prev);
        }
        int successes = inc(prev.trialSuccesses());
        if (successes >= p.successThreshold()) {
            return new StateChange(prev, closedFrom(prev), TransitionKind.CLOSED);
        }
        return new StateChange(prev, prev.toBuilder().trialSuccesses(successes).build(), null);
    }

    /**
     * Records one failed trial admitted under the open period {@code trialVersion} (fenced): a
     * no-op returning the current state unless the breaker is open, not forced, and still at that version.
     *
     * @param trialVersion the state's version when the trial's claim was won
     * @throws NullPointerException if {@code policy} is null
     */
    public static StateChange trialFailed(BreakerState s, long trialVersion, Policy p, long now) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(p, "policy");
        if (!isCurrentTrialPeriod(prev, trialVersion)) {
            return StateChange.unchanged(prev);
        }
        BreakerState next = prev.toBuilder()
                .open(true)
                .openedAt(now)
                .openCount(inc(prev.openCount()))
                .failures(Math.max(prev.failures(), p.failureThreshold()))
                .lastFailureAt(now)
                .trialSuccesses(0)
                .version(nextVersion(prev))
                .build();
        return new StateChange(prev, next, TransitionKind.REOPENED);
    }

    /** {@link #trialSucceeded} when {@code success}, else {@link #trialFailed}. */
    public static StateChange trialOutcome(BreakerState s, long trialVersion, boolean success, Policy p, long now) {
        return success ? trialSucceeded(s, trialVersion, p, now) : trialFailed(s, trialVersion, p, now);
    }

    /**
     * Whether a trial admitted under {@code trialVersion} belongs to the current open period of {@code s}:
     * open, not forced, same version.
     */
    public static boolean isCurrentTrialPeriod(BreakerState s, long trialVersion) {
        BreakerState st = orInitial(s);
        return st.open() && !st.forced() && st.version() == trialVersion;
    }

    /**
     * An operator change; always a transition.
     *
     * @param target {@link BreakerStatus#FORCED_OPEN} (or {@link BreakerStatus#OPEN}, read the same way),
     *               {@link BreakerStatus#HALF_OPEN} or {@link BreakerStatus#CLOSED}
     * @throws NullPointerException if {@code target} or {@code policy} is null
     */
    public static StateChange force(BreakerState s, BreakerStatus target, Policy p, long now) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(target, "status");
        Objects.requireNonNull(p, "policy");
        TransitionKind kind = TransitionKind.forcedTo(target);
        BreakerState next;
        switch (kind) {
            case FORCED_OPEN:
                next = prev.toBuilder().open(true).forced(true).openedAt(now).trialSuccesses(0)
                        .mode(obeyed(p)).version(nextVersion(prev)).build();
                break;
            case FORCED_HALF_OPEN:
                next = prev.toBuilder().open(true).forced(false).openedAt(halfOpenOpenedAt(p, now))
                        .trialSuccesses(0).mode(obeyed(p)).version(nextVersion(prev)).build();
                break;
            default:
                next = closedFrom(prev, BreakerMode.DEFAULT);
                break;
        }
        return new StateChange(prev, next, kind);
    }

    /**
     * The stored mode under which an operator's opening is obeyed: {@link BreakerMode#NORMAL} in force, stored
     * as {@link BreakerMode#DEFAULT} when that is the policy's mode.
     */
    private static BreakerMode obeyed(Policy p) {
        return p.mode() == BreakerMode.NORMAL ? BreakerMode.DEFAULT : BreakerMode.NORMAL;
    }

    /**
     * An operator stores {@code mode} for the fleet; always a transition ({@link TransitionKind#MODE_CHANGED}):
     * the breaker closes as by {@link #closedFrom}, in that mode. {@link #inForce(BreakerState, BreakerMode)}
     * says when it can be skipped.
     *
     * @throws NullPointerException if {@code mode} or {@code policy} is null
     */
    public static StateChange forceMode(BreakerState s, BreakerMode mode, Policy p, long now) {
        BreakerState prev = orInitial(s);
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(p, "policy");
        return new StateChange(prev, closedFrom(prev, mode), TransitionKind.MODE_CHANGED);
    }

    /**
     * Whether {@link #forceMode} to {@code mode} would change nothing that matters: {@code s} stores that mode and
     * is closed and clean as {@link #inForce(BreakerState, BreakerStatus, Policy, long)} defines for CLOSED (an
     * absent state stores {@link BreakerMode#DEFAULT}).
     *
     * @throws NullPointerException if {@code mode} is null
     */
    public static boolean inForce(BreakerState s, BreakerMode mode) {
        Objects.requireNonNull(mode, "mode");
        return s == null ? mode == BreakerMode.DEFAULT : s.mode() == mode && isClean(s);
    }

    /**
     * Whether {@link #force force(s, target, p, now)} would change nothing that matters, so that an operator's
     * change can be skipped (no write, no version bump, no event):
     * <ul>
     * <li>{@link BreakerStatus#FORCED_OPEN} (or {@link BreakerStatus#OPEN}): {@code s} is open and forced;</li>
     * <li>{@link BreakerStatus#HALF_OPEN}: {@code s} is open, not forced, and dated at least
     * {@code 2 * maxResetTimeout} before {@code now} ({@link #halfOpenOpenedAt}), so every instance may already
     * claim a trial;</li>
     * <li>{@link BreakerStatus#CLOSED}: {@code s} is absent, or closed, not forced and clean, with no stored mode:
     * what a forced close would leave but for the version (no failures, no open period, no error-rate samples,
     * no trial successes, no window, {@link BreakerMode#DEFAULT}).</li>
     * </ul>
     * Pure; reads no clock.
     *
     * @throws NullPointerException if {@code target} or {@code policy} is null
     */
    public static boolean inForce(BreakerState s, BreakerStatus target, Policy p, long now) {
        Objects.requireNonNull(target, "status");
        Objects.requireNonNull(p, "policy");
        if (s == null) {
            return target == BreakerStatus.CLOSED;
        }
        switch (TransitionKind.forcedTo(target)) {
            case FORCED_OPEN:
                return s.open() && s.forced();
            case FORCED_HALF_OPEN:
                return s.open() && !s.forced() && s.openedAt() <= halfOpenOpenedAt(p, now);
            default:
                return s.mode() == BreakerMode.DEFAULT && isClean(s);
        }
    }

    private static boolean isClean(BreakerState s) {
        return !s.open() && !s.forced() && s.failures() == 0 && s.openedAt() == 0 && s.openCount() == 0
                && Double.doubleToRawLongBits(s.errorRate()) == 0L && s.samples() == 0 && s.trialSuccesses() == 0
                && s.window() == null;
    }

    /**
     * The closed state that follows {@code s}: not open, not forced, {@code failures}, {@code openedAt},
     * {@code openCount}, {@code errorRate}, {@code samples}, {@code trialSuccesses} and the window reset,
     * {@code lastFailureAt} and the mode kept, version + 1.
     */
    public static BreakerState closedFrom(BreakerState s) {
        return closedFrom(s, orInitial(s).mode());
    }

    private static BreakerState closedFrom(BreakerState s, BreakerMode mode) {
        BreakerState prev = orInitial(s);
        return new BreakerState(0, prev.lastFailureAt(), false, 0L, 0, 0.0, 0L, 0, false, null, mode,
                nextVersion(prev));
    }

    /** The {@code openedAt} a forced half-open state gets: {@code now - 2 * maxResetTimeout}. */
    public static long halfOpenOpenedAt(Policy p, long now) {
        return now - 2 * p.maxResetTimeoutMillis();
    }

    /**
     * The nominal reset window of an open state, before jitter:
     * {@code min(resetTimeout * backoffMultiplier ^ openCount, maxResetTimeout)} in ms.
     */
    public static long baseResetWindowMillis(BreakerState s, Policy p) {
        double w = p.resetTimeoutMillis() * Math.pow(p.backoffMultiplier(), orInitial(s).openCount());
        double max = p.maxResetTimeoutMillis();
        return (long) Math.min(w, max);
    }

    /** The reset window of an open state for an instance whose jitter factor is {@code jitterFactor}. */
    public static long resetWindowMillis(BreakerState s, Policy p, double jitterFactor) {
        return (long) (baseResetWindowMillis(s, p) * jitterFactor);
    }

    /**
     * The epoch ms at which this instance may claim a trial of an open state:
     * {@code openedAt + resetWindowMillis(s, p, jitterFactor)}. {@link Long#MAX_VALUE} for a forced state.
     */
    public static long trialEligibleAt(BreakerState s, Policy p, double jitterFactor) {
        BreakerState st = orInitial(s);
        if (st.forced()) {
            return Long.MAX_VALUE;
        }
        return st.openedAt() + resetWindowMillis(st, p, jitterFactor);
    }

    /**
     * The status of a state at {@code now} for an instance with the given jitter factor (1.0 for the
     * nominal, jitter-free view).
     */
    public static BreakerStatus status(BreakerState s, Policy p, long now, double jitterFactor) {
        BreakerState st = orInitial(s);
        if (!st.open()) {
            return BreakerStatus.CLOSED;
        }
        if (st.forced()) {
            return BreakerStatus.FORCED_OPEN;
        }
        return now >= trialEligibleAt(st, p, jitterFactor) ? BreakerStatus.HALF_OPEN : BreakerStatus.OPEN;
    }

    /**
     * The jitter factor in {@code [1 - jitter, 1 + jitter]} that one instance (identified by {@code seed},
     * drawn once per instance) uses for one open period (identified by operation and {@code openedAt}).
     * Deterministic, so an instance's view of one open period is stable; allocation-free.
     */
    public static double jitterFactor(long seed, String operation, long openedAt, double jitter) {
        if (jitter == 0.0) {
            return 1.0;
        }
        long h = mix(seed ^ mix(operation.hashCode() * 0x9E3779B97F4A7C15L ^ openedAt));
        double u = (h >>> 11) * 0x1.0p-53;
        return 1.0 - jitter + 2.0 * jitter * u;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static StateChange errorRateOutcome(BreakerState prev, boolean success, Policy p, long now) {
        double x = success ? 0.0 : 1.0;
        double rate = prev.samples() == 0
                ? x
                : p.errorRateDecay() * prev.errorRate() + (1 - p.errorRateDecay()) * x;
        long samples = prev.samples() == Long.MAX_VALUE ? Long.MAX_VALUE : prev.samples() + 1;
        BreakerState.Builder b = prev.toBuilder().errorRate(rate).samples(samples);
        if (!success) {
            b.lastFailureAt(now);
        }
        if (samples >= p.minimumCalls() && rate >= p.errorRateThreshold()) {
            return tripped(prev, b, p, now);
        }
        return new StateChange(prev, b.build(), null);
    }

    private static BreakerState failureWhileOpen(BreakerState prev, long now) {
        return prev.toBuilder().failures(inc(prev.failures())).lastFailureAt(now).build();
    }

    private static BreakerState orInitial(BreakerState s) {
        return s == null ? BreakerState.INITIAL : s;
    }

    private static long nextVersion(BreakerState s) {
        return Math.max(s.version(), 0L) + 1;
    }

    private static int inc(int v) {
        return v == Integer.MAX_VALUE ? v : v + 1;
    }
}
